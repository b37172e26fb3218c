//! Procedural macros of [`favur-context`](https://docs.rs/favur-context).
//!
//! **This crate is an implementation detail.** Depend on `favur-context`, which re-exports
//! everything here; the generated code names only paths inside `favur_context::__private`
//! (or under the path given with `#[retention(..., crate = path)]`),
//! and nothing in this crate is covered by semver on its own.

mod attr;
mod body;
mod class;
mod errors;
mod message;
#[cfg(test)]
mod test_util;

use proc_macro::TokenStream;

/// The attribute is implemented in `favur-context-macros`, an implementation detail of
/// `favur-context`.
#[proc_macro_attribute]
pub fn retention(args: TokenStream, item: TokenStream) -> TokenStream {
    attr::expand(args.into(), item.into()).into()
}

/// The engine behind `strict!`, `fuzzy!` and `forgettable!`, which forward
/// `$crate, Class, tokens...` to it. Documented in `favur-context`.
#[doc(hidden)]
#[proc_macro]
pub fn message(input: TokenStream) -> TokenStream {
    message::expand(input.into()).into()
}
