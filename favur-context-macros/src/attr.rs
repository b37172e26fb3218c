//! `#[retention(class)]` on a type, a function or method, or an `impl Tool for T` block.
//!
//! Validation (the class, the item kind, the parameters) is done first and collects every
//! problem; expansion always emits the item, and on error a stub next to the errors so the
//! user does not get a cascade of secondary errors.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Item, Pat, Type};

use crate::class::{self, Class};
use crate::errors::Errors;

const SUPPORTED: &str = "it applies to a struct or enum that converts into a `Message`, a function or method with a `&mut History` parameter, or an `impl Tool for T` block";

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let class = class::parse(args, &mut errors);
    let item: Item = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(_) => {
            // Not an item syn understands as such: a trait method declaration without a
            // body, a field, a statement...
            let (span, what) = match syn::parse2::<syn::TraitItemFn>(item.clone()) {
                Ok(f) => (
                    f.sig.ident.span(),
                    "a trait method without a body: put it on the implementation of the method, which has the body".to_owned(),
                ),
                Err(_) => (Span::call_site(), "this item".to_owned()),
            };
            errors.push(syn::Error::new(
                span,
                format!("`#[retention(...)]` is not supported on {what}; {SUPPORTED}"),
            ));
            let errs = errors.to_compile_errors();
            return quote! { #errs #item };
        }
    };
    let mut item = item;
    remove_repeated_attributes(&mut item, &mut errors);
    let target = validate(&item, &mut errors);
    let class = match (class, errors.is_empty()) {
        (Some(c), true) => c,
        _ => Class::stub(),
    };
    let generated = match target {
        Target::Type => classify_type(&item, &class),
        Target::Function(params) => return finish(errors, wrap_function(item, &params, &class)),
        Target::Tool { is_async } => classify_tool(&item, &class, is_async),
        Target::Unsupported => TokenStream::new(),
    };
    let errs = errors.to_compile_errors();
    quote! { #errs #item #generated }
}

/// A second `#[retention(...)]` on the same item is an error (an item has one class). It
/// is removed from the emitted item so it does not expand into a conflicting impl.
fn remove_repeated_attributes(item: &mut Item, errors: &mut Errors) {
    let attrs = match item {
        Item::Struct(i) => &mut i.attrs,
        Item::Enum(i) => &mut i.attrs,
        Item::Fn(i) => &mut i.attrs,
        Item::Impl(i) => &mut i.attrs,
        _ => return,
    };
    attrs.retain(|attr| {
        let segments = &attr.path().segments;
        let is_retention = segments.last().is_some_and(|s| s.ident == "retention")
            && (segments.len() == 1 || segments.first().is_some_and(|s| s.ident == "favur_context"));
        if is_retention {
            errors.spanned(
                attr,
                "more than one `#[retention(...)]` attribute: an item has exactly one of `forgettable`, `fuzzy`, `strict`; remove this one",
            );
        }
        !is_retention
    });
}

