//! The agent loop, timed per request: before each assistant message the agent prepares
//! a request (`Compactor::prepare`, default policy) and renders it (OpenAI and
//! Anthropic). Real traces (`$FAVUR_TRACES`, else `shared/traces` beside the checkout)
//! are repeated to size (the pinned system prompt only once), with call ids made unique
//! per repetition; without them a synthetic stream of realistic sizes is used (and the
//! bench says so).
//!
//! For each size (1k, 10k, 100k, 1M messages; `FAVUR_BENCH_SIZES=1000,10000` to choose)
//! and counter (heuristic; exact o200k with `--features tiktoken` and, counted by the
//! `bpe-openai` crate, with `--features bpe-openai`): the history is built
//! by the loop up to the size, then the next `FAVUR_BENCH_WINDOW` messages (default
//! 4000) are timed, request by request, three times over consecutive windows (the best
//! window is reported: the machine is shared). Memory comes from a counting global
//! allocator: bytes live in the history per byte of text it holds, and the peak.
//!
//! ```text
//! cargo bench -p favur-context --bench agent_loop --features tiktoken,bpe-openai
//! ```

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use favur_context::import::shell::ShellCommandClassifier;
use favur_context::import::{self, Format};
use favur_context::message::Part;
use favur_context::render::Renderer;
use favur_context::tokens::{HeuristicCounter, TokenCounter};
use favur_context::{Classified, Compactor, History, Message, Policy, Retention, Role, ToolCall};

/// A shared counter, as a counter.
struct Shared(Arc<dyn TokenCounter>);

impl TokenCounter for Shared {
    fn count_text(&self, text: &str) -> u32 {
        self.0.count_text(text)
    }
    fn id(&self) -> &str {
        self.0.id()
    }
    fn count_message(&self, message: &Message) -> u32 {
        self.0.count_message(message)
    }
}

#[path = "common/counting.rs"]
mod counting;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

/// One message of the source stream: its class, whether it is pinned, and the message.
#[derive(Clone)]
struct Source {
    message: Message,
    class: Retention,
    pin: bool,
}

fn traces_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("FAVUR_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/traces"))
        });
    dir.is_dir().then_some(dir)
}

/// The runs of the traces folder: `<folder>/<source>/<run>.json` (its README's layout),
/// sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let listing = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect()
    };
    let mut files: Vec<PathBuf> = listing(dir)
        .iter()
        .filter(|p| p.is_dir())
        .flat_map(|source| listing(source))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// The traces, one run after the other (each run's leading system prompt pinned once,
/// for the first run only), or `None` if there are none.
fn trace_stream() -> Option<Vec<Source>> {
    let dir = traces_dir()?;
    let mut out = Vec::new();
    for file in json_files(&dir) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(transcript) = import::parse(Format::MiniSweAgent, &text) else {
            continue;
        };
        let Ok(classified) = transcript.classify(&ShellCommandClassifier) else {
            continue;
        };
        let first = out.is_empty();
        for m in classified {
            if m.pin && !first {
                continue;
            }
            let (message, class, _) = m.classified.into_parts();
            out.push(Source {
                message,
                class,
                pin: m.pin,
            });
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A synthetic stream with the traces' size distribution (about 1.1 KB a message):
/// calls, outputs of 100 B to 10 KB, notes.
fn synthetic_stream() -> Vec<Source> {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rng = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut out = vec![
        Source {
            message: Message::system("You are a helpful assistant that can run shell commands."),
            class: Retention::Strict,
            pin: true,
        },
        Source {
            message: Message::user("Fix the failing test in src/parse.rs."),
            class: Retention::Strict,
            pin: false,
        },
    ];
    for k in 0..2_000 {
        let id = format!("call_{k}");
        let cmd = format!("grep -rn value_{} src | head -{}", rng(100), rng(50));
        out.push(Source {
            message: Message::new(
                Role::Assistant,
                vec![
                    Part::Text(format!("THOUGHT: look at module {} next.", rng(40))),
                    Part::ToolCall(Box::new(ToolCall::new(
                        &id,
                        "bash",
                        serde_json::json!({"command": cmd}),
                    ))),
                ],
            ),
            class: Retention::Fuzzy,
            pin: false,
        });
        let long = rng(10) == 0;
        let lines = 2 + rng(if long { 200 } else { 20 });
        let body: String = (0..lines)
            .map(|i| {
                format!(
                    "src/module_{}/file.rs:{i}: let value = compute(&input)?;\n",
                    rng(40)
                )
            })
            .collect();
        let class = [Retention::Forgettable, Retention::Fuzzy, Retention::Strict][rng(3) as usize];
        out.push(Source {
            message: Message::tool_result(&id, body, false),
            class,
            pin: false,
        });
    }
    out
}

/// The stream's `i`-th message when it is repeated to size: the first repetition whole,
/// every later one without its pinned messages (an agent has one system prompt, pinned
/// once, however long it runs), with call ids made unique per repetition.
fn nth(stream: &[Source], repeated: &[Source], i: usize) -> Source {
    let (rep, mut s) = match i.checked_sub(stream.len()) {
        None => (0, stream[i].clone()),
        Some(k) => (1 + k / repeated.len(), repeated[k % repeated.len()].clone()),
    };
    if rep > 0 {
        for part in &mut s.message.parts {
            match part {
                Part::ToolCall(c) => c.id = format!("{}~{rep}", c.id),
                Part::ToolResult(r) => r.call_id = format!("{}~{rep}", r.call_id),
                _ => {}
            }
        }
    }
    s
}

/// Bytes of text a message holds: texts, tool results, tool calls (id, name and
/// arguments as JSON).
fn text_bytes(m: &Message) -> usize {
    m.parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.len(),
            Part::ToolResult(r) => r.call_id.len() + r.content.len(),
            Part::ToolCall(c) => c.id.len() + c.name.len() + c.arguments.to_json_string().len(),
            _ => 0,
        })
        .sum()
}

