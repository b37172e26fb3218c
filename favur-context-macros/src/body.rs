//! `#[retention(class)]` on a function or method: which parameters are histories, and the
//! rewrite of `append`/`pin` calls on them in the body.
//!
//! # Why a rewrite of the calls, not a wrapper around the parameters
//!
//! An earlier expansion shadowed each `&mut History` parameter with a wrapper whose
//! `append` took plain content. Any history that is not literally a `&mut History` could not
//! be wrapped (a `JournaledHistory`, a type alias, `&mut self` of an extension trait, a
//! generic `H`), and the shadow changed the parameter's type for the rest of the body (it
//! could not be returned from, borrowed out of, or passed on as it was).
//!
//! So the parameters are left exactly as the user declared them, and only the method calls
//! `p.append(x)` / `p.pin(x)` whose receiver is a history parameter `p`, or a field of one
//! (`self.history`), are rewritten (a `syn` visitor over the body, into closures and blocks,
//! not into nested items or macro invocations, and not under a binding that shadows `p`):
//!
//! - when `p` is declared with a concrete type (`&mut History`, `&mut JournaledHistory`, a
//!   type alias), into `__private::append(C, p, x)`, which dispatches through the
//!   hidden `AppendTo`/`PinTo` traits: each history returns what its own `append` returns,
//!   and a parameter that is not a history gets that trait's spanned `on_unimplemented`
//!   message instead of an unrelated type error;
//! - when the macro cannot see `p`'s type (`self`, `&mut H` for a generic `H`,
//!   `&mut impl Trait`, `&mut Self`, `&mut dyn Trait`, a field `self.history`), into
//!   `p.append(__private::with_class(C, x))`: the receiver's own method is called, by
//!   ordinary method resolution (auto-deref included), with the content already
//!   classified, so every type whose `append` takes a classified value works.
//!
//! Both helpers are `#[track_caller]` and spanned at the user's `append`, so the recorded
//! call site is the user's line and column. Nothing else in the body changes, so plain
//! content anywhere else (another function, a nested item, a local history) is still the
//! "has no retention class" error.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, FnArg, Ident, Pat, Type};

use crate::class::Class;

/// How a history parameter's `append`/`pin` calls are rewritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A concrete type: through the hidden dispatch traits.
    Dispatch,
    /// A type the macro cannot see: the receiver's own method with classified content.
    Forward,
}

/// The function's history parameters.
#[derive(Debug, Default)]
pub(crate) struct Params {
    /// Each candidate receiver (`self` included) and how its calls are rewritten.
    pub(crate) names: Vec<(String, Mode)>,
    /// Whether they are parameters declared `&mut ...History` (otherwise they are every
    /// `&mut` parameter and `&mut self`, and count only if `append`/`pin` is called on one).
    pub(crate) explicit: bool,
}

/// The history parameters of `sig`: those declared `&mut` of a type whose name ends in
/// `History` (`History`, `JournaledHistory`, `favur_context::journal::JournaledHistory`...);
/// if there is none, `&mut self` and every `&mut` parameter.
pub(crate) fn params(sig: &syn::Signature) -> Params {
    let generics: HashSet<String> = sig
        .generics
        .type_params()
        .map(|t| t.ident.to_string())
        .collect();
    let mut named = Vec::new();
    let mut others = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => {
                if matches!(&*r.ty, Type::Reference(t) if t.mutability.is_some()) {
                    others.push(("self".to_owned(), Mode::Forward));
                }
            }
            FnArg::Typed(pt) => {
                let (Pat::Ident(pi), Type::Reference(r)) = (&*pt.pat, &*pt.ty) else {
                    continue;
                };
                if r.mutability.is_none() {
                    continue;
                }
                let name = pi.ident.to_string();
                match kind(&r.elem, &generics) {
                    Some((mode, true)) => named.push((name, mode)),
                    Some((mode, false)) => others.push((name, mode)),
                    None => {}
                }
            }
        }
    }
    if named.is_empty() {
        Params {
            names: others,
            explicit: false,
        }
    } else {
        Params {
            names: named,
            explicit: true,
        }
    }
}

