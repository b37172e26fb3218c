//! Stage 3, `expand`: the code generated for a valid item, in the `__private` paths of the
//! crate path given (see `body.rs` for the rewritten calls of a function).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Item;

use super::valid::Target;
use crate::body;
use crate::class::Class;
use crate::errors::Errors;

/// The item as emitted (a function with its calls rewritten) and what is generated beside
/// it (the `Classify`/`ClassifiedTool` impl of a type or a tool).
pub(super) fn generate(
    item: Item,
    target: Target,
    class: &Class,
    krate: &TokenStream,
    errors: &mut Errors,
) -> (TokenStream, TokenStream) {
    match target {
        Target::Type => {
            let generated = classify_type(&item, class, krate);
            (quote!(#item), generated)
        }
        Target::Function => (
            rewrite_function(item, class, krate, errors),
            TokenStream::new(),
        ),
        Target::Tool { is_async } => {
            let generated = classify_tool(&item, class, krate, is_async);
            (quote!(#item), generated)
        }
        Target::Unsupported => (quote!(#item), TokenStream::new()),
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
