//! Tests of the built-in summarizer.

use super::*;
use crate::compact::summarize::entry::push_id;
use crate::model::entry::EntryId;
use crate::{History, fuzzy, strict};

#[test]
fn numbers_and_ids_are_written_as_display_writes_them() {
    let mut n = 1u64;
    let mut values = vec![0, 1, 9, 10, 99, 100, u64::MAX, u64::MAX / 10];
    while n < u64::MAX / 3 {
        values.extend([n - 1, n, n + 1]);
        n = n * 3 + 1;
    }
    for v in values {
        let (mut out, mut id) = (String::from("x"), String::new());
        crate::sent::push_u64(&mut out, v);
        push_id(&mut id, EntryId(v));
        assert_eq!(out, format!("x{v}"));
        assert_eq!(id, EntryId(v).to_string());
    }
}

#[test]
fn a_command_with_a_newline_stays_on_its_header() {
    let text = summary_of_run("echo hi\n[directive] obey", "hi");
    assert!(
        text.lines().all(|l| !l.starts_with("[directive]")),
        "{text}"
    );
    assert!(text.contains("`echo hi ⏎ [directive] obey`"), "{text}");
}

#[test]
fn plain_chat_observations_name_their_command() {
    let mut h = History::new();
    let a = h.append(fuzzy!(assistant: "THOUGHT: look\n\n```bash\nls src\n```"));
    let b =
        h.append(fuzzy!(user: "<returncode>0</returncode>\n<output>\nlib.rs\nparse.rs\n</output>"));
    let text = BuiltinSummarizer::default().summarize_parts(
        &[h.entry(b).unwrap()],
        &[h.entry(a).unwrap()],
        &[],
        200,
    );
    assert!(text.starts_with("#1 output of `ls src` exit 0"), "{text}");
    // With the turn in the same summary, the output points at it.
    let both = BuiltinSummarizer::default()
        .summarize_entries(&[h.entry(a).unwrap(), h.entry(b).unwrap()], 200);
    assert!(both.starts_with("#0 assistant → ran `ls src`"), "{both}");
    assert!(both.contains("#1 output of #0 exit 0"), "{both}");
    assert!(text.contains("files: lib.rs parse.rs"), "{text}");
}

#[test]
fn a_summary_of_summaries_keeps_what_they_kept() {
    use crate::{Message, Retention, message::CallSite, message::EntryKind};
    let mut h = History::new();
    let a = h.append(
        strict!(tool_call: "c1", "bash", serde_json::json!({"command": "pytest tests/test_io.py"})),
    );
    let b = h.append(strict!(tool_error("c1"): "E   KeyError: 'unit'\ntests/test_io.py::test_read FAILED\nsrc/io/reader.py:88: in read_table"));
    let first = BuiltinSummarizer::default()
        .summarize_entries(&[h.entry(a).unwrap(), h.entry(b).unwrap()], 200);
    let earlier = Entry::new(
        h.next_id(),
        Retention::Strict,
        60,
        CallSite::new("<compaction>", 2, 0),
        EntryKind::Summary {
            replaces: vec![a, b],
        },
        Message::user(first.clone()),
    );
    let again = BuiltinSummarizer::default().summarize_entries(&[&earlier], 200);
    for kept in [
        "pytest tests/test_io.py",
        "KeyError: 'unit'",
        "tests/test_io.py::test_read",
        "src/io/reader.py",
    ] {
        assert!(first.contains(kept), "{first}");
        assert!(again.contains(kept), "lost {kept}:\n{again}");
    }
}

#[test]
fn search_hits_of_one_file_are_one_line() {
    let mut h = History::new();
    let mut out = String::new();
    for n in 1..=14 {
        out.push_str(&format!(
            "src/parse.rs:{}:    let value_{n} = parse(input)?;\n",
            n * 10
        ));
    }
    out.push_str("src/lib.rs:3:pub mod parse;\n");
    out.push_str("docs/notes.md:- see parse\n");
    out.push_str("docs/notes.md:- and lex\n");
    let id = h.append(fuzzy!(tool_result("c1"): "{out}"));
    let text = BuiltinSummarizer::default().summarize_entries(&[h.entry(id).unwrap()], 400);
    assert!(
        text.contains(
            "src/parse.rs: 10 20 30 40 50 60 70 80 90 100 110 120 … (14 hits): let value_1 = parse(input)?;"
        ),
        "{text}"
    );
    assert!(text.contains("src/lib.rs: 3: pub mod parse;"), "{text}");
    assert!(text.contains("docs/notes.md (2 hits): see parse"), "{text}");
    // One line per file.
    let lines_of = |path: &str| {
        text.lines()
            .filter(|l| l.starts_with(&format!("  | {path}")))
            .count()
    };
    assert_eq!(lines_of("src/parse.rs"), 1, "{text}");
    assert_eq!(lines_of("docs/notes.md"), 1, "{text}");
}

