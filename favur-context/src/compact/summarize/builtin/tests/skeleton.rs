//! A file view's skeleton: its outermost definitions first, a doc line only with its
//! definition, nesting shown by indent; a source file read as text past an elision.

use super::*;

/// A file of `classes` classes of `methods` methods each (each with a docstring, shorter
/// than its signature), then `functions` top-level functions.
fn module(classes: usize, methods: usize, functions: usize) -> String {
    let mut out = String::new();
    for c in 0..classes {
        out.push_str(&format!(
            "class Widget{c}:\n    \"\"\"Widget number {c}.\"\"\"\n\n"
        ));
        for m in 0..methods {
            out.push_str(&format!(
                "    def method_{c}_{m}(self, value, scale=1.0, offset=0.0, clamp=None, strict=False):\n        \"\"\"Method {m}.\"\"\"\n        return value + {m}\n\n"
            ));
        }
    }
    for f in 0..functions {
        out.push_str(&format!("def helper_{f}(x):\n    return x * {f}\n\n"));
    }
    out
}

/// Fails unless `text` holds `needle`.
#[track_caller]
fn has(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
}

/// Fails if `text` holds `needle`.
#[track_caller]
fn lacks(text: &str, needle: &str) {
    assert!(!text.contains(needle), "{needle:?} found in:\n{text}");
}

/// The summary of `cat src/widgets.py` printing `output`, at `budget` tokens.
fn view(output: &str, budget: u32) -> String {
    let mut h = History::new();
    let call = h.append(
        strict!(tool_call: "c1", "bash", serde_json::json!({"command": "cat src/widgets.py"})),
    );
    let result = h.append(strict!(tool_result("c1"): "{output}"));
    let run = [h.entry(call).unwrap(), h.entry(result).unwrap()];
    BuiltinSummarizer::default().summarize_parts(&run, &[], &[], budget)
}

#[test]
fn a_skeleton_cut_by_its_budget_covers_the_whole_file_before_the_methods() {
    let text = view(&module(3, 12, 4), 200);
    // Every class and every top-level function of the file, with its line number...
    for name in ["class Widget0:", "class Widget1:", "class Widget2:"] {
        has(&text, name);
    }
    for f in 0..4 {
        has(&text, &format!("| def helper_{f}(x):"));
    }
    // ...though the budget does not reach the methods of the last class.
    lacks(&text, "method_2_11");
    // In the file's order, each line with its number.
    let at = |s: &str| text.find(s).unwrap();
    assert!(at("class Widget0:") < at("class Widget1:"));
    assert!(at("class Widget2:") < at("def helper_0(x):"));
    has(&text, "\n  1| class Widget0:\n");
}

#[test]
fn a_doc_line_is_kept_only_with_its_definition() {
    // Ten functions without docs, then a class whose later methods have docs: the
    // first docs offered belong to methods that come late in the skeleton.
    let mut file: String = (0..10)
        .map(|f| format!("def helper_{f}(x):\n    return x * {f}\n\n"))
        .collect();
    file.push_str("class Widget:\n");
    for m in 0..20 {
        file.push_str(&format!(
            "    def method_{m}(self, value, scale=1.0, offset=0.0):\n"
        ));
        if m >= 6 {
            file.push_str(&format!("        \"\"\"Method {m}.\"\"\"\n"));
        }
        file.push_str("        return value\n\n");
    }
    let mut docs = 0;
    for budget in (100..500).step_by(5) {
        let text = view(&file, budget);
        for line in text.lines() {
            // `Method m.` only if `def method_m` is kept too.
            if let Some(rest) = line.split("\"\"\"Method ").nth(1) {
                let m = rest.split('.').next().unwrap();
                docs += 1;
                has(&text, &format!("def method_{m}("));
            }
        }
    }
    assert!(docs > 0);
}

/// `output` as mini-swe-agent shows a long one: its head numbered, an elision, its tail.
fn elided(head: &str, tail: &str) -> String {
    format!(
        "<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\n</warning><output_head>\n{head}</output_head>\n<elided_chars>\n2000 characters elided\n</elided_chars>\n<output_tail>\n{tail}</output_tail>"
    )
}

#[test]
fn past_an_elision_a_source_file_is_still_its_text_and_keeps_its_indent() {
    let head = "import os\n\n\nclass Report:\n    def check(self):\n        pass\n";
    let tail = "        else:\n            outcome = \"failed\"\n            raise ValueError(\"bad report\")\n\n\nclass CollectReport(Report):\n    def location(self):\n        return self.path\n";
    let text = view(&elided(head, tail), 200);
    // Code, not errors or outcomes.
    lacks(&text, "! ");
    // The head numbered, the tail (whose numbers are unknown) with its indent.
    has(&text, "\n  4| class Report:\n");
    has(&text, "\n  | class CollectReport(Report):\n");
    has(&text, "\n  |     def location(self):\n");
}

#[test]
fn what_the_command_says_of_its_own_stays_an_error() {
    // GNU head's message for a directory.
    let text = summary_of_run(
        "head -n 40 src/report.py",
        "head: error reading 'src/report.py': Is a directory",
    );
    has(
        &text,
        "! head: error reading 'src/report.py': Is a directory",
    );
}

#[test]
fn a_file_numbered_by_the_command_that_prints_it_is_read_as_source() {
    let numbered = "    10\tclass Report:\n    11\t    def check(self):\n    12\t        raise ValueError(\"bad report\")\n    13\t        return FAILED\n";
    for command in [
        "nl -ba src/report.py | sed -n '10,13p'",
        "cat -n src/report.py | head -n 13",
        "cd /testbed && nl src/report.py",
    ] {
        let text = summary_of_run(command, numbered);
        lacks(&text, "! ");
        has(&text, "\n  10| class Report:\n");
    }
    // Numbered lines of a log, or of a search, stay what they say.
    for command in ["nl -ba build.log", "grep -n raise src/report.py"] {
        let text = summary_of_run(command, numbered);
        has(&text, "! ");
    }
}
