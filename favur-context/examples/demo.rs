//! A scripted agent job, compacted by class. Run with `cargo run --example demo`.
//!
//! The agent fixes a failing parser test in a small Rust crate: it lists files, reads
//! code, runs the tests (a stack trace), writes a plan, gets a directive from a person
//! mid-run, takes progress notes and keeps calling tools. Every append names a class;
//! before each model request the engine compacts by class alone.

use favur_context::compact::CompactionReport;
use favur_context::message::{EntryKind, kinds::Directive, kinds::ProgressNote};
use favur_context::render::Form;
use favur_context::{Classified, Compactor, EntryId, History, Policy, forgettable, fuzzy, strict};
use serde_json::json;

const WINDOW: u64 = 40_000;

fn listing() -> String {
    let mut s = String::new();
    for dir in [
        "src",
        "src/parse",
        "src/eval",
        "tests",
        "benches",
        "examples",
    ] {
        for f in [
            "mod.rs",
            "lib.rs",
            "util.rs",
            "error.rs",
            "tokens.rs",
            "tree.rs",
            "span.rs",
        ] {
            s.push_str(&format!("./{dir}/{f}\n"));
        }
    }
    s.push_str("./Cargo.toml\n./Cargo.lock\n./README.md\n./target/debug/deps/ (2,114 files)\n");
    s
}

fn source(name: &str, lines: usize) -> String {
    (1..=lines)
        .map(|i| match i % 7 {
            0 => format!("{i:>4} pub fn {name}_{i}(tokens: &mut Tokens<'_>) -> Result<Value, ParseError> {{\n"),
            1 => format!("{i:>4}     let span = tokens.span();\n"),
            2 => format!("{i:>4}     match tokens.next() {{ Some(Token::Open) => {name}_list(tokens), _ => Err(ParseError::at(span)) }}\n"),
            3 => format!("{i:>4}     // {name}: keep the spans exact, the error messages quote them\n"),
            _ => format!("{i:>4}     values.push(parse_value(tokens)?);\n"),
        })
        .collect()
}

const TRACE: &str = "running 48 tests
test parse::tests::nested_lists ... FAILED
failures:
---- parse::tests::nested_lists stdout ----
thread 'parse::tests::nested_lists' panicked at src/parse/mod.rs:142:9:
assertion `left == right` failed
  left: Ok(List([Int(1)]))
 right: Ok(List([Int(1), List([Int(2)])]))
stack backtrace:
   0: rust_begin_unwind
   1: core::panicking::assert_failed
   2: demo::parse::tests::nested_lists
             at ./src/parse/mod.rs:142:9
note: run with `RUST_BACKTRACE=full` for a verbose backtrace.
test result: FAILED. 47 passed; 1 failed; 0 ignored
error: test failed, to rerun pass `--lib`
exit status 101";

struct Job {
    h: History,
    compactor: Compactor,
    step: usize,
    watched: Vec<(&'static str, EntryId)>,
}

impl Job {
    /// The agent's tool call and its result, then the next request (`what`).
    fn exchange(&mut self, call: Classified, result: Classified, what: &str) {
        self.h.append(call);
        self.h.append(result);
        self.request(what);
    }

    /// What the agent loop does before every model request: compact if needed, get the view.
    fn request(&mut self, what: &str) -> bool {
        self.step += 1;
        let n = self.h.compactions().len();
        let usage = self.h.usage_tokens();
        let result = self
            .compactor
            .prepare(&mut self.h)
            .map(|_| self.h.view().len());
        let pct = 100.0 * usage as f64 / WINDOW as f64;
        let width = (pct * 2.0).round() as usize;
        let bar = if width > 60 {
            format!("{}>", "#".repeat(60))
        } else {
            "#".repeat(width)
        };
        println!(
            "  request {:>2} {:<42} {:>6} tok {:>5.1}% {bar}",
            self.step, what, usage, pct
        );
        if self.h.compactions().len() > n
            && let Some(report) = self.compactor.last_report()
        {
            let report = report.clone();
            self.announce(&report);
        }
        match result {
            Ok(_) => true,
            Err(e) => {
                println!("  !! REFUSED: {e}");
                false
            }
        }
    }

