//! The engine behind `strict!`, `fuzzy!` and `forgettable!`.
//!
//! The `macro_rules!` front ends in `favur-context` forward `$crate, Class, tokens...`;
//! this module parses the user's tokens:
//!
//! ```text
//! user: "format", args...        system: "format", args...      assistant: "format", args...
//! user: expr                     (any `Display` expression, same for every text form)
//! tool_result(call_id): "format", args...
//! tool_error(call_id): "format", args...
//! tool_call: id, name, args
//! tool_calls: [(id, name, args), ...]
//! tool_calls: expr               (any `IntoIterator<Item = ToolCall>`)
//! message: expr                  (anything that converts into a `Message`)
//! ```
//!
//! Every user expression is emitted with its own span, so type errors (a call id that is
//! not a string, a format argument that is not `Display`) are reported at the user's tokens.
//! The call site is recorded with `file!()`/`line!()`/`column!()`, which resolve to the
//! outermost macro invocation: the user's `strict!(...)`.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Token};

use crate::errors::closest;

pub(crate) const KINDS: [&str; 8] = [
    "user",
    "assistant",
    "system",
    "tool_result",
    "tool_error",
    "tool_call",
    "tool_calls",
    "message",
];

/// The valid forms, as listed in diagnostics.
pub(crate) const FORMS: &str = "`user: \"...\"`, `assistant: \"...\"`, `system: \"...\"`, `tool_result(call_id): \"...\"`, `tool_error(call_id): \"...\"`, `tool_call: id, name, args`, `tool_calls: [(id, name, args), ...]`, `tool_calls: calls` or `message: expr`";

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
    let macro_name = class.to_string().to_ascii_lowercase();
    let p = quote!(#krate::__private);
    let message = parse_message(input, &p, &macro_name)?;
    Ok(quote! {
        #p::classify::<#p::#class>(
            #message,
            #p::site(::core::file!(), ::core::line!(), ::core::column!()),
        )
    })
}

/// Parses the user's part of the invocation into an expression of type `Message`.
fn parse_message(
    input: ParseStream,
    p: &TokenStream,
    macro_name: &str,
) -> syn::Result<TokenStream> {
    if input.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            format!(
                "`{macro_name}!` needs a message, e.g. `{macro_name}!(user: \"...\")`; the forms are {FORMS}"
            ),
        ));
    }
    if !input.peek(syn::Ident::peek_any) {
        return Err(no_kind(input, macro_name)?);
    }
    let kind = Ident::parse_any(input)?;
    let name = kind.to_string();
    let message = match name.as_str() {
        "user" | "assistant" | "system" => {
            colon(input, &kind)?;
            let text = text(input, p, &kind)?;
            let ctor = Ident::new(&name, kind.span());
            quote!(#p::Message::#ctor(#text))
        }
        "tool_result" | "tool_error" => {
            let id = result_call_id(input, &kind)?;
            colon(input, &kind)?;
            let text = text(input, p, &kind)?;
            let is_error = name == "tool_error";
            let id = spanned_call(p, "call_id", &id);
            quote!(#p::Message::tool_result(#id, #text, #is_error))
        }
        "tool_call" => {
            colon(input, &kind)?;
            let parts = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
            let call = call_from(p, &kind, parts.into_iter().collect(), None)?;
            quote!(#p::Message::assistant_calls([#call]))
        }
        "tool_calls" => {
            colon(input, &kind)?;
            tool_calls(input, p, &kind)?
        }
        "message" => {
            colon(input, &kind)?;
            let expr = one_expr(
                input,
                &kind,
                "`message:` needs an expression that converts into a `Message`",
                "`message:` takes one expression that converts into a `Message`",
            )?;
            spanned_call(p, "into_message", &expr)
        }
        other => {
            let hint = closest(other, &KINDS)
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            return Err(syn::Error::new(
                kind.span(),
                format!("unknown message kind `{other}`{hint}; the forms are {FORMS}"),
            ));
        }
    };
    Ok(message)
}

/// The error for an invocation that does not start with a message kind, at its first
/// token.
fn no_kind(input: ParseStream, macro_name: &str) -> syn::Result<syn::Error> {
    let tokens: TokenStream = input.fork().parse()?;
    let first = tokens.into_iter().next();
    let shown = match &first {
        Some(TokenTree::Literal(_)) => {
            format!(
                "missing message kind before the text: write `{macro_name}!(user: ...)`, `{macro_name}!(assistant: ...)`, ...; the forms are {FORMS}"
            )
        }
        _ => format!("expected a message kind; the forms are {FORMS}"),
    };
    let span = first.map_or_else(Span::call_site, |t| t.span());
    Ok(syn::Error::new(span, shown))
}

/// The `(call_id)` after `tool_result` / `tool_error`: exactly one expression.
fn result_call_id(input: ParseStream, kind: &Ident) -> syn::Result<Expr> {
    let name = kind.to_string();
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            kind.span(),
            format!(
                "`{name}` needs the id of the call it answers in parentheses: `{name}(call_id): \"...\"`"
            ),
        ));
    }
    let content;
    let parens = syn::parenthesized!(content in input);
    if content.is_empty() {
        return Err(syn::Error::new(
            parens.span.join(),
            format!("`{name}(call_id)` needs the id of the call it answers"),
        ));
    }
    let id: Expr = content.parse()?;
    if !content.is_empty() {
        let rest: TokenStream = content.parse()?;
        return Err(syn::Error::new_spanned(
            rest,
            format!("`{name}(call_id)` takes one argument, the call id"),
        ));
    }
    Ok(id)
}

