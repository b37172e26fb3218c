//! Parses and validates the class named in `#[retention(...)]`.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::quote;

use crate::errors::{Errors, closest};

pub(crate) const CLASSES: [&str; 3] = ["forgettable", "fuzzy", "strict"];
pub(crate) const EXPECTED: &str = "expected one of `forgettable`, `fuzzy`, `strict`";

/// A validated class: the name of its type in `__private`.
#[derive(Clone)]
pub(crate) struct Class {
    pub(crate) ty: Ident,
}

impl Class {
    pub(crate) fn from_name(name: &str, span: Span) -> Option<Class> {
        let ty = match name {
            "forgettable" => "Forgettable",
            "fuzzy" => "Fuzzy",
            "strict" => "Strict",
            _ => return None,
        };
        Some(Class {
            ty: Ident::new(ty, span),
        })
    }

    /// The class used for the stub expansion emitted next to errors.
    pub(crate) fn stub() -> Class {
        Class {
            ty: Ident::new("Strict", Span::call_site()),
        }
    }
}

/// The arguments of `#[retention(...)]`: the class and, optionally, `crate = path`.
pub(crate) struct Args {
    /// The class, if exactly one valid class was named.
    pub(crate) class: Option<Class>,
    /// The path of favur-context (`::favur_context` unless `crate = path` is given).
    pub(crate) krate: TokenStream,
}

/// Parses the attribute arguments: exactly one class name, and optionally `crate = path`
/// for a renamed dependency (as serde's `#[serde(crate = "...")]`). Every problem is
/// pushed to `errors`.
pub(crate) fn parse_args(args: TokenStream, errors: &mut Errors) -> Args {
    let mut krate: Option<TokenStream> = None;
    let mut rest = Vec::new();
    for chunk in split_commas(args) {
        match chunk.as_slice() {
            [TokenTree::Ident(kw), TokenTree::Punct(eq), path @ ..]
                if kw == "crate" && eq.as_char() == '=' =>
            {
                match crate_path(kw, path) {
                    Ok(_) if krate.is_some() => errors.push(syn::Error::new(
                        kw.span(),
                        "`crate = ...` is given twice; keep one",
                    )),
                    Ok(path) => krate = Some(path),
                    Err(e) => errors.push(e),
                }
            }
            _ => rest.push(chunk),
        }
    }
    let class = parse_chunks(rest, errors);
    Args {
        class,
        krate: krate.unwrap_or_else(|| quote!(::favur_context)),
    }
}

