//! Stage 1, `ast`: the attribute's input as parsed, nothing judged yet. The arguments
//! (class and crate path, their problems collected) and the item, or the raw tokens of
//! what is not an item syn reads as such.

use proc_macro2::{Span, TokenStream};
use syn::Item;

use super::SUPPORTED;
use crate::class::{self, Class};
use crate::errors::Errors;

/// `#[retention(args)] item`, parsed.
pub(super) struct Input {
    /// The class, when exactly one valid class was named.
    pub(super) class: Option<Class>,
    /// The path of favur-context (`::favur_context` unless `crate = path` is given).
    pub(super) krate: TokenStream,
    /// The item, or its tokens when it is not an item (a trait method declaration
    /// without a body, a field, a statement...): the error is collected.
    pub(super) item: Result<Item, TokenStream>,
}

impl Input {
    pub(super) fn parse(args: TokenStream, item: TokenStream, errors: &mut Errors) -> Input {
        let class::Args { class, krate } = class::parse_args(args, errors);
        let item = syn::parse2::<Item>(item.clone()).map_err(|_| {
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
            item
        });
        Input { class, krate, item }
    }
}
