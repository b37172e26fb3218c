use super::{Span, candidates, quoted};

#[test]
fn a_span_is_found_only_whole() {
    let s = Span::new("return self._media_order", 3);
    assert!(s.found_in("x = return self._media_order()"));
    assert!(!s.found_in("return self._media"));
}

#[test]
fn quoted_strings_are_read_with_their_escapes_and_apostrophes_are_not_quotes() {
    let q = quoted(r#"sed -i 's/old_name(x)/new_name(x)/' a.py; don't "say \"hi\" now""#);
    assert_eq!(q, ["s/old_name(x)/new_name(x)/", r#"say \"hi\" now"#]);
}

#[test]
fn candidates_are_quoted_text_and_the_lines_of_commands_and_heredocs() {
    let cmds = ["cat <<'EOF' > fix.py\n    return self._media_order\nx = 1\nEOF".to_owned()];
    let c = candidates("I will replace 'the old media order'.", &cmds);
    assert_eq!(
        c,
        [
            "the old media order",
            "cat <<'EOF' > fix.py",
            "return self._media_order"
        ]
    );
}