/// The path in `crate = path` or `crate = "path"`.
fn crate_path(kw: &Ident, tokens: &[TokenTree]) -> syn::Result<TokenStream> {
    const HOW: &str = "`crate = ...` names the path of the favur-context dependency, e.g. `crate = my_favur` or `crate = \"::my_favur\"`";
    let ts: TokenStream = tokens.iter().cloned().collect();
    let path = match tokens {
        [] => return Err(syn::Error::new(kw.span(), HOW)),
        [TokenTree::Literal(lit)] if lit.to_string().starts_with('"') => {
            let lit: syn::LitStr = syn::parse2(ts.clone())?;
            lit.parse_with(syn::Path::parse_mod_style)
                .map_err(|_| syn::Error::new(lit.span(), HOW))?
        }
        _ => syn::parse::Parser::parse2(syn::Path::parse_mod_style, ts.clone())
            .map_err(|_| syn::Error::new_spanned(&ts, HOW))?,
    };
    Ok(quote!(#path))
}

/// Parses the class arguments: exactly one class name. Every problem is pushed to
/// `errors`; returns the class if exactly one valid class was named.
#[cfg(test)]
pub(crate) fn parse(args: TokenStream, errors: &mut Errors) -> Option<Class> {
    parse_args(args, errors).class
}

fn parse_chunks(chunks: Vec<Vec<TokenTree>>, errors: &mut Errors) -> Option<Class> {
    if chunks.is_empty() {
        errors.push(syn::Error::new(
            Span::call_site(),
            format!("missing retention class: {EXPECTED}, e.g. `#[retention(strict)]`"),
        ));
        return None;
    }
    let mut found: Vec<(Class, Ident)> = Vec::new();
    let mut bad = false;
    for chunk in chunks {
        match chunk.as_slice() {
            [TokenTree::Ident(ident)] => {
                let name = ident.to_string();
                match Class::from_name(&name, ident.span()) {
                    Some(class) => found.push((class, ident.clone())),
                    None => {
                        bad = true;
                        let hint = closest(&name, &CLASSES)
                            .map(|c| format!(" (did you mean `{c}`?)"))
                            .unwrap_or_default();
                        errors.push(syn::Error::new(
                            ident.span(),
                            format!("unknown retention class `{name}`{hint}: {EXPECTED}"),
                        ));
                    }
                }
            }
            [TokenTree::Literal(lit)] if lit.to_string().starts_with('"') => {
                bad = true;
                let text = lit.to_string();
                let inner = text.trim_matches('"');
                let hint = if CLASSES.contains(&inner) {
                    format!("; write it without quotes: `#[retention({inner})]`")
                } else {
                    String::new()
                };
                errors.push(syn::Error::new(
                    lit.span(),
                    format!("the retention class is a name, not a string{hint}; {EXPECTED}"),
                ));
            }
            other => {
                bad = true;
                let tokens: TokenStream = other.iter().cloned().collect();
                let hint = named_class(other)
                    .map(|c| format!(": write just `#[retention({c})]`"))
                    .unwrap_or_default();
                errors.spanned(
                    tokens,
                    format!(
                        "expected a retention class name, found `{}`{hint}; {EXPECTED}",
                        show(other)
                    ),
                );
            }
        }
    }
    if found.len() > 1 {
        let first = found[0].1.to_string();
        for (_, ident) in &found[1..] {
            errors.push(syn::Error::new(
                ident.span(),
                format!(
                    "more than one retention class: an item has exactly one of `forgettable`, `fuzzy`, `strict`, and `{first}` is already given; keep only one of {}",
                    found.iter().map(|(_, i)| format!("`{i}`")).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        return None;
    }
    if bad {
        None
    } else {
        found.pop().map(|(c, _)| c)
    }
}

/// The class a multi-token argument probably meant: `class = strict`, `Retention::Strict`,
/// `favur_context::message::class::Fuzzy` all name one in their last identifier.
fn named_class(tokens: &[TokenTree]) -> Option<&'static str> {
    let last = tokens.iter().rev().find_map(|t| match t {
        TokenTree::Ident(i) => Some(i.to_string().to_ascii_lowercase()),
        TokenTree::Literal(l) => Some(l.to_string().trim_matches('"').to_ascii_lowercase()),
        _ => None,
    })?;
    CLASSES.iter().copied().find(|c| *c == last)
}

fn show(tokens: &[TokenTree]) -> String {
    let ts: TokenStream = tokens.iter().cloned().collect();
    quote!(#ts)
        .to_string()
        .replace(" :: ", "::")
        .replace(":: ", "::")
}

/// Splits a token stream at top-level commas, dropping empty pieces (a trailing comma).
pub(crate) fn split_commas(args: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut chunks = vec![Vec::new()];
    for tt in args {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => chunks.push(Vec::new()),
            _ => {
                if let Some(last) = chunks.last_mut() {
                    last.push(tt)
                }
            }
        }
    }
    chunks.retain(|c| !c.is_empty());
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(args: &str) -> (Option<String>, String) {
        let mut errors = Errors::default();
        let class = parse(args.parse().unwrap(), &mut errors);
        (
            class.map(|c| c.ty.to_string()),
            errors.into_compile_errors().to_string(),
        )
    }

    #[test]
    fn each_class_parses() {
        assert_eq!(parse_str("strict"), (Some("Strict".into()), String::new()));
        assert_eq!(parse_str("fuzzy,"), (Some("Fuzzy".into()), String::new()));
        assert_eq!(parse_str("forgettable").0.as_deref(), Some("Forgettable"));
    }

    #[test]
    fn errors_name_the_classes() {
        for (args, needle) in [
            ("", "missing retention class"),
            ("stric", "did you mean `strict`?"),
            ("Fuzzy", "did you mean `fuzzy`?"),
            ("banana", "unknown retention class `banana`"),
            ("strict, fuzzy", "more than one retention class"),
            (
                "\"strict\"",
                "write it without quotes: `#[retention(strict)]`",
            ),
            ("class = strict", "write just `#[retention(strict)]`"),
            (
                "favur_context::message::class::Fuzzy",
                "write just `#[retention(fuzzy)]`",
            ),
            ("42", "expected a retention class name, found `42`"),
        ] {
            let (class, errors) = parse_str(args);
            assert_eq!(class, None, "{args}");
            assert!(errors.contains(needle), "{args}: {errors}");
            assert!(errors.contains("forgettable"), "{args}: {errors}");
        }
    }

    #[test]
    fn crate_path_argument() {
        for (args, path) in [
            ("strict", ":: favur_context"),
            ("strict, crate = my_fc", "my_fc"),
            ("crate = ::my_fc, fuzzy", ":: my_fc"),
            (
                "fuzzy, crate = \"crate::reexport::fc\"",
                "crate :: reexport :: fc",
            ),
        ] {
            let mut errors = Errors::default();
            let parsed = parse_args(args.parse().unwrap(), &mut errors);
            assert!(errors.is_empty(), "{args}");
            errors.into_compile_errors();
            assert!(parsed.class.is_some(), "{args}");
            assert_eq!(parsed.krate.to_string(), path, "{args}");
        }
        for (args, needle) in [
            (
                "strict, crate =",
                "names the path of the favur-context dependency",
            ),
            (
                "strict, crate = 42",
                "names the path of the favur-context dependency",
            ),
            (
                "strict, crate = \"a b\"",
                "names the path of the favur-context dependency",
            ),
            ("strict, crate = a, crate = b", "given twice"),
            ("crate = a", "missing retention class"),
        ] {
            let mut errors = Errors::default();
            parse_args(args.parse().unwrap(), &mut errors);
            let out = errors.into_compile_errors().to_string();
            assert!(out.contains(needle), "{args}: {out}");
        }
    }

    #[test]
    fn several_errors_are_reported_together() {
        let (_, errors) = parse_str("stric, \"fuzzy\", x = y");
        assert_eq!(errors.matches("compile_error").count(), 3, "{errors}");
    }
}
