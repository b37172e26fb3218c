//! Calibrates the token counters against the `prompt_tokens` that providers reported in
//! real agent traces (`/work/shared/traces/*/*.json`, see their README): for every
//! assistant message carrying `prompt_tokens`, the messages before it are counted with
//! each counter (content plus the history's framing per message) and compared.
//!
//! `cargo run --release -p favur-context --example token_calibration --features tiktoken -- /work/shared/traces`
//!
//! Prints one markdown row per trace family: the ratio count / prompt_tokens over all
//! reported requests (sum over sum), and the median and range of the per-request ratios.

use std::path::Path;

use favur_context::message::{Part, ToolResult};
use favur_context::store::DEFAULT_FRAMING_TOKENS;
use favur_context::tokens::{HeuristicCounter, TiktokenCounter, TokenCounter};
use favur_context::{Message, Role, ToolCall};
use serde_json::Value;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/work/shared/traces".into());
    let counters: [(&str, Box<dyn TokenCounter>); 3] = [
        ("heuristic", Box::new(HeuristicCounter)),
        ("o200k_base", Box::new(TiktokenCounter::o200k())),
        ("cl100k_base", Box::new(TiktokenCounter::cl100k())),
    ];
    // The trace families: one folder each.
    let mut families: Vec<_> = std::fs::read_dir(&root)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    families.sort();
    println!("| family (model) | runs | requests | counter | ratio (sum) | median | min – max |");
    println!("|---|---|---|---|---|---|---|");
    for family in &families {
        let traces = load_family(family)?;
        let requests: usize = traces.iter().map(|t| t.reported.len()).sum();
        let model = traces.first().map(|t| t.model.clone()).unwrap_or_default();
        for (name, counter) in &counters {
            let (mut sum_count, mut sum_reported, mut ratios) = (0u64, 0u64, Vec::new());
            for t in &traces {
                let mut prefix = Vec::with_capacity(t.messages.len() + 1);
                let mut total = 0u64;
                prefix.push(0);
                for m in &t.messages {
                    total +=
                        u64::from(counter.count_message(m)) + u64::from(DEFAULT_FRAMING_TOKENS);
                    prefix.push(total);
                }
                for &(index, reported) in &t.reported {
                    sum_count += prefix[index];
                    sum_reported += reported;
                    ratios.push(prefix[index] as f64 / reported as f64);
                }
            }
            ratios.sort_by(f64::total_cmp);
            let median = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
            let (lo, hi) = (
                ratios.first().copied().unwrap_or(f64::NAN),
                ratios.last().copied().unwrap_or(f64::NAN),
            );
            let family_name = family.file_name().unwrap_or_default().to_string_lossy();
            println!(
                "| {family_name} ({model}) | {} | {requests} | {name} | {:.2} | {median:.2} | {lo:.2} – {hi:.2} |",
                traces.len(),
                sum_count as f64 / sum_reported as f64
            );
        }
    }
    // Counting speed (what an append costs): every message of every trace, once.
    println!("\n| counter | messages | MB counted | time | MB/s |");
    println!("|---|---|---|---|---|");
    let mut all = Vec::new();
    for d in &families {
        all.extend(load_family(d)?.into_iter().flat_map(|t| t.messages));
    }
    let bytes: usize = all
        .iter()
        .map(|m| m.parts.iter().map(part_len).sum::<usize>())
        .sum();
    for (name, counter) in &counters {
        let start = std::time::Instant::now();
        let total: u64 = all
            .iter()
            .map(|m| u64::from(counter.count_message(m)))
            .sum();
        let secs = start.elapsed().as_secs_f64();
        let mb = bytes as f64 / 1e6;
        println!(
            "| {name} | {} | {mb:.1} | {secs:.3} s | {:.0} |",
            all.len(),
            mb / secs
        );
        std::hint::black_box(total);
    }

    // The heuristic against o200k, by role: observations (tool output, logs) vs the rest.
    println!("\n| family | role | messages | o200k tokens | heuristic / o200k |");
    println!("|---|---|---|---|---|");
    for family in &families {
        let traces = load_family(family)?;
        let family_name = family
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
            let (mut n, mut exact, mut heuristic) = (0usize, 0u64, 0u64);
            for m in traces
                .iter()
                .flat_map(|t| &t.messages)
                .filter(|m| m.role == role)
            {
                n += 1;
                exact += u64::from(counters[1].1.count_message(m));
                heuristic += u64::from(counters[0].1.count_message(m));
            }
            if n > 0 {
                println!(
                    "| {family_name} | {role} | {n} | {exact} | {:.2} |",
                    heuristic as f64 / exact as f64
                );
            }
        }
    }
    Ok(())
}

/// One trace: its messages, and (index of an assistant message, prompt_tokens reported).
struct Trace {
    model: String,
    messages: Vec<Message>,
    reported: Vec<(usize, u64)>,
}

fn load_family(dir: &Path) -> Result<Vec<Trace>, Box<dyn std::error::Error>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
        let mut trace = Trace {
            model: doc["model"].as_str().unwrap_or("?").to_owned(),
            messages: Vec::new(),
            reported: Vec::new(),
        };
        for m in doc["messages"].as_array().into_iter().flatten() {
            let role = match m["role"].as_str() {
                Some("system") => Role::System,
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some("tool") => Role::Tool,
                _ => continue, // `exit` records are not sent
            };
            if let (Role::Assistant, Some(p)) = (role, m["prompt_tokens"].as_u64()) {
                trace.reported.push((trace.messages.len(), p));
            }
            trace.messages.push(message(role, m));
        }
        out.push(trace);
    }
    Ok(out)
}

fn part_len(p: &Part) -> usize {
    match p {
        Part::Text(t) => t.len(),
        Part::ToolResult(r) => r.content.len(),
        Part::ToolCall(c) => c.name.len() + c.arguments.to_json_string().len(),
        Part::Reasoning(r) => r.text.iter().map(String::len).sum(),
        // Not text: the traces hold none.
        _ => 0,
    }
}

fn message(role: Role, m: &Value) -> Message {
    let content = m["content"].as_str().unwrap_or("").to_owned();
    let mut parts = Vec::new();
    match role {
        Role::Tool => parts.push(Part::ToolResult(ToolResult {
            call_id: m["tool_call_id"].as_str().unwrap_or("").to_owned(),
            content,
            is_error: false,
        })),
        _ if !content.is_empty() => parts.push(Part::Text(content)),
        _ => {}
    }
    for c in m["tool_calls"].as_array().into_iter().flatten() {
        parts.push(Part::ToolCall(Box::new(ToolCall::new(
            c["id"].as_str().unwrap_or(""),
            c["name"].as_str().unwrap_or(""),
            c["arguments"].as_str().unwrap_or("{}"),
        ))));
    }
    Message::new(role, parts)
}