/// The one expression after `kind:`: `needs` (at the kind) when there is none, `takes_one`
/// (at the extra tokens) when more follows it.
fn one_expr(input: ParseStream, kind: &Ident, needs: &str, takes_one: &str) -> syn::Result<Expr> {
    if input.is_empty() {
        return Err(syn::Error::new(kind.span(), needs));
    }
    let expr: Expr = input.parse()?;
    if !input.is_empty() {
        let rest: TokenStream = input.parse()?;
        return Err(syn::Error::new_spanned(rest, takes_one));
    }
    Ok(expr)
}

/// `tool_calls: [(id, name, args), ...]` (a literal list: every element a tuple), or
/// `tool_calls: expr` for any `IntoIterator<Item = ToolCall>` (`[call_a, call_b]` included).
fn tool_calls(input: ParseStream, p: &TokenStream, kind: &Ident) -> syn::Result<TokenStream> {
    let expr = one_expr(
        input,
        kind,
        "`tool_calls:` needs the calls: a list `[(id, name, args), ...]` or an expression whose value is an `IntoIterator<Item = ToolCall>`",
        "`tool_calls:` takes one list `[(id, name, args), ...]` or one expression",
    )?;
    let tuples = match &expr {
        Expr::Array(list) if list.elems.iter().any(|e| matches!(e, Expr::Tuple(_))) => {
            list.elems.iter().cloned().collect::<Vec<_>>()
        }
        Expr::Array(list) if list.elems.is_empty() => {
            return Err(syn::Error::new(
                kind.span(),
                "`tool_calls:` needs at least one call `(id, name, args)`",
            ));
        }
        // Any other expression (`[call_a, call_b]` too): its value is the calls.
        _ => {
            return Ok(spanned_call(p, "tool_calls", &expr));
        }
    };
    let mut calls = Vec::new();
    let mut error: Option<syn::Error> = None;
    for t in tuples {
        let result = match t {
            Expr::Tuple(tuple) => {
                let span = tuple.span();
                call_from(p, kind, tuple.elems.into_iter().collect(), Some(span))
            }
            other => Err(syn::Error::new_spanned(
                other,
                "in a list of calls, each call is a tuple `(id, name, args)`; to pass `ToolCall` values, list only those (`[call_a, call_b]`) or give any expression whose value is an `IntoIterator<Item = ToolCall>`",
            )),
        };
        match result {
            Ok(call) => calls.push(call),
            Err(e) => match &mut error {
                Some(first) => first.combine(e),
                None => error = Some(e),
            },
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(quote!(#p::Message::assistant_calls([#(#calls),*]))),
    }
}

/// `#p::function(expr)` spanned at the user's expression, so an unsatisfied bound of
/// `function` is reported there.
fn spanned_call(p: &TokenStream, function: &str, expr: &Expr) -> TokenStream {
    let f = Ident::new(function, Span::call_site());
    quote_spanned!(expr.span()=> #p::#f(#expr))
}

/// A `ToolCall` from `id, name, args`, or an arity error spanned at the arguments (or at
/// `span`, the tuple, for `tool_calls`).
fn call_from(
    p: &TokenStream,
    kind: &Ident,
    parts: Vec<Expr>,
    span: Option<Span>,
) -> syn::Result<TokenStream> {
    if let [id, name, args] = parts.as_slice() {
        let id = spanned_call(p, "call_id", id);
        let name = spanned_call(p, "tool_name", name);
        let args = spanned_call(p, "arguments", args);
        return Ok(quote!(#p::ToolCall::new(#id, #name, #args)));
    }
    let found = parts.len();
    let what = if span.is_some() {
        "a call in `tool_calls: [...]` is a tuple `(id, name, args)`"
    } else {
        "`tool_call:` takes `id, name, args`"
    };
    let message = format!("{what}: 3 elements, found {found}");
    Err(match span {
        Some(span) => syn::Error::new(span, message),
        None if parts.is_empty() => syn::Error::new(kind.span(), message),
        None => syn::Error::new_spanned(quote!(#(#parts),*), message),
    })
}

fn colon(input: ParseStream, kind: &Ident) -> syn::Result<()> {
    if input.peek(Token![:]) && !input.peek(Token![::]) {
        input.parse::<Token![:]>()?;
        Ok(())
    } else {
        let example = match kind.to_string().as_str() {
            "tool_call" => format!("`{kind}: id, name, args`"),
            "tool_calls" => format!("`{kind}: [(id, name, args), ...]` or `{kind}: calls`"),
            "message" => format!("`{kind}: expr`"),
            "tool_result" | "tool_error" => format!("`{kind}(call_id): \"text\"`"),
            _ => format!("`{kind}: \"text\"`"),
        };
        Err(syn::Error::new(
            kind.span(),
            format!("expected `:` after `{kind}`, as in {example}"),
        ))
    }
}

/// The text of a message: a format string with arguments, or one `Display` expression.
fn text(input: ParseStream, p: &TokenStream, kind: &Ident) -> syn::Result<TokenStream> {
    if input.is_empty() {
        return Err(syn::Error::new(
            kind.span(),
            format!(
                "`{kind}:` needs its text: a format string and its arguments, or an expression"
            ),
        ));
    }
    if input.peek(LitStr) {
        // `format!` itself checks the string and the arguments, at the user's tokens.
        let lit: LitStr = input.parse()?;
        let rest: TokenStream = input.parse()?;
        Ok(quote!(#p::format!(#lit #rest)))
    } else {
        let expr: Expr = input.parse()?;
        if !input.is_empty() {
            let rest: TokenStream = input.parse()?;
            return Err(syn::Error::new_spanned(
                rest,
                "unexpected tokens after the text expression; to format, start with a string literal: `\"{}\", expr`",
            ));
        }
        Ok(quote_spanned!(expr.span()=> ::std::string::ToString::to_string(&#expr)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::has;

    fn expand_str(input: &str) -> String {
        let ts: TokenStream = format!("$crate_placeholder, Strict, {input}")
            .replace("$crate_placeholder", "krate")
            .parse()
            .unwrap();
        expand(ts).to_string()
    }

    fn error_of(input: &str) -> String {
        let out = expand_str(input);
        assert!(
            out.contains("compile_error"),
            "expected an error for {input}: {out}"
        );
        out
    }

    #[test]
    fn every_form_expands() {
        for input in [
            r#"user: "hi {}", 1"#,
            r#"assistant: "ok""#,
            r#"system: prompt"#,
            r#"tool_result("c1"): "out""#,
            r#"tool_error(id): "exit {}", code"#,
            r#"tool_call: "c1", "bash", args"#,
            r#"tool_calls: [("a", "b", c), ("d", "e", f)]"#,
            r#"tool_calls: reply.calls"#,
            r#"tool_calls: [call_a, call_b]"#,
            r#"message: m"#,
        ] {
            let out = expand_str(input);
            assert!(!out.contains("compile_error"), "{input}: {out}");
            has(
                &out,
                &["classify :: < krate :: __private :: Strict >", "line !"],
            );
        }
    }

    #[test]
    fn tool_error_sets_the_error_flag() {
        assert!(expand_str(r#"tool_error("c"): "x""#).contains("true"));
        assert!(expand_str(r#"tool_result("c"): "x""#).contains("false"));
    }

    #[test]
    fn unknown_kind_suggests() {
        assert!(error_of(r#"usr: "x""#).contains("did you mean `user`?"));
        assert!(error_of(r#"tool_reslt("c"): "x""#).contains("did you mean `tool_result`?"));
        assert!(!error_of(r#"banana: "x""#).contains("did you mean"));
    }

    #[test]
    fn structural_errors() {
        assert!(error_of(r#"user "x""#).contains("expected `:` after `user`"));
        assert!(error_of(r#"user:"#).contains("needs its text"));
        assert!(error_of(r#"tool_call: "a", "b""#).contains("3 elements, found 2"));
        assert!(error_of(r#"tool_calls: [("a", "b")]"#).contains("3 elements, found 2"));
        assert!(error_of(r#"tool_calls: [("a", "b", c), call]"#).contains("each call is a tuple"));
        assert!(error_of(r#"tool_calls: []"#).contains("at least one call"));
        assert!(error_of(r#"tool_calls:"#).contains("needs the calls"));
        assert!(error_of(r#"tool_calls: a b"#).contains("one expression"));
        assert!(error_of(r#"tool_result: "x""#).contains("in parentheses"));
        assert!(error_of(r#"tool_result(): "x""#).contains("needs the id"));
        assert!(error_of(r#"tool_result(a, b): "x""#).contains("takes one argument"));
        assert!(error_of(r#""just text""#).contains("missing message kind"));
        assert!(error_of("").contains("needs a message"));
        assert!(error_of("message: a b").contains("one expression"));
    }
}
