//! `#[retention(class)]` on a type, a function or method, or an `impl Tool for T` block.
//!
//! Validation (the class, the item kind, the parameters) is done first and collects every
//! problem; expansion always emits the item, and on error a stub next to the errors so the
//! user does not get a cascade of secondary errors.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Item;
use syn::spanned::Spanned;

use crate::body;
use crate::class::{self, Class};
use crate::errors::Errors;

const SUPPORTED: &str = "it applies to a struct or enum that converts into a `Message`, a function or method with a history parameter (`&mut History`, `&mut JournaledHistory`, `&mut self`...), or an `impl Tool for T` block";

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let class::Args { class, krate } = class::parse_args(args, &mut errors);
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
    remove_repeated_attributes(&mut item, &krate, &mut errors);
    let target = validate(&item, &mut errors);
    let class = match (class, errors.is_empty()) {
        (Some(c), true) => c,
        _ => Class::stub(),
    };
    let generated = match target {
        Target::Type => classify_type(&item, &class, &krate),
        Target::Function => {
            let function = rewrite_function(item, &class, &krate, &mut errors);
            return finish(errors, function);
        }
        Target::Tool { is_async } => classify_tool(&item, &class, &krate, is_async),
        Target::Unsupported => TokenStream::new(),
    };
    let errs = errors.to_compile_errors();
    quote! { #errs #item #generated }
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

fn finish(errors: Errors, item: TokenStream) -> TokenStream {
    let errs = errors.to_compile_errors();
    quote! { #errs #item }
}

enum Target {
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

fn classify_type(item: &Item, class: &Class, krate: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
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

fn classify_tool(item: &Item, class: &Class, krate: &TokenStream, is_async: bool) -> TokenStream {
    let p = quote!(#krate::__private);
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

/// Rewrites the `append`/`pin` calls on the function's history parameters (see `body.rs`).
/// A function with no history parameter is an error at its name; it is emitted unchanged.
fn rewrite_function(
    item: Item,
    class: &Class,
    krate: &TokenStream,
    errors: &mut Errors,
) -> TokenStream {
    let Item::Fn(mut f) = item else {
        return quote!(#item);
    };
    let params = body::params(&f.sig);
    let name = &f.sig.ident;
    if params.names.is_empty() {
        errors.spanned(
            name,
            format!(
                "`#[retention(...)]` on a function classifies what it appends to its history parameters, but `{name}` has none; add a parameter such as `history: &mut History` (or `&mut JournaledHistory`, `&mut self`, a generic `&mut H`)"
            ),
        );
        return quote!(#f);
    }
    let mut block = (*f.block).clone();
    let rewritten = body::rewrite(&mut block, &params, class, krate);
    if rewritten == 0 && !params.explicit {
        let candidates = params
            .names
            .iter()
            .map(|(n, _)| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        errors.spanned(
            name,
            format!(
                "`#[retention(...)]` on a function classifies what it appends to its history parameters, but `{name}` has none: no parameter is declared `&mut History` (or another `&mut ...History`), and the body calls neither `append` nor `pin` on {candidates}; add a parameter such as `history: &mut History`"
            ),
        );
        return quote!(#f);
    }
    *f.block = block;
    quote!(#f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{has, lacks};

    fn expand_str(args: &str, item: &str) -> String {
        expand(args.parse().unwrap(), item.parse().unwrap()).to_string()
    }

    /// Expands `#[retention(class)]` on `src` and asserts the output contains `needle`.
    fn assert_expands(class: &str, src: &str, needle: &str) {
        let out = expand_str(class, src);
        has(&out, &[needle]);
    }

    #[test]
    fn function_calls_are_rewritten_with_the_class_and_the_crate_path() {
        let out = expand_str(
            "fuzzy",
            "fn f(mut history: &mut History) -> &Entry { history.append(\"x\"); history.last() }",
        );
        assert!(
            out.contains("fn f (mut history : & mut History) -> & Entry"),
            "the signature is kept: {out}"
        );
        let want = ":: favur_context :: __private :: append (:: favur_context :: __private :: Fuzzy , history , \"x\")";
        has(&out, &[want]);
        lacks(&out, &["compile_error"]);

        let out = expand_str(
            "strict, crate = my_fc",
            "fn f(&mut self, t: &str) { self.append(t); }",
        );
        let want =
            "self . append (my_fc :: __private :: with_class (my_fc :: __private :: Strict , t))";
        has(&out, &[want]);
        let out = expand_str("strict, crate = my_fc", "struct S;");
        has(&out, &["impl my_fc :: __private :: Classify for S"]);
    }

    #[test]
    fn functions_without_a_history() {
        assert_expands("strict", "fn f(n: u32, h: &History) {}", "but `f` has none");
        assert_expands(
            "strict",
            "fn f(v: &mut Vec<String>) { v.push(x); }",
            "calls neither `append` nor `pin` on `v`",
        );
        // A declared history need not be appended to.
        let out = expand_str("strict", "fn f(h: &mut History) { h.len(); }");
        lacks(&out, &["compile_error"]);
        // A non-history receiver is left to the type checker (the dispatch trait's message).
        let out = expand_str("strict", "fn f(v: &mut Vec<String>) { v.append(x); }");
        lacks(&out, &["compile_error"]);
        has(&out, &["__private :: append"]);
    }

    #[test]
    fn the_item_is_emitted_with_a_stub_on_error() {
        let out = expand_str("stric", "struct S;");
        has(&out, &["compile_error", "struct S ;", "Classify for S"]);

        let out = expand_str("strict", "const X: u8 = 1;");
        has(&out, &["not supported on a const", "const X : u8 = 1 ;"]);
    }

    #[test]
    fn a_second_attribute_is_an_error_also_under_a_renamed_crate() {
        for (args, second) in [
            ("strict", "#[retention(fuzzy)]"),
            ("strict", "#[favur_context::retention(fuzzy)]"),
            ("strict, crate = re::fc", "#[re::fc::retention(fuzzy)]"),
        ] {
            let out = expand_str(args, &format!("{second} struct S;"));
            assert!(
                out.contains("more than one `#[retention(...)]`"),
                "{args} {second}: {out}"
            );
        }
        let out = expand_str("strict", "#[other::retention(fuzzy)] struct S;");
        lacks(&out, &["compile_error"]);
    }

    #[test]
    fn tools_and_generic_types() {
        let wrap = "ClassifiedTool for Wrap < T >";
        assert_expands("forgettable", "impl<T> Tool for Wrap<T> {}", wrap);
        assert_expands(
            "strict",
            "struct Note<T> { t: T }",
            "where Self : :: favur_context :: __private :: IntoMessage",
        );
    }
}
