//! A line of a file is kept once per summary: two views of the same file (the same
//! supersession key) that both show line 12 as it is show it under one of them; views
//! of other files, and lines that changed, are kept as they are.

use super::*;

/// A run of `sed -n '10,19p'` views, one per key, each printing `body(view)`.
fn views(keys: &[Option<&str>], body: impl Fn(usize) -> String) -> (History, Vec<EntryId>) {
    let mut h = History::new();
    let mut ids = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let call = format!("c{i}");
        let command = format!("sed -n '10,19p' {}", key.unwrap_or("x.py"));
        ids.push(
            h.append(strict!(tool_call: &call, "bash", serde_json::json!({"command": command}))),
        );
        let result = strict!(tool_result(&call): "{}", body(i));
        ids.push(h.append(match key {
            Some(k) => result.with_key(*k),
            None => result,
        }));
    }
    (h, ids)
}

fn lines(first: usize, changed: Option<usize>) -> String {
    (first..first + 10)
        .map(|n| match changed {
            Some(c) if c == n => format!("def total_v2(rows, extra={n}):\n"),
            _ => format!("def value_{n}(rows):\n"),
        })
        .collect()
}

fn summary(h: &History, ids: &[EntryId]) -> String {
    let run: Vec<&Entry> = ids.iter().map(|&id| h.entry(id).unwrap()).collect();
    BuiltinSummarizer::default().summarize_parts(&run, &[], &[], 2_000)
}

#[test]
fn a_line_two_views_of_one_file_show_is_kept_once() {
    // The second view changed line 15.
    let (h, ids) = views(&[Some("a.py"), Some("a.py")], |v| {
        lines(10, (v == 1).then_some(15))
    });
    let text = summary(&h, &ids);
    let same = "12| def value_12(rows):";
    assert_eq!(text.matches(same).count(), 1, "{text}");
    // Both versions of the line that changed are kept.
    assert!(text.contains("15| def value_15(rows):"), "{text}");
    assert!(text.contains("15| def total_v2(rows, extra=15):"), "{text}");
}

#[test]
fn views_of_other_files_or_without_a_key_keep_their_lines() {
    for keys in [[Some("a.py"), Some("b.py")], [None, None]] {
        let (h, ids) = views(&keys, |_| lines(10, None));
        let text = summary(&h, &ids);
        let same = "12| def value_12(rows):";
        assert_eq!(text.matches(same).count(), 2, "{keys:?}: {text}");
    }
}

#[test]
fn a_view_with_nothing_new_says_where_its_lines_are() {
    // Two views of lines 10 to 19, then one of lines 10 and 11, which the first two
    // already show.
    let (mut h, mut ids) = views(&[Some("a.py"), Some("a.py")], |_| lines(10, None));
    let command = serde_json::json!({"command": "sed -n '10,11p' a.py"});
    ids.push(h.append(strict!(tool_call: "c9", "bash", command)));
    let part = lines(10, None)
        .lines()
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    ids.push(h.append(strict!(tool_result("c9"): "{part}").with_key("a.py")));
    let text = summary(&h, &ids);
    assert!(
        text.contains("#5 bash result of #4 (2 lines)\n  (its lines as shown under #1)\n"),
        "{text}"
    );
    assert_eq!(
        text.matches("| def value_1").count(),
        10,
        "each line once: {text}"
    );
    // A view that kept a line of its own says nothing more.
    let (h, ids) = views(&[Some("a.py"), Some("a.py")], |_| lines(10, None));
    assert!(!summary(&h, &ids).contains("as shown under"));
}