    fn announce(&self, r: &CompactionReport) {
        let threshold = self.compactor.policy().tier(r.tier).map_or(0.0, |t| t.at) * 100.0;
        println!();
        println!(
            "  >>> TIER {} FIRED (usage reached {threshold:.0}% of the window)",
            r.tier
        );
        for line in r.to_string().lines() {
            println!("      {line}");
        }
        for (name, id) in &self.watched {
            println!("      {name:<28} {}", fate(&self.h, *id));
        }
        // Show the summaries this compaction wrote that hold a watched entry.
        for s in &r.summaries {
            let Ok(e) = self.h.recall(*s) else { continue };
            let EntryKind::Summary { replaces } = e.kind() else {
                continue;
            };
            if self.watched.iter().any(|(_, w)| replaces.contains(w)) {
                println!(
                    "      summary {s} ({}, {} tokens), as the model now reads it:",
                    e.retention(),
                    e.tokens()
                );
                for line in e.message().text().lines().take(18) {
                    println!("        | {line}");
                }
            }
        }
        println!();
    }
}

/// How a view item's form reads: what became of its entry, and the tag shown after its
/// class (none for a verbatim one).
fn form_words(form: &Form) -> [&'static str; 2] {
    match form {
        Form::Verbatim => ["still there, verbatim", ""],
        Form::CallsOnly => ["only its tool calls remain", ", calls only"],
        Form::Placeholder { .. } => ["a placeholder pointing at a summary", ", placeholder"],
        Form::Capped(_) => ["shortened by the cap", ", capped"],
        Form::Command => ["only its command remains", ", command only"],
    }
}

/// What became of an entry: verbatim, reshaped, inside a summary, or out of the view.
fn fate(h: &History, id: EntryId) -> String {
    let class = h.recall(id).map(|e| e.retention().as_str()).unwrap_or("?");
    if let Some(item) = h.view().items().iter().find(|i| i.id == id) {
        let [form, _] = form_words(&item.form);
        return format!("({class}, {id}) {form}");
    }
    for item in h.view().items() {
        if let Ok(e) = h.recall(item.id)
            && let EntryKind::Summary { replaces } = e.kind()
            && replaces.contains(&id)
        {
            return format!(
                "({class}, {id}) summarized: now part of summary {}",
                item.id
            );
        }
    }
    format!("({class}, {id}) gone from the view (the original is still in the history)")
}

fn main() {
    let policy = Policy::for_window(WINDOW).expect("a valid window");
    println!("favur-context demo: a coding agent fixes a failing test; window {WINDOW} tokens\n");
    println!("Every message is appended with a retention class, chosen where it is appended:");
    println!("  forgettable  spent once read          (directory listings, grep hits)");
    println!("  fuzzy        the gist will do later   (file views, edits, routine steps)");
    println!(
        "  strict       verbatim through tier 1  (stack traces, the plan, directives); summarized at tier 2, dropped at tier 3"
    );
    println!(
        "  pinned       verbatim in every request, in its place (the task; the system prompt goes first)\n"
    );
    println!(
        "Compaction reads nothing but the classes. The policy (usage = request tokens / window):"
    );
    for (i, t) in policy.tiers().iter().enumerate() {
        println!(
            "  tier {} at {:>3.0}%: forgettable {:<9} fuzzy {:<9} strict {}",
            i + 1,
            t.at * 100.0,
            t.forgettable.as_str(),
            t.fuzzy.as_str(),
            t.strict.as_str()
        );
    }
    println!(
        "  limit at {:>3.0}%: the request is refused with a typed error",
        policy.limit() * 100.0
    );
    println!(
        "Only entries the model has already answered are compacted; the newest turn never is."
    );
    println!(
        "Each tier takes the oldest eligible material first (superseded material before that) and\n\
         stops once usage is back under {:.0}% of its threshold.\n",
        policy.target() * 100.0
    );

    let mut h = History::new();
    h.pin(strict!(system: "You are a careful coding agent. Work in /work/demo. Use the tools."));
    // The task is pinned: strict alone would be summarized at tier 2; a pin is sent
    // verbatim, where it was given, in every request.
    h.pin(strict!(user: "The test parse::tests::nested_lists fails. Fix the parser so nested lists parse; keep the public API."));
    let mut job = Job {
        h,
        compactor: Compactor::new(policy),
        step: 0,
        watched: Vec::new(),
    };
    job.request("task given");

    // Look around.
    job.h.append(fuzzy!(tool_call: "c1", "bash", json!({"command": "find . -type f -not -path './target/*'"})));
    let listing_id = job
        .h
        .append(forgettable!(tool_result("c1"): "{}", listing()));
    job.watched.push(("the directory listing", listing_id));
    job.request("directory listing (forgettable)");
    job.exchange(
        fuzzy!(tool_call: "c2", "read_file", json!({"path": "Cargo.toml"})),
        fuzzy!(tool_result("c2"): "[package]\nname = \"demo\"\nedition = \"2024\"\n\n[dependencies]\nthiserror = \"2\"\n"),
        "Cargo.toml (fuzzy)",
    );
    job.exchange(
        fuzzy!(tool_call: "c3", "read_file", json!({"path": "src/parse/mod.rs"})),
        fuzzy!(tool_result("c3"): "{}", source("parse", 90)),
        "src/parse/mod.rs (fuzzy)",
    );

    // Reproduce: the stack trace is strict.
    job.h
        .append(fuzzy!(tool_call: "c4", "bash", json!({"command": "cargo test"})));
    let trace_id = job.h.append(strict!(tool_error("c4"): "{TRACE}"));
    job.watched.push(("the stack trace", trace_id));
    job.request("cargo test: FAILED, stack trace (strict)");
    job.h.append(strict!(assistant: "Plan: 1. parse_list must recurse when it meets '[' (src/parse/mod.rs:142). 2. add a regression test. 3. run the whole suite and clippy."));
    job.request("the plan (strict)");

    // Dig in.
    job.h
        .append(fuzzy!(tool_call: "c5", "bash", json!({"command": "grep -rn parse_list src/"})));
    job.h.append(forgettable!(tool_result("c5"): "{}", (0..30).map(|i| format!("src/parse/mod.rs:{}:    parse_list(tokens)\n", 100 + i * 3)).collect::<String>()));
    job.request("grep hits (forgettable)");
    job.exchange(
        fuzzy!(tool_call: "c6", "read_file", json!({"path": "src/parse/tokens.rs"})),
        fuzzy!(tool_result("c6"): "{}", source("token", 110)),
        "src/parse/tokens.rs (fuzzy)",
    );
    job.h.append(ProgressNote::new(
        "step 1: cause found, parse_list returns after the first value",
    ));
    job.h.append(
        fuzzy!(tool_call: "c7", "edit_file", json!({"path": "src/parse/mod.rs", "line": 142})),
    );
    job.h
        .append(fuzzy!(tool_result("c7"): "applied: 4 lines changed in src/parse/mod.rs"));
    job.request("edit applied (fuzzy)");

    // A person steers the run.
    // Strict, not pinned: exact through tier 1, summarized at tier 2, dropped at tier 3.
    let directive_id = job.h.append(Directive::new("Do not rename parse_list: other crates call it. Add the regression test in tests/parse.rs."));
    job.watched.push(("the directive", directive_id));
    job.request("DIRECTIVE from a person (strict)");

    job.exchange(
        fuzzy!(tool_call: "c8", "read_file", json!({"path": "tests/parse.rs"})),
        fuzzy!(tool_result("c8"): "{}", source("test", 120)),
        "tests/parse.rs (fuzzy)",
    );
    job.h.append(fuzzy!(tool_call: "c9", "edit_file", json!({"path": "tests/parse.rs", "append": "#[test] fn nested_lists_regression() { .. }"})));
    job.h
        .append(fuzzy!(tool_result("c9"): "applied: 9 lines added to tests/parse.rs"));
    job.request("regression test added (fuzzy)");
    job.h.append(ProgressNote::new(
        "step 2: fix and regression test written; running the suite",
    ));

    // The whole suite: strict (its exact result matters), and long.
    job.h
        .append(fuzzy!(tool_call: "c10", "bash", json!({"command": "cargo test --all"})));
    let suite: String = (0..300)
        .map(|i| format!("test parse::tests::nested_case_{i:03} ... ok\n"))
        .collect::<String>()
        + "test result: ok. 301 passed; 0 failed\nexit status 0";
    job.h.append(strict!(tool_result("c10"): "{suite}"));
    job.request("cargo test --all: ok, 300 lines (strict)");
    job.h
        .append(fuzzy!(tool_call: "c11", "bash", json!({"command": "cargo clippy --all-targets"})));
    job.h.append(
        fuzzy!(tool_result("c11"): "    Checking demo v0.1.0\n    Finished `dev` profile in 2.31s"),
    );
    job.request("clippy clean (fuzzy)");
    job.h
        .append(fuzzy!(tool_call: "c12", "bash", json!({"command": "git diff --stat"})));
    job.h.append(forgettable!(tool_result("c12"): " src/parse/mod.rs | 4 ++--\n tests/parse.rs   | 9 +++++++++\n 2 files changed, 11 insertions(+), 2 deletions(-)"));
    job.request("git diff --stat (forgettable)");
    // A long log the person asked to see verbatim: strict.
    job.h.append(
        fuzzy!(tool_call: "c13", "bash", json!({"command": "cargo test nested -- --nocapture"})),
    );
    let log: String = (0..520)
        .map(|i| {
            format!(
                "[{i:05}] nested case {i}: [Open, Int({i}), Open, Int(2), Close, Close] -> ok\n"
            )
        })
        .collect();
    job.h.append(strict!(tool_result("c13"): "{log}"));
    job.request("--nocapture log, 520 lines (strict)");
    job.h.append(
        strict!(assistant: "Every nested case passes. Checking the build log for warnings."),
    );

    // An enormous output: even tier 3 cannot bring the request under the limit, because
    // the newest output is in flight. The request is refused with a typed error; nothing
    // is lost, and the agent loop decides what to do: here, it sets a per-entry cap.
    job.h
        .append(fuzzy!(tool_call: "c14", "bash", json!({"command": "cat target/build.log"})));
    let build: String = (0..1600).map(|i| format!("   Compiling dep_{i:04} v0.{}.{} (registry) warning: unused import in src/lib.rs:{}\n", i % 9, i % 13, i % 300)).collect();
    job.h.append(fuzzy!(tool_result("c14"): "{build}"));
    if !job.request("build log, 1600 lines (fuzzy)") {
        let capped = Policy::builder()
            .window_tokens(WINDOW)
            .entry_cap_tokens(Some(2_000))
            .build()
            .expect("a valid policy");
        println!("  .. the agent loop retries with a per-entry cap of 2000 tokens");
        job.compactor.set_policy(capped);
        job.request("same request, with the cap");
        let id = job
            .h
            .view()
            .items()
            .iter()
            .rev()
            .find(|i| matches!(i.form, Form::Capped(_)))
            .map(|i| i.id);
        if let Some(id) = id {
            println!(
                "  .. the build log ({id}) is shown capped in the view; its original is intact in the history"
            );
        }
    }
    job.h.append(strict!(assistant: "Done: parse_list now recurses on '[', a regression test is added, 301 tests pass, clippy is clean."));
    job.h
        .append(strict!(user: "Thanks. Summarize what changed in one sentence."));
    job.request("user follow-up (strict)");

    println!("\nWhere the watched entries ended up:");
    for (name, id) in &job.watched {
        println!("  {name:<28} {}", fate(&job.h, *id));
    }
    println!(
        "  (history.recall(id) still returns every original: {} entries recorded, {} in the view)",
        job.h.len(),
        job.h.view().len()
    );

    println!(
        "\nStrict is not exemption: the directive was strict, not pinned, so tier 3 dropped it\n\
         like any other strict entry. Pin what the job can never lose: the system prompt, the\n\
         task, a standing instruction from a person (`history.pin(...)`); pins are sent verbatim\n\
         in every request and count against the window at every tier."
    );
    println!(
        "\nThe request the model receives now ({} tokens of a {WINDOW}-token window):",
        job.h.usage_tokens()
    );
    for id in job.h.pinned() {
        if let Ok(e) = job.h.recall(*id)
            && e.message().role == favur_context::Role::System
        {
            println!("  [pinned {id} system, strict] {}", e.message().text());
        }
    }
    for item in job.h.view().items() {
        let Ok(e) = job.h.recall(item.id) else {
            continue;
        };
        let shown = item.form.message_for(&e);
        let kind = if e.kind().is_summary() {
            "summary"
        } else {
            shown.role.as_str()
        };
        let [_, form] = form_words(&item.form);
        println!(
            "  [{} {kind}, {}{form}, {} tok]",
            item.id,
            e.retention(),
            item.tokens
        );
        let mut body = shown.text();
        for c in shown.tool_calls() {
            body.push_str(&format!(
                "call {}: {} {}\n",
                c.id,
                c.name,
                c.arguments.to_json_string()
            ));
        }
        for r in shown.tool_results() {
            body.push_str(&format!("result of {}: {}\n", r.call_id, r.content));
        }
        let lines: Vec<&str> = body.lines().collect();
        for l in lines.iter().take(14) {
            println!("      {l}");
        }
        if lines.len() > 14 {
            println!("      ... ({} more lines)", lines.len() - 14);
        }
    }
}