/// For the type behind a `&mut`: how its calls are rewritten, and whether its name says it
/// is a history. `None` for types that cannot be a history (slices, tuples, references...).
fn kind(ty: &Type, generics: &HashSet<String>) -> Option<(Mode, bool)> {
    match ty {
        Type::Paren(p) => kind(&p.elem, generics),
        Type::Group(g) => kind(&g.elem, generics),
        Type::ImplTrait(_) | Type::TraitObject(_) => Some((Mode::Forward, false)),
        Type::Path(p) if p.qself.is_some() => Some((Mode::Forward, false)),
        Type::Path(p) => {
            let last = p.path.segments.last()?.ident.to_string();
            let opaque = p.path.segments.len() == 1 && (last == "Self" || generics.contains(&last));
            if opaque {
                Some((Mode::Forward, false))
            } else {
                Some((Mode::Dispatch, last.ends_with("History")))
            }
        }
        _ => None,
    }
}

/// Rewrites the `append`/`pin` calls on the history parameters in `block`; returns how
/// many calls were rewritten.
pub(crate) fn rewrite(
    block: &mut syn::Block,
    params: &Params,
    class: &Class,
    krate: &TokenStream,
) -> usize {
    let mut rewriter = Rewriter {
        params: &params.names,
        shadowed: Vec::new(),
        class,
        krate,
        count: 0,
    };
    rewriter.visit_block_mut(block);
    rewriter.count
}

struct Rewriter<'a> {
    params: &'a [(String, Mode)],
    /// Names bound in the scopes being visited (innermost last), which hide a parameter.
    shadowed: Vec<Vec<String>>,
    class: &'a Class,
    krate: &'a TokenStream,
    count: usize,
}

impl Rewriter<'_> {
    /// How calls on `receiver` are rewritten: a history parameter in scope, or a field of
    /// one (`self.history`, `self.0`, `session.journal`), whose type the macro cannot see.
    fn mode_of(&self, receiver: &Expr) -> Option<Mode> {
        let mut root = strip(receiver);
        let mut field = false;
        while let Expr::Field(f) = root {
            root = strip(&f.base);
            field = true;
        }
        let name = match root {
            Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => {
                p.path.get_ident()?.to_string()
            }
            _ => return None,
        };
        if self.shadowed.iter().flatten().any(|s| *s == name) {
            return None;
        }
        let mode = self.params.iter().find(|(n, _)| *n == name)?.1;
        Some(if field { Mode::Forward } else { mode })
    }

    /// Visits `f` with the names bound by `pats` hiding the parameters of the same name.
    fn scoped<'p>(&mut self, pats: impl IntoIterator<Item = &'p Pat>, f: impl FnOnce(&mut Self)) {
        let mut names = Vec::new();
        for pat in pats {
            bound_names(pat, &mut names);
        }
        self.shadowed.push(names);
        f(self);
        self.shadowed.pop();
    }
}

/// The expression without parentheses or invisible groups around it.
fn strip(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        other => other,
    }
}

/// The names a pattern binds.
fn bound_names(pat: &Pat, out: &mut Vec<String>) {
    struct Names<'a>(&'a mut Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for Names<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.push(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
        // A path in a pattern (`None`, `Kind::A`) binds nothing; struct field shorthand
        // (`Point { x, .. }`) is a `PatIdent` and is found above.
        fn visit_expr(&mut self, _: &'ast Expr) {}
    }
    syn::visit::Visit::visit_pat(&mut Names(out), pat);
}

/// The patterns bound by the `let`s of an `if`/`while` condition (`if let`, let chains).
fn let_patterns(cond: &Expr, out: &mut Vec<Pat>) {
    match strip(cond) {
        Expr::Let(l) => out.push((*l.pat).clone()),
        Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) => {
            let_patterns(&b.left, out);
            let_patterns(&b.right, out);
        }
        _ => {}
    }
}

