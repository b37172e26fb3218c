//! Benchmarks of accounting, planning, compaction and the built-in summarizer at 1k, 10k
//! and 100k entries of realistic sizes. Run with `cargo bench -p favur-context`.

use std::hint::black_box;
use std::num::NonZeroU8;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use favur_context::compact::{BuiltinSummarizer, Plan};
use favur_context::{Classified, Compactor, History, Message, Policy, Retention, ToolCall};

// A small deterministic generator, seeded below.
use fastrand::Rng;

fn listing(rng: &mut Rng) -> String {
    let n = 10 + rng.u64(..80);
    (0..n)
        .map(|i| format!("./src/module_{}/file_{i}.rs\n", rng.u64(..40)))
        .collect()
}

fn file_view(rng: &mut Rng) -> String {
    let n = 40 + rng.u64(..160);
    (0..n)
        .map(|i| {
            format!(
                "{i:>4}    let value_{i} = compute(&input[{}..], config.limit)?;\n",
                rng.u64(..100)
            )
        })
        .collect()
}

fn trace(rng: &mut Rng) -> String {
    let mut s = String::from("running 48 tests\ntest parse::tests::nested ... FAILED\n");
    for i in 0..(10 + rng.u64(..30)) {
        s.push_str(&format!(
            "   {i}: favur::parse::level_{i}\n             at ./src/parse.rs:{}:9\n",
            rng.u64(..900)
        ));
    }
    s.push_str(
        "thread 'main' panicked at src/parse.rs:142:9\nerror: test failed\nexit status 101\n",
    );
    s
}

/// A scripted agent job of `n` entries: calls and their results (listings forgettable,
/// file views fuzzy, test runs strict), notes, the odd user message.
fn messages(n: usize) -> Vec<Classified> {
    let mut rng = Rng::with_seed(0x9E37_79B9_7F4A_7C15);
    let mut out = Vec::with_capacity(n);
    out.push(
        Message::user("Fix the failing parser test without changing the public API.")
            .classify(Retention::Strict),
    );
    let mut k = 0u64;
    while out.len() < n {
        k += 1;
        let id = format!("call_{k}");
        let (tool, cmd, body, class) = match rng.u64(..10) {
            0..=3 => (
                "bash",
                format!("ls -R src/module_{}", rng.u64(..40)),
                listing(&mut rng),
                Retention::Forgettable,
            ),
            4..=7 => (
                "read_file",
                format!("src/module_{}/file.rs", rng.u64(..40)),
                file_view(&mut rng),
                Retention::Fuzzy,
            ),
            _ => (
                "bash",
                "cargo test".to_owned(),
                trace(&mut rng),
                Retention::Strict,
            ),
        };
        let call = Message::assistant_calls([ToolCall::new(
            &id,
            tool,
            serde_json::json!({"command": cmd}),
        )]);
        out.push(call.classify(Retention::Fuzzy));
        out.push(Message::tool_result(&id, body, class == Retention::Strict).classify(class));
        if rng.u64(..4) == 0 {
            out.push(
                Message::assistant(format!(
                    "Step {k}: looked at the output; next I will check module {}.",
                    rng.u64(..40)
                ))
                .classify(Retention::Fuzzy),
            );
        }
    }
    out.truncate(n);
    // End with a consumer, so everything before it is compactable.
    out.push(Message::assistant("Continuing.").classify(Retention::Fuzzy));
    out
}

fn history(n: usize) -> History {
    let mut h = History::new();
    h.pin(Message::system("You are a careful coding agent.").classify(Retention::Strict));
    for m in messages(n) {
        h.append(m);
    }
    h
}

/// Tier 2.
const TIER_2: NonZeroU8 = NonZeroU8::new(2).unwrap();

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
}

fn bench_append(c: &mut Criterion) {
    let mut g = c.benchmark_group("append");
    for n in SIZES {
        let msgs = messages(n);
        let bytes: usize = msgs
            .iter()
            .map(|m| serde_json::to_string(m.message()).map_or(0, |s| s.len()))
            .sum();
        g.throughput(Throughput::Elements(msgs.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &msgs, |b, msgs| {
            b.iter_batched(
                || msgs.clone(),
                |msgs| {
                    let mut h = History::new();
                    for m in msgs {
                        h.append(m);
                    }
                    h
                },
                BatchSize::LargeInput,
            )
        });
        let _ = bytes;
    }
    g.finish();
}

fn bench_usage(c: &mut Criterion) {
    let mut g = c.benchmark_group("usage");
    for n in SIZES {
        let h = history(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &h, |b, h| {
            b.iter(|| black_box(h).usage_tokens())
        });
    }
    g.finish();
}

fn bench_plan(c: &mut Criterion) {
    let policy = Policy::default();
    for tier in [NonZeroU8::MIN, TIER_2] {
        let mut g = c.benchmark_group(format!("plan_tier{tier}"));
        for n in SIZES {
            let h = history(n);
            g.throughput(Throughput::Elements(h.view().len() as u64));
            g.bench_with_input(BenchmarkId::from_parameter(n), &h, |b, h| {
                b.iter(|| Plan::new(black_box(h), &policy, tier))
            });
        }
        g.finish();
    }
}

fn bench_compact(c: &mut Criterion) {
    let mut g = c.benchmark_group("compact_tier1_builtin");
    for n in SIZES {
        let h = history(n);
        g.throughput(Throughput::Elements(h.view().len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &h, |b, h| {
            b.iter_batched(
                || h.clone(),
                |mut h| {
                    let mut c = Compactor::new(Policy::default());
                    c.compact_at(&mut h, NonZeroU8::MIN).expect("compact");
                    h
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

/// The bytes of text, results and call arguments in `entries` (what a summarizer reads).
fn text_bytes(entries: &[&favur_context::Entry]) -> usize {
    entries
        .iter()
        .flat_map(|e| e.message().parts.iter())
        .map(|p| match p {
            favur_context::message::Part::Text(t) => t.len(),
            favur_context::message::Part::ToolResult(r) => r.content.len(),
            favur_context::message::Part::ToolCall(c) => c.arguments.to_json_string().len(),
            _ => 0,
        })
        .sum()
}

fn bench_summarizer(c: &mut Criterion) {
    let mut g = c.benchmark_group("summarizer");
    let h = history(2_000);
    let entries: Vec<_> = h.entries().iter().collect();
    let bytes = text_bytes(&entries);
    let s = BuiltinSummarizer::default();
    // One run of 64 entries (a typical summary), and one huge run.
    for take in [64usize, entries.len()] {
        let run = &entries[1..take.min(entries.len())];
        let run_bytes = if take == entries.len() {
            bytes
        } else {
            text_bytes(run)
        };
        g.throughput(Throughput::Bytes(run_bytes as u64));
        g.bench_with_input(BenchmarkId::new("entries", run.len()), run, |b, run| {
            b.iter(|| s.summarize_entries(black_box(run), 400))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_append, bench_usage, bench_plan, bench_compact, bench_summarizer
}
criterion_main!(benches);