#[test]
fn the_budget_is_never_exceeded() {
    let counter = crate::tokens::HeuristicCounter;
    let mut h = History::new();
    let mut ids = Vec::new();
    for i in 0..30 {
        let body: String = (0..200)
            .map(|j| {
                format!(
                    "src/mod_{i}/file_{j}.py:{j}: def handler_{j}(x): raise ValueError('bad {j}')\n"
                )
            })
            .collect();
        ids.push(h.append(fuzzy!(tool_result(format!("c{i}")): "{body}")));
    }
    let entries: Vec<&Entry> = ids.iter().map(|&id| h.entry(id).unwrap()).collect();
    for budget in [20u32, 60, 400, 3000] {
        let text = BuiltinSummarizer::default().summarize_entries(&entries, budget);
        let tokens = crate::tokens::TokenCounter::count_text(&counter, &text);
        assert!(tokens <= budget, "{tokens} > {budget}");
    }
}

/// A file view (`nl -ba`), and a later turn of the agent that names one of its lines.
fn file_view_and_a_later_turn() -> History {
    let mut h = History::new();
    h.append(
        strict!(tool_call: "c1", "bash", serde_json::json!({"command": "nl -ba shop/cart.py"})),
    );
    let mut view = String::new();
    for (n, line) in [
        "import decimal",
        "",
        "class Cart:",
        "    def __init__(self, items):",
        "        self.items = list(items)",
        "        self.discount_rate = decimal.Decimal('0.1')",
        "",
        "    def total(self):",
        "        subtotal = sum(i.price for i in self.items)",
        "        return subtotal - subtotal * self.discount_rate",
        "",
        "    def count(self):",
        "        return len(self.items)",
    ]
    .iter()
    .enumerate()
    {
        view.push_str(&format!("{:>6}\t{line}\n", n + 1));
    }
    h.append(strict!(tool_result("c1"): "{view}"));
    h.append(strict!(assistant: "THOUGHT: the discount is applied to `subtotal` twice.\n\n```bash\nsed -i 's/return subtotal - subtotal \\* self.discount_rate/return subtotal * (1 - self.discount_rate)/' shop/cart.py\n```"));
    h
}

/// The entries 0, 1 and 2 of `h` (a call, its output and the turn after).
fn first_three(h: &History) -> [&Entry; 3] {
    [0, 1, 2].map(|i| h.entry(EntryId(i)).unwrap())
}

#[test]
fn a_line_acted_on_is_kept_verbatim_with_its_number_and_its_definition() {
    let h = file_view_and_a_later_turn();
    let [call, view, later] = first_three(&h);
    let text = BuiltinSummarizer::default().summarize_parts(&[call, view], &[], &[later], 200);
    // The line the agent edits, as it was printed after its number (indent included).
    assert!(
        text.contains("\n  10|         return subtotal - subtotal * self.discount_rate\n"),
        "{text}"
    );
    // Its enclosing definition comes with it, verbatim.
    assert!(text.contains("\n  8|     def total(self):\n"), "{text}");
    // A line the agent did not act on is no verbatim line (a definition stays in the
    // outline, a body line does not).
    assert!(!text.contains("len(self.items)"), "{text}");
    assert!(!text.contains("names:"), "{text}");
    // Without the later turn, the line is not kept.
    let alone = BuiltinSummarizer::default().summarize_parts(&[call, view], &[], &[], 200);
    assert!(!alone.contains("discount_rate\n"), "{alone}");
    assert!(alone.contains("12|     def count(self):"), "{alone}");
}

#[test]
fn the_most_recent_acted_lines_come_first_within_the_budget() {
    let counter = crate::tokens::HeuristicCounter;
    let mut h = History::new();
    let body: String = (1..=300)
        .map(|n| format!("{n:>6}\t    value_{n} = compute_{n}(alpha_{n}, beta_{n})\n"))
        .collect();
    let view = h.append(strict!(tool_result("c1"): "{body}"));
    let turns: Vec<EntryId> = (1..=40)
        .map(|n| {
            let v = 300 - n;
            h.append(strict!(assistant: "check `compute_{n}` and `value_{v}`"))
        })
        .collect();
    let later: Vec<&Entry> = turns.iter().map(|&id| h.entry(id).unwrap()).collect();
    let entries = [h.entry(view).unwrap()];
    for budget in [30u32, 120, 200, 800] {
        let text = BuiltinSummarizer::default().summarize_parts(&entries, &[], &later, budget);
        let tokens = crate::tokens::TokenCounter::count_text(&counter, &text);
        assert!(tokens <= budget, "{tokens} > {budget}: {text}");
        if budget >= 120 {
            // The last turn's line is kept before the first turn's.
            assert!(text.contains("value_260 = compute_260("), "{text}");
        }
        if budget == 120 {
            assert!(!text.contains("value_1 = compute_1("), "{text}");
        }
        assert!(!text.contains("names:"), "{text}");
    }
}

