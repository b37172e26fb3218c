//! The `favur-context` binary itself: exit codes, standard output and errors, the dump
//! and the chart files.

use std::process::Command;

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("favur-bin-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const TRANSCRIPT: &str = r#"{"instance_id": "demo", "format": "mini-swe-agent-1", "messages": [
  {"role": "system", "content": "You are a coding agent."},
  {"role": "user", "content": "Fix the parser."},
  {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls src\n```"},
  {"role": "user", "content": "<returncode>0</returncode>\n<output>\nsrc/parser.rs\n</output>"},
  {"role": "assistant", "content": "THOUGHT: open it\n\n```bash\ncat src/parser.rs\n```"},
  {"role": "user", "content": "<returncode>0</returncode>\n<output>\nfn parse_expr() {}\n</output>"},
  {"role": "assistant", "content": "THOUGHT: fix parse_expr\n\n```bash\necho done\n```"}
]}"#;

#[test]
fn replay_prints_the_report_and_writes_dump_and_chart() {
    let d = dir("ok");
    let t = d.join("t.json");
    std::fs::write(&t, TRANSCRIPT).unwrap();
    let rules = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../rules/coding-agent-shell.toml"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_favur-context"))
        .arg("replay")
        .arg(&t)
        .args([
            "--rules", rules, "--policy", "default", "--window", "200000",
        ])
        .arg("--dump")
        .arg(d.join("dump.jsonl"))
        .arg("--svg")
        .arg(d.join("chart.svg"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("| demo | policy | 3 |"), "{stdout}");
    assert!(stdout.contains("| **TOTAL** | mask-old |"), "{stdout}");
    // Both references (src/parser.rs, parse_expr) survive in a window this size.
    assert!(stdout.contains("100.0% (2/2)"), "{stdout}");
    let dump = std::fs::read_to_string(d.join("dump.jsonl")).unwrap();
    assert_eq!(dump.lines().count(), 3);
    assert!(
        dump.starts_with(r#"{"transcript":"demo","step":0,"request":["#),
        "{dump}"
    );
    let svg = std::fs::read_to_string(d.join("chart.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("demo"));
}

#[test]
fn errors_go_to_stderr_with_a_failing_exit_code() {
    let d = dir("err");
    let t = d.join("t.json");
    std::fs::write(&t, TRANSCRIPT).unwrap();
    let r = d.join("rules.toml");
    std::fs::write(
        &r,
        "[[rule]]\nname = \"people\"\nrole = [\"system\", \"user\"]\nclass = \"strict\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_favur-context"))
        .arg("replay")
        .arg(&t)
        .arg("--rules")
        .arg(&r)
        .args(["--policy", "default"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: transcript demo: 5 messages matched no rule"),
        "{stderr}"
    );
    assert!(
        stderr.contains("message 3: role tool, tool `bash`"),
        "{stderr}"
    );
}