fn finish(errors: Errors, item: TokenStream) -> TokenStream {
    let errs = errors.to_compile_errors();
    quote! { #errs #item }
}

enum Target {
    Type,
    Function(Vec<syn::Ident>),
    /// `impl Tool for T`, or `impl AsyncTool for T` (`is_async`).
    Tool {
        is_async: bool,
    },
    Unsupported,
}

fn validate(item: &Item, errors: &mut Errors) -> Target {
    match item {
        Item::Struct(_) | Item::Enum(_) => Target::Type,
        Item::Fn(f) => {
            let params = history_params(&f.sig);
            if params.is_empty() {
                errors.spanned(
                    &f.sig.ident,
                    format!(
                        "`#[retention(...)]` on a function classifies what it appends to its `&mut History` parameters, but `{}` has none; add a parameter such as `history: &mut History`",
                        f.sig.ident
                    ),
                );
            }
            Target::Function(params)
        }
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

/// Parameters declared as `name: &mut History` (any path ending in `History`).
fn history_params(sig: &syn::Signature) -> Vec<syn::Ident> {
    sig.inputs
        .iter()
        .filter_map(|arg| match arg {
            FnArg::Typed(pt) => match (&*pt.pat, &*pt.ty) {
                (Pat::Ident(pi), Type::Reference(r))
                    if r.mutability.is_some() && is_history(&r.elem) =>
                {
                    Some(pi.ident.clone())
                }
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect()
}

fn is_history(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => {
            p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "History")
        }
        Type::Paren(p) => is_history(&p.elem),
        Type::Group(g) => is_history(&g.elem),
        _ => false,
    }
}

fn private() -> TokenStream {
    quote!(::favur_context::__private)
}

fn classify_type(item: &Item, class: &Class) -> TokenStream {
    let p = private();
    let ty = &class.ty;
    let (ident, generics) = match item {
        Item::Struct(s) => (&s.ident, &s.generics),
        Item::Enum(e) => (&e.ident, &e.generics),
        _ => return TokenStream::new(),
    };
    let mut generics = generics.clone();
    if generics.type_params().next().is_some() || generics.const_params().next().is_some() {
        // `impl<T: Display> From<Note<T>> for Message` classifies only those `Note<T>`.
        // (Not for a non-generic type: the bound would be trivially false if the
        // conversion is missing, and the error below in the body is clearer.)
        generics
            .make_where_clause()
            .predicates
            .push(syn::parse_quote!(Self: #p::IntoMessage));
    }
    let (impl_g, ty_g, where_c) = generics.split_for_impl();
    quote_spanned! {ident.span()=>
        #[automatically_derived]
        impl #impl_g #p::Classify for #ident #ty_g #where_c {
            #[inline]
            fn into_classified(self, site: #p::CallSite) -> #p::Classified {
                #p::classify::<#p::#ty>(#p::into_message(self), site)
            }
        }
    }
}

fn classify_tool(item: &Item, class: &Class, is_async: bool) -> TokenStream {
    let p = private();
    let ty = &class.ty;
    let Item::Impl(imp) = item else {
        return TokenStream::new();
    };
    let self_ty = &imp.self_ty;
    let (impl_g, _, where_c) = imp.generics.split_for_impl();
    let classified = if is_async {
        quote!(ClassifiedAsyncTool)
    } else {
        quote!(ClassifiedTool)
    };
    quote! {
        #[automatically_derived]
        impl #impl_g #p::#classified for #self_ty #where_c {
            const RETENTION: #p::Retention = <#p::#ty as #p::Class>::RETENTION;
        }
    }
}

fn wrap_function(item: Item, params: &[syn::Ident], class: &Class) -> TokenStream {
    let p = private();
    let ty = &class.ty;
    let Item::Fn(mut f) = item else {
        return quote!(#item);
    };
    let shadows = params.iter().map(|ident| {
        quote! {
            #[allow(unused_mut, unused_variables)]
            let mut #ident = #p::ClassedHistory::<#p::#ty>::new(#ident);
        }
    });
    // The parameter itself is only moved into its shadow: a `mut` on it would now be an
    // unused `mut` (the shadow is the mutable binding).
    for arg in &mut f.sig.inputs {
        if let FnArg::Typed(pt) = arg
            && let Pat::Ident(pi) = &mut *pt.pat
            && params.contains(&pi.ident)
        {
            pi.mutability = None;
        }
    }
    let body = &f.block;
    let block: syn::Block = syn::parse_quote!({ #(#shadows)* #body });
    *f.block = block;
    quote!(#f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(sig: &str) -> Vec<String> {
        let f: syn::ItemFn = syn::parse_str(&format!("{sig} {{}}")).unwrap();
        history_params(&f.sig)
            .iter()
            .map(|i| i.to_string())
            .collect()
    }

    #[test]
    fn finds_history_parameters() {
        assert_eq!(params("fn f(history: &mut History)"), ["history"]);
        assert_eq!(params("fn f(&mut self, h: &mut History, x: u8)"), ["h"]);
        assert_eq!(
            params("async fn f<'a, T>(t: T, mut h: &'a mut ::favur_context::History)"),
            ["h"]
        );
        assert_eq!(
            params("fn f(a: &mut favur_context::History, b: &mut History)"),
            ["a", "b"]
        );
        assert!(params("fn f(h: &History)").is_empty());
        assert!(params("fn f(h: History)").is_empty());
        assert!(params("fn f(v: &mut Vec<String>)").is_empty());
        assert!(params("fn f((a, b): (u8, u8))").is_empty());
    }

    fn expand_str(args: &str, item: &str) -> String {
        expand(args.parse().unwrap(), item.parse().unwrap()).to_string()
    }

    #[test]
    fn function_parameters_are_shadowed_with_the_class() {
        let out = expand_str(
            "fuzzy",
            "fn f(history: &mut History) { history.append(\"x\"); }",
        );
        assert!(
            out.contains("let mut history = :: favur_context :: __private :: ClassedHistory :: < :: favur_context :: __private :: Fuzzy > :: new (history)"),
            "{out}"
        );
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn the_item_is_emitted_with_a_stub_on_error() {
        let out = expand_str("stric", "struct S;");
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("struct S ;"), "{out}");
        assert!(out.contains("Classify for S"), "{out}");

        let out = expand_str("strict", "const X: u8 = 1;");
        assert!(out.contains("not supported on a const"), "{out}");
        assert!(out.contains("const X : u8 = 1 ;"), "{out}");
    }

    #[test]
    fn tools_and_generic_types() {
        let out = expand_str("forgettable", "impl<T> Tool for Wrap<T> {}");
        assert!(out.contains("ClassifiedTool for Wrap < T >"), "{out}");
        let out = expand_str("strict", "struct Note<T> { t: T }");
        assert!(
            out.contains("where Self : :: favur_context :: __private :: IntoMessage"),
            "{out}"
        );
    }
}