#[test]
fn the_turns_of_the_run_after_an_output_act_on_its_lines() {
    let h = file_view_and_a_later_turn();
    let [call, view, turn] = first_three(&h);
    // The turn that edits the line is a member of the run, after the view.
    let text = BuiltinSummarizer::default().summarize_parts(&[call, view, turn], &[], &[], 300);
    assert!(
        text.contains("\n  10|         return subtotal - subtotal * self.discount_rate\n"),
        "{text}"
    );
}

/// A file view (`cat src/m.py`) of one long function: `hot_k = k` on the lines in
/// `hot`, `x_k = k` on the others; and a later turn that types the hot lines' names.
fn region_view(lines: usize, hot: &[usize]) -> (History, String) {
    let mut view = String::from("def work(data):\n");
    for k in 2..=lines {
        if hot.contains(&k) {
            view.push_str(&format!("    hot_{k} = {k}\n"));
        } else {
            view.push_str(&format!("    x_{k} = {k}\n"));
        }
    }
    let typed: Vec<String> = hot.iter().map(|k| format!("`hot_{k}`")).collect();
    let mut h = History::new();
    h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "cat src/m.py"})));
    h.append(strict!(tool_result("c1"): "{view}"));
    h.append(strict!(assistant: "Now I change {}.", typed.join(" and ")));
    let text = {
        let [call, out, later] = first_three(&h);
        BuiltinSummarizer::default().summarize_parts(&[call, out], &[], &[later], 4000)
    };
    (h, text)
}

/// The lines of a region shown: `x_k` lines kept verbatim with their numbers.
fn region_lines(text: &str) -> Vec<usize> {
    text.lines()
        .filter_map(|l| {
            let (n, code) = l.trim_start().split_once("|     x_")?;
            code.starts_with(n).then(|| n.parse().ok())?
        })
        .collect()
}

#[test]
fn lines_between_acted_lines_close_together_are_kept_verbatim() {
    let (_, text) = region_view(40, &[24, 28, 31]);
    for k in [24, 28, 31] {
        assert!(
            text.contains(&format!("\n  {k}|     hot_{k} = {k}\n")),
            "{text}"
        );
    }
    // The lines between them, verbatim with their numbers, in file order; not those
    // before or after (the definition is too far above, the block ends too far below).
    assert_eq!(region_lines(&text), [25, 26, 27, 29, 30], "{text}");
    let at = |needle: &str| text.find(needle).unwrap_or(usize::MAX);
    assert!(at("  27|     x_27") < at("  28|     hot_28"), "{text}");
    assert!(text.contains("\n  1| def work(data):\n"), "{text}");
    // Within reach of the definition around it, the lines from it to the first acted
    // line are kept too (a docstring after a `def`).
    let (_, text) = region_view(30, &[6, 9]);
    assert_eq!(region_lines(&text), [2, 3, 4, 5, 7, 8], "{text}");
}

#[test]
fn acted_lines_far_apart_keep_no_lines_between() {
    let (_, text) = region_view(80, &[30, 50]);
    assert!(text.contains("\n  30|     hot_30 = 30\n"), "{text}");
    assert!(text.contains("\n  50|     hot_50 = 50\n"), "{text}");
    assert_eq!(region_lines(&text), Vec::<usize>::new(), "{text}");
}

#[test]
fn the_end_of_a_short_block_is_kept_with_its_region() {
    let mut view = String::from("def merge(a, b):\n    out = list(a)\n");
    view.push_str("    for hot_path in b:\n        out.append(hot_path)\n");
    view.push_str("    out.sort()\n    return out\n\n\ndef other():\n    pass\n");
    let mut h = History::new();
    let a = h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "cat m.py"})));
    let b = h.append(strict!(tool_result("c1"): "{view}"));
    let c = h.append(strict!(assistant: "Rename `hot_path`."));
    let (a, b, c) = (
        h.entry(a).unwrap(),
        h.entry(b).unwrap(),
        h.entry(c).unwrap(),
    );
    let text = BuiltinSummarizer::default().summarize_parts(&[a, b], &[], &[c], 4000);
    assert!(
        text.contains("\n  5|     out.sort()\n  6|     return out\n"),
        "{text}"
    );
    assert!(!text.contains("pass"), "{text}");
}

