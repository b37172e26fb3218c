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
            // Not an item syn understands here (e.g. a trait method without a body).
            errors.push(syn::Error::new(
                Span::call_site(),
                format!("`#[retention(...)]` is not supported on this item: {SUPPORTED}"),
            ));
            let errs = errors.to_compile_errors();
            return quote! { #errs #item };
        }
    };
    let ok = errors.is_empty();
    let target = validate(&item, &mut errors);
    let class = match (class, errors.is_empty() && ok) {
        (Some(c), true) => c,
        _ => Class::stub(),
    };
    let generated = match target {
        Target::Type => classify_type(&item, &class),
        Target::Function(params) => return finish(errors, wrap_function(item, &params, &class)),
        Target::Tool => classify_tool(&item, &class),
        Target::Unsupported => TokenStream::new(),
    };
    let errs = errors.to_compile_errors();
    quote! { #errs #item #generated }
}

fn finish(errors: Errors, item: TokenStream) -> TokenStream {
    let errs = errors.to_compile_errors();
    quote! { #errs #item }
}

enum Target {
    Type,
    Function(Vec<syn::Ident>),
    Tool,
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
                        "`#[retention(...)]` on a function classifies what it appends to its `&mut History` parameters, but `{}` has none",
                        f.sig.ident
                    ),
                );
            }
            Target::Function(params)
        }
        Item::Impl(imp) => match &imp.trait_ {
            Some((_, path, _)) if path.segments.last().is_some_and(|s| s.ident == "Tool") => {
                Target::Tool
            }
            Some((_, path, _)) => {
                errors.spanned(
                    path,
                    format!(
                        "`#[retention(...)]` on an impl block must be on `impl Tool for T`, not on an impl of `{}`",
                        quote!(#path).to_string().replace(' ', "")
                    ),
                );
                Target::Unsupported
            }
            None => {
                errors.spanned(
                    &imp.self_ty,
                    format!("`#[retention(...)]` is not supported on an inherent impl block: put it on the methods that append, or on `impl Tool for T`; {SUPPORTED}"),
                );
                Target::Unsupported
            }
        },
        other => {
            let kind = item_kind(other);
            errors.push(syn::Error::new(
                item_span(other),
                format!("`#[retention(...)]` is not supported on {kind}: {SUPPORTED}"),
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
    let (impl_g, ty_g, where_c) = generics.split_for_impl();
    quote_spanned! {ident.span()=>
        #[automatically_derived]
        impl #impl_g #p::Classify for #ident #ty_g #where_c {
            #[inline]
            fn into_classified(self, site: #p::CallSite) -> #p::Classified {
                #p::classify::<#p::#ty>(
                    <Self as ::core::convert::Into<#p::Message>>::into(self),
                    site,
                )
            }
        }
    }
}

fn classify_tool(item: &Item, class: &Class) -> TokenStream {
    let p = private();
    let ty = &class.ty;
    let Item::Impl(imp) = item else {
        return TokenStream::new();
    };
    let self_ty = &imp.self_ty;
    let (impl_g, _, where_c) = imp.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_g #p::ClassifiedTool for #self_ty #where_c {
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
    let body = &f.block;
    let block: syn::Block = syn::parse_quote!({ #(#shadows)* #body });
    *f.block = block;
    quote!(#f)
}
