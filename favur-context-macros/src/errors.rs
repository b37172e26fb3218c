//! Collects every error found in one macro input so they are reported together.

use proc_macro2::TokenStream;
use std::fmt::Display;

/// Accumulates every error of one macro input, to report them together.
///
/// As serde_derive's `Ctxt`: it must be reported ([`Errors::into_compile_errors`]) before
/// it is dropped, so an error collected in one stage cannot be lost on the way out of
/// another. Dropping it unreported is a bug in this crate and panics (never during an
/// unwind), which the compiler shows as an error of the macro.
#[derive(Default)]
pub(crate) struct Errors {
    first: Option<syn::Error>,
    reported: bool,
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

    /// Every error collected, as `compile_error!` invocations (nothing when none was).
    pub(crate) fn into_compile_errors(mut self) -> TokenStream {
        self.reported = true;
        self.first
            .take()
            .map(|e| e.to_compile_error())
            .unwrap_or_default()
    }
}

impl Drop for Errors {
    fn drop(&mut self) {
        if !self.reported && !std::thread::panicking() {
            panic!("favur-context-macros: errors were collected and never reported");
        }
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
    fn errors_report_every_one_collected() {
        let mut errors = Errors::default();
        assert!(errors.is_empty());
        errors.push(syn::Error::new(proc_macro2::Span::call_site(), "first"));
        errors.push(syn::Error::new(proc_macro2::Span::call_site(), "second"));
        let out = errors.into_compile_errors().to_string();
        assert!(out.contains("first") && out.contains("second"), "{out}");
        assert!(Errors::default().into_compile_errors().is_empty());
    }

    #[test]
    #[should_panic(expected = "never reported")]
    fn errors_dropped_unreported_are_a_bug() {
        let mut errors = Errors::default();
        errors.push(syn::Error::new(proc_macro2::Span::call_site(), "lost"));
        drop(errors);
    }

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
