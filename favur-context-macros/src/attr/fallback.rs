//! Stage 4, `fallback`: what is emitted when something was wrong. The item always comes
//! out, and an item that could be expanded is expanded with a stub class, so the user sees
//! the errors collected and no cascade of secondary ones (an unknown class does not also
//! make every `append` of the function a "no class" error).

use proc_macro2::TokenStream;
use quote::quote;

use crate::class::Class;
use crate::errors::Errors;

/// The class to expand with: the one named, or the stub when any error was collected.
pub(super) fn class(named: Option<Class>, errors: &Errors) -> Class {
    match (named, errors.is_empty()) {
        (Some(class), true) => class,
        _ => Class::stub(),
    }
}

/// The errors collected (reported here, once), then the item and what was generated.
pub(super) fn emit(errors: Errors, item: TokenStream, generated: TokenStream) -> TokenStream {
    let errors = errors.into_compile_errors();
    quote! { #errors #item #generated }
}