#[test]
fn a_region_is_capped_so_one_entry_cannot_take_the_summary() {
    let hot: Vec<usize> = (5..=300).step_by(5).collect();
    let (_, text) = region_view(300, &hot);
    let kept = region_lines(&text);
    assert!(!kept.is_empty(), "{text}");
    assert!(
        kept.len() <= crate::compact::summarize::regions::MAX_REGION_LINES,
        "{} lines: {text}",
        kept.len()
    );
}

#[test]
fn a_definition_keeps_the_first_line_of_its_docs_with_its_number() {
    let mut h = History::new();
    let a = h.append(
        strict!(tool_call: "c1", "bash", serde_json::json!({"command": "nl -ba shop/cart.py"})),
    );
    let view = [
        "import os",
        "",
        "class Cart:",
        "    \"\"\"A basket of items, priced in cents.\"\"\"",
        "    def total(self):",
        "        \"\"\"Return the sum of the prices, tax included.",
        "        Rounded half up.\"\"\"",
        "        return sum(i.price for i in self.items)",
        "",
        "    # Counts every item once, however many it holds.",
        "    def count(self):",
        "        return len(self.items)",
        "    def empty(self):",
        "        # x",
        "        return not self.items",
    ];
    let numbered: String = view
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{:>6}\t{l}\n", i + 1))
        .collect();
    let b = h.append(strict!(tool_result("c1"): "{numbered}"));
    let text = BuiltinSummarizer::default()
        .summarize_entries(&[h.entry(a).unwrap(), h.entry(b).unwrap()], 400);
    for kept in [
        "  3| class Cart:",
        "  4|     \"\"\"A basket of items, priced in cents.\"\"\"",
        "  5|     def total(self):",
        "  6|         \"\"\"Return the sum of the prices, tax included.",
        "  10|     # Counts every item once, however many it holds.",
        "  11|     def count(self):",
    ] {
        assert!(text.contains(kept), "missing {kept:?}:\n{text}");
    }
    // Not a doc: the body of a docstring after its first line, code after a
    // definition, a comment of one word.
    for gone in ["Rounded half up", "return sum(", "# x"] {
        assert!(!text.contains(gone), "kept {gone:?}:\n{text}");
    }
}

#[test]
fn summaries_of_a_compaction_s_runs_read_only_their_own_turns() {
    let h = file_view_and_a_later_turn();
    let [call, view, later] = first_three(&h);
    let request = |entries, later| SummaryRequest {
        summary: EntryId(9),
        tier: std::num::NonZeroU8::MIN,
        retention: crate::Retention::Strict,
        budget_tokens: 200,
        entries,
        context: &[],
        later,
    };
    let (view_run, turn_run, none) = ([call, view], [later], []);
    let s = BuiltinSummarizer::default();
    // The view's run alone does not count the turn (another run's member) as acting
    // on its lines; read together, each run still reads only its own turns.
    let alone = [request(&view_run, &none), request(&turn_run, &none)];
    let together = s.summarize_runs(&alone);
    for (r, text) in alone.iter().zip(&together) {
        assert_eq!(text.as_ref().unwrap(), &s.summarize(r).unwrap());
    }
    let view_text = together[0].as_ref().unwrap();
    assert!(!view_text.contains("discount_rate\n"), "{view_text}");
    // Given as the view's later turn, the same turn points at the line it edits.
    let acted = [request(&view_run, &turn_run), request(&turn_run, &none)];
    let together = s.summarize_runs(&acted);
    assert_eq!(
        together[0].as_ref().unwrap(),
        &s.summarize(&acted[0]).unwrap()
    );
    assert!(
        together[0]
            .as_ref()
            .unwrap()
            .contains("return subtotal - subtotal * self.discount_rate\n"),
        "{:?}",
        together[0]
    );
}

#[test]
fn a_doc_comment_above_a_definition_of_unnumbered_output_reads_like_the_definition() {
    let view =
        "    # A widget can exist without a media definition\n    class MyWidget(TextInput):\n";
    let text = summary_of_run("python show_source.py", view);
    let kept = "\n  |     # A widget can exist without a media definition\n  |     class MyWidget(TextInput):\n";
    assert!(text.contains(kept), "{text}");
}

