//! Stage 2, `valid`: what the item is and whether the attribute may stand on it. Every
//! problem is collected; nothing is generated here.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Item;
use syn::spanned::Spanned;

use super::SUPPORTED;
use crate::errors::Errors;

/// The repeated attributes taken off the item (each an error), then what it is.
pub(super) fn check(item: &mut Item, krate: &TokenStream, errors: &mut Errors) -> Target {
    remove_repeated_attributes(item, krate, errors);
    validate(item, errors)
}

/// A second `#[retention(...)]` on the same item (`retention`, `favur_context::retention`, or
/// under the `crate = path` given) is an error (an item has one class). It is removed from
/// the emitted item so it does not expand into a conflicting impl.
fn remove_repeated_attributes(item: &mut Item, krate: &TokenStream, errors: &mut Errors) {
    let normalize = |s: String| s.replace(' ', "").trim_start_matches("::").to_owned();
    let krate = normalize(krate.to_string());
    let attrs = match item {
        Item::Struct(i) => &mut i.attrs,
        Item::Enum(i) => &mut i.attrs,
        Item::Fn(i) => &mut i.attrs,
        Item::Impl(i) => &mut i.attrs,
        _ => return,
    };
    attrs.retain(|attr| {
        let segments = &attr.path().segments;
        let prefix = segments
            .iter()
            .take(segments.len().saturating_sub(1))
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("::");
        let is_retention = segments.last().is_some_and(|s| s.ident == "retention")
            && (prefix.is_empty() || prefix == "favur_context" || prefix == krate);
        if is_retention {
            errors.spanned(
                attr,
                "more than one `#[retention(...)]` attribute: an item has exactly one of `forgettable`, `fuzzy`, `strict`; remove this one",
            );
        }
        !is_retention
    });
}

pub(super) enum Target {
    Type,
    Function,
    /// `impl Tool for T`, or `impl AsyncTool for T` (`is_async`).
    Tool {
        is_async: bool,
    },
    Unsupported,
}

fn validate(item: &Item, errors: &mut Errors) -> Target {
    match item {
        Item::Struct(_) | Item::Enum(_) => Target::Type,
        Item::Fn(_) => Target::Function,
        Item::Impl(imp) => match &imp.trait_ {
            Some((_, path, _))
                if path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "Tool" || s.ident == "AsyncTool") =>
            {
                Target::Tool {
                    is_async: path.segments.last().is_some_and(|s| s.ident == "AsyncTool"),
                }
            }
            Some((_, path, _)) => {
                errors.spanned(
                    path,
                    format!(
                        "`#[retention(...)]` on an impl block must be on `impl Tool for T`, not on an impl of `{}`; {SUPPORTED}",
                        quote!(#path).to_string().replace(' ', "")
                    ),
                );
                Target::Unsupported
            }
            None => {
                errors.spanned(
                    &imp.self_ty,
                    format!("`#[retention(...)]` is not supported on an inherent impl block: put it on the methods that append; {SUPPORTED}"),
                );
                Target::Unsupported
            }
        },
        Item::Verbatim(tokens) if syn::parse2::<syn::TraitItemFn>(tokens.clone()).is_ok() => {
            let span = syn::parse2::<syn::TraitItemFn>(tokens.clone())
                .map(|f| f.sig.ident.span())
                .unwrap_or_else(|_| Span::call_site());
            errors.push(syn::Error::new(
                span,
                format!("`#[retention(...)]` is not supported on a method declaration without a body: put it on the implementation of the method; {SUPPORTED}"),
            ));
            Target::Unsupported
        }
        other => {
            let kind = item_kind(other);
            errors.push(syn::Error::new(
                item_span(other),
                format!("`#[retention(...)]` is not supported on {kind}; {SUPPORTED}"),
            ));
            Target::Unsupported
        }
    }
}

fn item_kind(item: &Item) -> &'static str {
    match item {
        Item::Const(_) => "a const",
        Item::Static(_) => "a static",
        Item::Mod(_) => "a module",
        Item::Trait(_) => "a trait",
        Item::Type(_) => "a type alias",
        Item::Union(_) => "a union",
        Item::Use(_) => "a use declaration",
        Item::ExternCrate(_) => "an extern crate",
        Item::ForeignMod(_) => "an extern block",
        Item::Macro(_) => "a macro invocation",
        Item::TraitAlias(_) => "a trait alias",
        _ => "this item",
    }
}

/// The span of the item's keyword and name, where the error should point.
fn item_span(item: &Item) -> Span {
    match item {
        Item::Const(i) => i.ident.span(),
        Item::Static(i) => i.ident.span(),
        Item::Mod(i) => i.ident.span(),
        Item::Trait(i) => i.ident.span(),
        Item::Type(i) => i.ident.span(),
        Item::Union(i) => i.ident.span(),
        Item::Use(i) => i.use_token.span(),
        other => other.span(),
    }
}
