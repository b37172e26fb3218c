//! Collects every error found in one macro input so they are reported together.

use proc_macro2::TokenStream;
use std::fmt::Display;

/// Accumulates errors; `combine` them into one `syn::Error` at the end.
#[derive(Default)]
pub(crate) struct Errors {
    first: Option<syn::Error>,
}

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.first {
            Some(first) => first.combine(error),
            None => self.first = Some(error),
        }
    }

    pub(crate) fn spanned<T: quote::ToTokens, M: Display>(&mut self, tokens: T, message: M) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.first
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}

/// Edit distance, for "did you mean" suggestions.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(row[j + 1])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The closest of `choices` to `given`, if it is close enough to be a likely typo.
pub(crate) fn closest<'a>(given: &str, choices: &[&'a str]) -> Option<&'a str> {
    let lower = given.to_ascii_lowercase();
    choices
        .iter()
        .map(|c| (distance(&lower, c), *c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        const CLASSES: [&str; 3] = ["forgettable", "fuzzy", "strict"];
        for (typo, want) in [
            ("stric", Some("strict")),
            ("Strict", Some("strict")),
            ("fuzy", Some("fuzzy")),
            ("forgetable", Some("forgettable")),
            ("banana", None),
        ] {
            assert_eq!(closest(typo, &CLASSES), want, "{typo}");
        }
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