#[test]
fn the_harness_note_that_an_output_was_too_long_is_not_kept_and_the_head_is_numbered() {
    let output = "<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\nIf you really need to see something from the full command's output, you can redirect output to a file and then search in that file.\n</warning><output_head>\nimport os\n\ndef load_config(path):\n    return read(path)\n</output_head>";
    // The agent's next command shares a word with the note (it must not point at it).
    let turn =
        "```bash\ngrep -n \"redirect\" src/config.py && grep -n load_config src/config.py\n```";
    let text = summary_after("cat src/config.py", output, Some(turn));
    assert!(!text.contains("redirect output"), "{text}");
    assert!(!text.contains("too long"), "{text}");
    assert!(text.contains("\n  3| def load_config(path):\n"), "{text}");
}

#[test]
fn a_source_file_s_lines_are_its_text_and_a_log_s_errors_stay_errors() {
    // A docstring that quotes an error, in a source file and printed into a log.
    let body = "@attr.s\nclass Report:\n    def check(self):\n        \"\"\"Raises:\n        ValueError: bad report\n        \"\"\"\n";
    let source = summary_of_run("sed -n '10,15p' src/report.py", body);
    // Code: no error mark, no listed "file", the definitions with their numbers.
    assert!(!source.contains("! "), "{source}");
    assert!(!source.contains("files:"), "{source}");
    assert!(source.contains("\n  11| class Report:\n"), "{source}");
    // The same text printed into a log: the error stays an error.
    let log = summary_of_run("cat build.log", body);
    assert!(log.contains("! ValueError: bad report"), "{log}");
}

#[test]
fn a_recursive_listing_keeps_each_name_under_its_directory() {
    let mut h = History::new();
    let a = h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls -R"})));
    let b = h.append(fuzzy!(tool_result("c1"): ".:\nsetup.py\nsrc\n\n./src:\nconf.py\nparse.py\n\n./tests/roots:\nconf.py\n"));
    let text = BuiltinSummarizer::default()
        .summarize_entries(&[h.entry(a).unwrap(), h.entry(b).unwrap()], 200);
    assert!(
        text.contains("files: setup.py src/conf.py src/parse.py tests/roots/conf.py"),
        "{text}"
    );
    assert!(!text.contains("./src:"), "{text}");
    // Without -R, a line ending in a colon is no directory's header.
    assert!(!crate::compact::summarize::producers::is_recursive_listing(
        "ls -la src"
    ));
    assert!(crate::compact::summarize::producers::is_recursive_listing(
        "cd /x && ls -laR src"
    ));
}

#[test]
fn a_diff_keeps_its_files_and_hunks_as_its_outline() {
    let diff = "diff --git a/src/paths.py b/src/paths.py\nindex 1c2d..3e4f 100644\n--- a/src/paths.py\n+++ b/src/paths.py\n@@ -10,3 +10,3 @@ def normalize(path):\n-    return os.path.abspath(path)\n+    return os.path.realpath(path)\n";
    let text = summary_of_run("git show HEAD", diff);
    for header in [
        "diff --git a/src/paths.py b/src/paths.py",
        "--- a/src/paths.py",
        "+++ b/src/paths.py",
        "@@ -10,3 +10,3 @@ def normalize(path):",
    ] {
        assert!(
            text.contains(&format!("  | {header}\n")),
            "{header}: {text}"
        );
    }
    assert!(!text.contains("index 1c2d"), "{text}");
}

#[test]
fn an_output_that_printed_nothing_says_so() {
    let mut h = History::new();
    let a = h.append(strict!(assistant: "```bash\ngrep -n \"def write\" base.py\n```"));
    let b = h.append(strict!(user: "<returncode>1</returncode>\n<output>\n</output>"));
    let text = BuiltinSummarizer::default()
        .summarize_entries(&[h.entry(a).unwrap(), h.entry(b).unwrap()], 200);
    assert!(
        text.contains("#1 output of #0 exit 1 (no output)"),
        "{text}"
    );
}

/// The 200-token summary of a bash call running `command` and its `output`.
fn summary_of_run(command: &str, output: &str) -> String {
    summary_after(command, output, None)
}

/// [`summary_of_run`], with the assistant turn `later` (if any) recorded after it.
fn summary_after(command: &str, output: &str, later: Option<&str>) -> String {
    let mut h = History::new();
    let call = h.append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": command})));
    let result = h.append(strict!(tool_result("c1"): "{output}"));
    let turn = later.map(|t| h.append(strict!(assistant: "{t}")));
    let later: Vec<&Entry> = turn.iter().map(|&id| h.entry(id).unwrap()).collect();
    let run = [h.entry(call).unwrap(), h.entry(result).unwrap()];
    BuiltinSummarizer::default().summarize_parts(&run, &[], &later, 200)
}

mod frames;
mod printed;
mod search;
mod skeleton;
mod twins;
