//! `strict!`, `fuzzy!` and `forgettable!`: `$crate, Class, kind: content`.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, LitStr, Token};

use crate::errors::closest;

const KINDS: [&str; 8] = [
    "user",
    "assistant",
    "system",
    "tool_result",
    "tool_error",
    "tool_call",
    "tool_calls",
    "message",
];
const FORMS: &str = "`user: \"...\"`, `assistant: \"...\"`, `system: \"...\"`, `tool_result(call_id): \"...\"`, `tool_error(call_id): \"...\"`, `tool_call: id, name, args`, `tool_calls: [(id, name, args), ...]` or `message: expr`";

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match Parser::parse2(parse_input, input) {
        Ok(ts) => ts,
        Err(e) => e.to_compile_error(),
    }
}

fn parse_input(input: ParseStream) -> syn::Result<TokenStream> {
    // `$crate` arrives as one or more tokens before the first comma.
    let mut krate = TokenStream::new();
    while !input.peek(Token![,]) {
        let tt: TokenTree = input.parse()?;
        krate.extend([tt]);
    }
    input.parse::<Token![,]>()?;
    let class: Ident = input.parse()?;
    input.parse::<Token![,]>()?;
    let p = quote!(#krate::__private);
    if input.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            format!("expected a message: one of {FORMS}"),
        ));
    }
    let kind: Ident = input.parse().map_err(|e| {
        syn::Error::new(e.span(), format!("expected a message kind: one of {FORMS}"))
    })?;
    let name = kind.to_string();
    let message = match name.as_str() {
        "user" | "assistant" | "system" => {
            colon(input, &kind)?;
            let text = text(input, &p, &kind)?;
            let ctor = Ident::new(&name, kind.span());
            quote!(#p::Message::#ctor(#text))
        }
        "tool_result" | "tool_error" => {
            let content;
            syn::parenthesized!(content in input);
            let id: Expr = content.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    format!("`{name}(call_id)` needs the id of the call it answers"),
                )
            })?;
            if !content.is_empty() {
                return Err(
                    content.error(format!("`{name}(call_id)` takes one argument, the call id"))
                );
            }
            colon(input, &kind)?;
            let text = text(input, &p, &kind)?;
            let is_error = name == "tool_error";
            quote!(#p::Message::tool_result(#id, #text, #is_error))
        }
        "tool_call" => {
            colon(input, &kind)?;
            let call = CallArgs::parse(input)?;
            let call = call.to_tokens(&p);
            quote!(#p::Message::assistant_calls([#call]))
        }
        "tool_calls" => {
            colon(input, &kind)?;
            let content;
            syn::bracketed!(content in input);
            let tuples = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
            let mut calls = Vec::new();
            for t in tuples {
                let Expr::Tuple(tuple) = &t else {
                    return Err(syn::Error::new_spanned(
                        t,
                        "each call is a tuple `(id, name, args)`",
                    ));
                };
                if tuple.elems.len() != 3 {
                    return Err(syn::Error::new_spanned(
                        tuple,
                        format!(
                            "a call is `(id, name, args)`: 3 elements, found {}",
                            tuple.elems.len()
                        ),
                    ));
                }
                let (id, nm, args) = (&tuple.elems[0], &tuple.elems[1], &tuple.elems[2]);
                calls.push(
                    CallArgs {
                        id: id.clone(),
                        name: nm.clone(),
                        args: args.clone(),
                    }
                    .to_tokens(&p),
                );
            }
            if !input.is_empty() {
                return Err(input.error("unexpected tokens after the list of calls"));
            }
            quote!(#p::Message::assistant_calls([#(#calls),*]))
        }
        "message" => {
            colon(input, &kind)?;
            let expr: Expr = input.parse()?;
            if !input.is_empty() {
                return Err(
                    input.error("`message:` takes one expression that converts into a `Message`")
                );
            }
            quote_spanned!(expr_span(&expr)=> <#p::Message as ::core::convert::From<_>>::from(#expr))
        }
        other => {
            let hint = closest(other, &KINDS)
                .map(|k| format!("; did you mean `{k}`?"))
                .unwrap_or_default();
            return Err(syn::Error::new(
                kind.span(),
                format!("unknown message kind `{other}`{hint} expected one of {FORMS}"),
            ));
        }
    };
    Ok(quote! {
        #p::classify::<#p::#class>(
            #message,
            #p::site(::core::file!(), ::core::line!(), ::core::column!()),
        )
    })
}

fn expr_span(e: &Expr) -> Span {
    syn::spanned::Spanned::span(e)
}

fn colon(input: ParseStream, kind: &Ident) -> syn::Result<()> {
    if input.peek(Token![:]) {
        input.parse::<Token![:]>()?;
        Ok(())
    } else {
        Err(syn::Error::new(
            kind.span(),
            format!("expected `:` after `{kind}`, as in `{kind}: \"text\"`"),
        ))
    }
}

/// The text of a message: a format string with arguments, or one expression.
fn text(input: ParseStream, p: &TokenStream, kind: &Ident) -> syn::Result<TokenStream> {
    if input.is_empty() {
        return Err(syn::Error::new(
            kind.span(),
            format!("`{kind}:` needs its text: a format string and arguments, or an expression"),
        ));
    }
    if input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        let rest: TokenStream = input.parse()?;
        Ok(quote!(#p::format!(#lit #rest)))
    } else {
        let expr: Expr = input.parse()?;
        if !input.is_empty() {
            return Err(input.error(
                "after a text expression nothing may follow; to format, start with a string literal: `\"{}\", expr`",
            ));
        }
        Ok(quote_spanned!(expr_span(&expr)=> ::std::string::ToString::to_string(&#expr)))
    }
}

struct CallArgs {
    id: Expr,
    name: Expr,
    args: Expr,
}

impl Parse for CallArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let span = input.span();
        let parts = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
        if parts.len() != 3 {
            return Err(syn::Error::new(
                span,
                format!(
                    "`tool_call:` takes `id, name, args`: 3 arguments, found {}",
                    parts.len()
                ),
            ));
        }
        let mut it = parts.into_iter();
        match (it.next(), it.next(), it.next()) {
            (Some(id), Some(name), Some(args)) => Ok(CallArgs { id, name, args }),
            _ => Err(syn::Error::new(span, "`tool_call:` takes `id, name, args`")),
        }
    }
}

impl CallArgs {
    fn to_tokens(&self, p: &TokenStream) -> TokenStream {
        let CallArgs { id, name, args } = self;
        let args = quote_spanned!(expr_span(args)=> #p::arguments(#args));
        quote!(#p::ToolCall::new(#id, #name, #args))
    }
}