/// The agent loop: one step appends one message of the stream; before an assistant
/// message the request is prepared and (when `render`) rendered.
struct Loop<'s> {
    stream: &'s [Source],
    /// The stream without its pinned messages: what every repetition after the first is.
    repeated: &'s [Source],
    next: usize,
    history: History,
    compactor: Compactor,
    openai: Renderer,
    anthropic: Renderer,
    /// Asked only for the OpenAI request's bytes (`Renderer::openai_bytes`).
    bytes: Renderer,
}

/// Time spent in one window, and the requests in it.
#[derive(Default, Clone, Copy)]
struct Window {
    requests: u64,
    /// Requests whose `prepare` recorded a compaction.
    compacted: u64,
    prepare: Duration,
    openai: Duration,
    anthropic: Duration,
    /// `openai_bytes` on its own renderer: render and body bytes.
    bytes: Duration,
    /// `serde_json::to_vec` of the OpenAI request already rendered (the bytes without
    /// `openai_bytes`).
    to_vec: Duration,
}

impl<'s> Loop<'s> {
    fn new(stream: &'s [Source], repeated: &'s [Source], counter: Arc<dyn TokenCounter>) -> Self {
        Loop {
            stream,
            repeated,
            next: 0,
            history: History::with_counter(Shared(counter)),
            compactor: Compactor::new(Policy::default()),
            openai: Renderer::new(),
            anthropic: Renderer::new(),
            bytes: Renderer::new(),
        }
    }

    fn step(&mut self, window: Option<&mut Window>) {
        let s = nth(self.stream, self.repeated, self.next);
        self.next += 1;
        if s.message.role == Role::Assistant {
            let t0 = Instant::now();
            let prepared = self.compactor.prepare(&mut self.history);
            let t1 = Instant::now();
            black_box(&prepared);
            if let Some(w) = window {
                black_box(self.openai.openai(&self.history));
                let t2 = Instant::now();
                black_box(self.anthropic.anthropic(&self.history));
                let t3 = Instant::now();
                black_box(self.bytes.openai_bytes(&self.history));
                let t4 = Instant::now();
                let rendered = self.openai.openai(&self.history);
                let t5 = Instant::now();
                black_box(serde_json::to_vec(rendered).ok());
                let t6 = Instant::now();
                w.requests += 1;
                w.bytes += t4 - t3;
                w.to_vec += t6 - t5;
                w.compacted += u64::from(prepared.as_ref().is_ok_and(|p| p.compacted()));
                w.prepare += t1 - t0;
                w.openai += t2 - t1;
                w.anthropic += t3 - t2;
            }
        }
        let c = Classified::with_site(
            s.message,
            s.class,
            favur_context::message::CallSite::caller(),
        );
        if s.pin {
            self.history.pin(c);
        } else {
            self.history.append(c);
        }
    }

    /// Bytes of text the history holds.
    fn text(&self) -> usize {
        self.history
            .entries()
            .iter()
            .map(|e| text_bytes(e.message()))
            .sum()
    }
}

fn us(d: Duration, n: u64) -> f64 {
    d.as_secs_f64() * 1e6 / n.max(1) as f64
}

