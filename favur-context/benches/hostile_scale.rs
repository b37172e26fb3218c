//! Measures the inputs that used to take quadratic time, and the memory held per
//! message: `cargo bench -p favur-context --bench hostile_scale [-- SECTION...]`, sections
//! `import`, `rules`, `render`, `memory` (all by default; figures in docs/hostile.md).
//!
//! - import of one assistant message with 50,000 tool calls (and their results);
//! - loading a rules file of 100,000 rules;
//! - rendering for Anthropic a history of 16,000 turns that all reuse one call id;
//! - bytes allocated at the peak of importing a large transcript, and bytes held per
//!   message by a history, counted by a global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use favur_context::import::Format;
use favur_context::import::rules::Rules;
use favur_context::render::{render_anthropic, render_openai};
use favur_context::{History, Message, Retention, ToolCall};
use serde_json::json;

/// Counts live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    println!("{what}: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    out
}

fn main() {
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |section: &str| asked.is_empty() || asked.iter().any(|a| a == section);
    let rules = Rules::from_toml(
        "[[rule]]\nname = \"all\"\nrole = \"assistant\"\nclass = \"fuzzy\"\n\
         [[rule]]\nname = \"results\"\nrole = \"tool\"\nclass = \"forgettable\"\n\
         [[rule]]\nname = \"users\"\nrole = \"user\"\nclass = \"strict\"\n\
         [[rule]]\nname = \"system\"\nrole = \"system\"\nclass = \"strict\"\n",
    )
    .unwrap();

    // 1. One message with 50,000 calls, each answered.
    if run("import") {
        // HOSTILE_CALLS=N to see how it scales.
        let n: usize = std::env::var("HOSTILE_CALLS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(50_000);
        let calls: Vec<_> = (0..n)
        .map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}))
        .collect();
        let mut messages = vec![
            json!({"role": "user", "content": "go"}),
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
        ];
        messages
            .extend((0..n).map(
                |i| json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": "ok"}),
            ));
        let text = serde_json::to_string(&messages).unwrap();
        let h = timed(
            &format!("import: 1 message with {n} calls (openai)"),
            || {
                let mut h = History::new();
                favur_context::import::import(&mut h, Format::OpenAi, &text, &rules).unwrap();
                assert_eq!(h.len(), n + 2);
                h
            },
        );
        let openai = render_openai(&h);
        timed(
            &format!("validate: openai, 1 message with {n} calls"),
            || {
                favur_context::render::validate::validate_openai(&openai).unwrap();
            },
        );
        let anthropic = render_anthropic(&h).to_value();
        timed(
            &format!("validate: anthropic, 1 message with {n} calls"),
            || {
                favur_context::render::validate::validate_anthropic(&anthropic).unwrap();
            },
        );
    }

    // 2. 100,000 rules.
    if run("rules") {
        let mut toml = String::new();
        for i in 0..100_000 {
            toml.push_str(&format!(
                "[[rule]]\nname = \"rule {i}\"\nrole = \"user\"\nclass = \"fuzzy\"\n"
            ));
        }
        timed("rules: load 100000 rules", || {
            Rules::from_toml(&toml).unwrap();
        });
    }

    // 3. 16,000 turns reusing one call id.
    if run("render") {
        let mut h = History::new();
        h.append(Message::user("go").classify(Retention::Strict));
        for _ in 0..16_000 {
            h.append(
                Message::assistant_calls(vec![ToolCall::new(
                    "call_1",
                    "bash",
                    json!({"command": "ls"}),
                )])
                .classify(Retention::Fuzzy),
            );
            h.append(Message::tool_result("call_1", "ok", false).classify(Retention::Forgettable));
        }
        timed("render: anthropic, 16000 turns reusing one call id", || {
            render_anthropic(&h);
        });
        timed("render: openai, 16000 turns reusing one call id", || {
            render_openai(&h);
        });
    }
    if !run("memory") {
        return;
    }

    // 4. Memory: a transcript of about 30 MB (2,000-byte messages), imported.
    let body = "x".repeat(1990);
    let msgs: Vec<_> = (0..15_000)
        .map(|i| {
            if i % 2 == 0 {
                json!({"role": "user", "content": body})
            } else {
                json!({"role": "assistant", "content": body})
            }
        })
        .collect();
    let big = serde_json::to_string(&msgs).unwrap();
    drop(msgs);
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut h = History::new();
    favur_context::import::import(&mut h, Format::OpenAi, &big, &rules).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    let held = LIVE.load(Ordering::Relaxed) - base;
    let per = |b: usize| b as f64 / h.len() as f64;
    println!(
        "memory: import of {:.1} MB in {} messages: peak {:.1} MB ({:.0} B per message, {:.2}x the text), held after {:.1} MB ({:.0} B per message)",
        big.len() as f64 / 1e6,
        h.len(),
        peak as f64 / 1e6,
        per(peak),
        peak as f64 / big.len() as f64,
        held as f64 / 1e6,
        per(held),
    );
    drop(h);

    // 5. Memory held per message by a history: 1,000,000 short appends.
    let base = LIVE.load(Ordering::Relaxed);
    let mut h = History::new();
    for i in 0..1_000_000u32 {
        h.append(Message::user(format!("message number {i}")).classify(Retention::Fuzzy));
    }
    let held = LIVE.load(Ordering::Relaxed) - base;
    println!(
        "memory: history of {} appends of ~20 B of text: {:.1} MB held, {:.0} B per message",
        h.len(),
        held as f64 / 1e6,
        held as f64 / h.len() as f64
    );
}