impl VisitMut for Rewriter<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        visit_mut::visit_expr_mut(self, expr);
        let Expr::MethodCall(call) = expr else {
            return;
        };
        let method = call.method.to_string();
        if !(method == "append" || method == "pin") || call.turbofish.is_some() {
            return;
        }
        if call.args.len() != 1 {
            return;
        }
        let Some(mode) = self.mode_of(&call.receiver) else {
            return;
        };
        // The generated call starts at the user's `append` (its `#[track_caller]` location,
        // as for a method call) and its parentheses are the user's, so the call's span
        // covers the arguments and rustc points at them in errors.
        let span = call.method.span();
        let parens = call.paren_token.span.join();
        let krate = self.krate;
        let p = respan(quote!(#krate::__private), span);
        let ty = Ident::new(&self.class.ty.to_string(), span);
        let receiver = &call.receiver;
        let method_ident = &call.method;
        let arg = &call.args[0];
        let attrs = &call.attrs;
        let tokens = match mode {
            Mode::Dispatch => {
                let f = Ident::new(&method, span);
                let args = group(quote_spanned!(span=> #p::#ty, #receiver, #arg), parens);
                quote_spanned!(span=> #(#attrs)* #p::#f #args)
            }
            Mode::Forward => {
                let dot = call.dot_token;
                let classified = group(quote_spanned!(span=> #p::#ty, #arg), parens);
                let classified = quote_spanned!(span=> #p::with_class #classified);
                let args = group(classified, parens);
                quote!(#(#attrs)* #receiver #dot #method_ident #args)
            }
        };
        // Tokens built from a parsed call always parse; if not, the call stays as written.
        if let Ok(new) = syn::parse2::<Expr>(tokens) {
            *expr = new;
            self.count += 1;
        }
    }

    // A nested item (`fn`, `impl`, `mod`...) has its own parameters: its appends stay as
    // written, so plain content there is still an error.
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}

    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        // A `let` hides a parameter for the statements after it.
        self.shadowed.push(Vec::new());
        for stmt in &mut block.stmts {
            self.visit_stmt_mut(stmt);
            if let syn::Stmt::Local(local) = stmt {
                let mut names = Vec::new();
                bound_names(&local.pat, &mut names);
                if let Some(scope) = self.shadowed.last_mut() {
                    scope.extend(names);
                }
            }
        }
        self.shadowed.pop();
    }

    fn visit_expr_closure_mut(&mut self, closure: &mut syn::ExprClosure) {
        let inputs = closure.inputs.iter().cloned().collect::<Vec<_>>();
        self.scoped(&inputs, |this| this.visit_expr_mut(&mut closure.body));
    }

    fn visit_expr_for_loop_mut(&mut self, for_loop: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut for_loop.expr);
        let pat = (*for_loop.pat).clone();
        self.scoped([&pat], |this| this.visit_block_mut(&mut for_loop.body));
    }

    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        let pat = arm.pat.clone();
        self.scoped([&pat], |this| {
            if let Some((_, guard)) = &mut arm.guard {
                this.visit_expr_mut(guard);
            }
            this.visit_expr_mut(&mut arm.body);
        });
    }

    fn visit_expr_if_mut(&mut self, e: &mut syn::ExprIf) {
        self.visit_expr_mut(&mut e.cond);
        let mut pats = Vec::new();
        let_patterns(&e.cond, &mut pats);
        self.scoped(&pats, |this| this.visit_block_mut(&mut e.then_branch));
        if let Some((_, other)) = &mut e.else_branch {
            self.visit_expr_mut(other);
        }
    }

    fn visit_expr_while_mut(&mut self, e: &mut syn::ExprWhile) {
        self.visit_expr_mut(&mut e.cond);
        let mut pats = Vec::new();
        let_patterns(&e.cond, &mut pats);
        self.scoped(&pats, |this| this.visit_block_mut(&mut e.body));
    }
}

/// `( tokens )` with the span of the user's parentheses.
fn group(tokens: TokenStream, span: Span) -> TokenTree {
    let mut group = proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, tokens);
    group.set_span(span);
    TokenTree::Group(group)
}

/// `tokens` with every span set to `span` (groups included), so that the generated call's
/// `#[track_caller]` location and its diagnostics are at the user's `append`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{has, lacks};
    use quote::ToTokens;

    fn params_of(sig: &str) -> (Vec<(String, Mode)>, bool) {
        let f: syn::ItemFn = syn::parse_str(&format!("{sig} {{}}")).unwrap();
        let p = params(&f.sig);
        (p.names, p.explicit)
    }

    fn names(sig: &str) -> Vec<String> {
        params_of(sig).0.into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn explicit_history_parameters() {
        use Mode::*;
        assert_eq!(
            params_of("fn f(history: &mut History)"),
            (vec![("history".into(), Dispatch)], true)
        );
        assert_eq!(names("fn f(&mut self, h: &mut History, x: u8)"), ["h"]);
        assert_eq!(
            names("async fn f<'a, T>(t: T, mut h: &'a mut ::favur_context::History)"),
            ["h"]
        );
        assert_eq!(
            names(
                "fn f(a: &mut favur_context::History, b: &mut JournaledHistory, v: &mut Vec<u8>)"
            ),
            ["a", "b"]
        );
        assert_eq!(names("fn f(c: &mut CompactingHistory<S>)"), ["c"]);
    }

    #[test]
    fn otherwise_every_mut_parameter_and_self() {
        use Mode::*;
        assert_eq!(
            params_of("fn f(&mut self, h: &mut Hist, v: &mut Vec<String>)"),
            (
                vec![
                    ("self".into(), Forward),
                    ("h".into(), Dispatch),
                    ("v".into(), Dispatch)
                ],
                false
            )
        );
        assert_eq!(
            params_of(
                "fn f<H: Store>(h: &mut H, i: &mut impl Store, s: &mut Self, d: &mut dyn Store)"
            )
            .0,
            [
                ("h".into(), Forward),
                ("i".into(), Forward),
                ("s".into(), Forward),
                ("d".into(), Forward)
            ]
        );
        assert!(names("fn f(h: &History, n: History, (a, b): (u8, u8), s: &mut [u8])").is_empty());
        assert!(names("fn f(&self)").is_empty());
        assert!(names("fn f(self)").is_empty());
    }

    /// Rewrites `body` under `sig`, asserts `n` calls were rewritten and the output
    /// contains each of `needles`; returns the output.
    #[track_caller]
    fn rewrites(sig: &str, body: &str, n: usize, needles: &[&str]) -> String {
        let (out, rewritten) = rewritten(sig, body);
        assert_eq!(rewritten, n, "{out}");
        has(&out, needles);
        out
    }

    fn rewritten(sig: &str, body: &str) -> (String, usize) {
        let mut f: syn::ItemFn = syn::parse_str(&format!("{sig} {{ {body} }}")).unwrap();
        let p = params(&f.sig);
        let class = Class::from_name("fuzzy", Span::call_site()).unwrap();
        let n = rewrite(&mut f.block, &p, &class, &quote!(::favur_context));
        (f.block.to_token_stream().to_string(), n)
    }

    #[test]
    fn calls_on_concrete_histories_are_dispatched() {
        rewrites(
            "fn f(h: &mut History)",
            "h.append(\"x\"); h.pin(m); h.len();",
            2,
            &[
                ":: favur_context :: __private :: append (:: favur_context :: __private :: Fuzzy , h , \"x\")",
                "__private :: pin (:: favur_context :: __private :: Fuzzy , h , m)",
                "h . len ()",
            ],
        );
    }

    #[test]
    fn calls_on_opaque_receivers_forward_classified_content() {
        rewrites(
            "fn f(&mut self)",
            "self.append(t)?; (self).pin(\"p\")",
            2,
            &[
                "self . append (:: favur_context :: __private :: with_class (:: favur_context :: __private :: Fuzzy , t))",
            ],
        );
    }

    #[test]
    fn fields_of_a_history_parameter_forward() {
        let journal = "self . journal . append (:: favur_context :: __private :: with_class (:: favur_context :: __private :: Fuzzy , t))";
        let body =
            "self.journal.append(t)?; self.0.pin(p); s.inner.history.append(x); other.h.append(y);";
        let field = "s . inner . history . append (:: favur_context";
        let other = "other . h . append (y)";
        rewrites(
            "fn f(&mut self, s: &mut Session)",
            body,
            3,
            &[journal, field, other],
        );
    }

    #[test]
    fn what_is_not_rewritten() {
        let (out, n) = rewritten(
            "fn f(h: &mut History)",
            r#"
            other.append("a");
            h.append::<X>(y);
            h.append(a, b);
            format!("{}", h.append("in a macro"));
            fn nested(h: &mut History) { h.append("nested"); }
            let h = &mut local;
            h.append("shadowed");
            "#,
        );
        assert_eq!(n, 0, "{out}");
        lacks(&out, &["__private"]);
    }

    #[test]
    fn closures_blocks_and_scopes() {
        let (out, n) = rewritten(
            "fn f(h: &mut History)",
            r#"
            let mut add = |t: &str| h.append(t);
            { h.append("block"); }
            if let Some(h) = other { h.append("shadowed in if let"); } else { h.append("else"); }
            for h in list { h.append("shadowed in for"); }
            match x { h => h.append("shadowed in arm"), _ => h.append("arm") }
            h.append(h.append("nested argument"));
            let g = |h: &mut Vec<u8>| h.append(v);
            "#,
        );
        assert_eq!(n, 6, "{out}");
    }
}
