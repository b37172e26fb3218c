//! `#[retention(class)]` on a type, a function or method, or an `impl Tool for T` block.
//!
//! In four stages, as thiserror's derive: [`ast`] parses the arguments and the item,
//! [`valid`] decides what the item is and collects every problem, [`expand`] generates the
//! code, [`fallback`] emits the errors with the item (expanded with a stub class when it
//! can be) so the user gets no cascade of secondary errors. One [`Errors`] collects for
//! all stages and must be reported before it is dropped.

mod ast;
mod expand;
mod fallback;
mod valid;

use proc_macro2::TokenStream;

use crate::errors::Errors;

pub(super) const SUPPORTED: &str = "it applies to a struct or enum that converts into a `Message`, a function or method with a history parameter (`&mut History`, `&mut JournaledHistory`, `&mut self`...), or an `impl Tool for T` block";

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let ast::Input { class, krate, item } = ast::Input::parse(args, item, &mut errors);
    let mut item = match item {
        Ok(item) => item,
        Err(tokens) => return fallback::emit(errors, tokens, TokenStream::new()),
    };
    let target = valid::check(&mut item, &krate, &mut errors);
    let class = fallback::class(class, &errors);
    let (item, generated) = expand::generate(item, target, &class, &krate, &mut errors);
    fallback::emit(errors, item, generated)
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