/// One size with one counter: `stream` and `repeated` as [`nth`] reads them.
fn run(
    (stream, repeated): (&[Source], &[Source]),
    name: &str,
    counter: Arc<dyn TokenCounter>,
    n: usize,
    window: usize,
) {
    let before = counting::live();
    counting::reset_peak();
    let mut l = Loop::new(stream, repeated, counter);
    let built = Instant::now();
    while l.next < n {
        l.step(None);
    }
    let build = built.elapsed();
    // One system prompt however long the run: the pins of the first repetition only.
    assert_eq!(
        l.history.pinned().len(),
        stream.iter().filter(|s| s.pin).count(),
        "a repetition after the first pinned a message"
    );
    let live = counting::live().saturating_sub(before);
    let peak = counting::peak().saturating_sub(before);
    let text = l.text().max(1);
    // Render once so the renderers hold the view, as they would in a running loop.
    black_box(l.openai.openai(&l.history));
    black_box(l.anthropic.anthropic(&l.history));
    black_box(l.bytes.openai_bytes(&l.history));
    let mut best: Option<Window> = None;
    for _ in 0..3 {
        let mut w = Window::default();
        let end = l.next + window;
        while l.next < end {
            l.step(Some(&mut w));
        }
        let total = |w: &Window| w.prepare + w.openai + w.anthropic;
        if best.is_none_or(|b| total(&w) < total(&b)) {
            best = Some(w);
        }
    }
    let w = best.unwrap_or_default();
    println!(
        "| {n:>9} | {name:<9} | {:>8.2} | {:>8.2} | {:>8.2} | {:>8.2} | {:>8.2} | {:>8.2} | {:>8.2} | {:>5.1} | {:>6} | {:>9.1} | {:>5.2}x | {:>5.2}x | {:>7.1} |",
        us(w.prepare, w.requests),
        us(w.openai, w.requests),
        us(w.anthropic, w.requests),
        us(w.prepare + w.openai, w.requests),
        us(w.prepare + w.anthropic, w.requests),
        us(w.prepare + w.bytes, w.requests),
        us(w.prepare + w.openai + w.to_vec, w.requests),
        100.0 * w.compacted as f64 / w.requests.max(1) as f64,
        l.history.view().len(),
        text as f64 / 1048576.0,
        live as f64 / text as f64,
        peak as f64 / text as f64,
        build.as_secs_f64(),
    );
}

/// MB/s of counting every message of the stream once with `counter`.
fn counting_speed(stream: &[Source], counter: &dyn TokenCounter) -> f64 {
    let bytes: usize = stream.iter().map(|s| text_bytes(&s.message)).sum();
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        for s in stream {
            black_box(counter.count_message(black_box(&s.message)));
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    bytes as f64 / best / 1e6
}

fn main() {
    // `cargo bench` passes `--bench`; a filter, if any, is ignored.
    let stream = match trace_stream() {
        Some(s) => {
            println!(
                "source: the real traces, {} messages per repetition",
                s.len()
            );
            s
        }
        None => {
            println!("source: SYNTHETIC (no traces folder found; set FAVUR_TRACES)");
            synthetic_stream()
        }
    };
    let repeated: Vec<Source> = stream.iter().filter(|s| !s.pin).cloned().collect();
    assert!(
        !repeated.is_empty(),
        "the stream holds only pinned messages: nothing to repeat"
    );
    let sizes: Vec<usize> = std::env::var("FAVUR_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000, 1_000_000]);
    let window: usize = std::env::var("FAVUR_BENCH_WINDOW")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4_000);
    let counters: Vec<(&str, Arc<dyn TokenCounter>)> = vec![
        ("heuristic", Arc::new(HeuristicCounter)),
        #[cfg(feature = "tiktoken")]
        (
            "o200k",
            Arc::new(favur_context::tokens::TiktokenCounter::o200k()),
        ),
        #[cfg(feature = "bpe-openai")]
        (
            "bpe-o200k",
            Arc::new(favur_context::tokens::BpeCounter::o200k()),
        ),
    ];
    for (name, counter) in &counters {
        println!(
            "counting, {name}: {:.1} MB/s (every message of the stream once)",
            counting_speed(&stream, counter.as_ref())
        );
    }
    println!(
        "| messages | counter | prepare µs | openai µs | anthropic µs | prepare+openai µs | prepare+anthropic µs | prepare+openai bytes µs | prepare+openai+to_vec µs | compacted % | view items | text MiB | live/text | peak/text | build s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &n in &sizes {
        for (name, counter) in &counters {
            run((&stream, &repeated), name, Arc::clone(counter), n, window);
        }
    }
    if let Some(kib) = counting::peak_rss_kib() {
        println!("peak RSS of the process: {:.1} MiB", kib as f64 / 1024.0);
    }
}
