//! The first lines of a short output that no other rule keeps (a script's printed
//! result) are its lead lines; a long output's are not kept.

use super::*;

/// Fails unless `text` holds `needle`.
#[track_caller]
fn holds(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
}

#[test]
fn a_short_output_keeps_what_it_printed() {
    let output = "<returncode>0</returncode>\n<output>\nBase link: base_ptr, pk: True\n  children: 3\n</output>";
    let text = summary_of_run("python3 check_link.py", output);
    holds(&text, "\n  | Base link: base_ptr, pk: True\n");
    // As printed, with its indent.
    holds(&text, "\n  |   children: 3\n");
}

#[test]
fn a_long_output_keeps_none_of_its_plain_lines() {
    let lines = |n: usize| -> String {
        (0..n)
            .map(|i| format!("value {i} of the sweep\n"))
            .collect()
    };
    let text = summary_of_run("python3 sweep.py", &lines(20));
    assert!(!text.contains("of the sweep"), "{text}");
    // Nine lines is past the limit; of eight, the first two (the lead lines).
    assert!(!summary_of_run("python3 sweep.py", &lines(9)).contains("of the sweep"));
    let eight = summary_of_run("python3 sweep.py", &lines(8));
    holds(
        &eight,
        "\n  | value 0 of the sweep\n  | value 1 of the sweep\n",
    );
    assert!(!eight.contains("value 2"), "{eight}");
}

#[test]
fn the_first_line_of_a_short_output_is_a_lead_line() {
    // A lead line comes before a file view's definitions: wherever a definition is
    // kept, so is the script's result (the shorter line).
    let mut h = History::new();
    let view: String = (0..12)
        .map(|i| format!("def f{i}(x):\n    return x\n"))
        .collect();
    let a = h
        .append(strict!(tool_call: "c1", "bash", serde_json::json!({"command": "python3 run.py"})));
    let b = h.append(strict!(tool_result("c1"): "result: 42\nelapsed: 3 s\n"));
    let c =
        h.append(strict!(tool_call: "c2", "bash", serde_json::json!({"command": "cat src/fs.py"})));
    let d = h.append(strict!(tool_result("c2"): "{view}"));
    let run: Vec<&Entry> = [a, b, c, d]
        .iter()
        .map(|&id| h.entry(id).unwrap())
        .collect();
    let mut defs = 0;
    for budget in (40..200).step_by(2) {
        let text = BuiltinSummarizer::default().summarize_parts(&run, &[], &[], budget);
        if text.contains("| def f") {
            defs += 1;
            holds(&text, "\n  | result: 42\n");
        }
    }
    assert!(defs > 0);
}

#[test]
fn a_passing_test_run_keeps_its_total() {
    let out = "<returncode>0</returncode>\n<output>\n============================= test session starts ==============================\nplatform linux -- Python 3.9.20, pytest-7.2.0, pluggy-0.13.1\nrootdir: /testbed, configfile: pytest.ini\ncollected 1 item\n\ntest_single.py .                                           [100%]\n\n============================== 1 passed in 0.01s ===============================\n</output>";
    let text = summary_of_run("pytest test_single.py", out);
    // Without its banner.
    holds(&text, "\n  ! 1 passed in 0.01s\n");
}
