//! Runs fuzz targets on the stable toolchain: seeded mutations of each target's corpus
//! for a time budget, every execution under `catch_unwind`; a panic is a failure (the
//! input is saved and the run exits non-zero).
//!
//! ```text
//! cargo run --release -p favur-context-fuzz --bin fuzz -- [--target NAME|all] [--seconds N] [--seed N] [--root DIR] [--crashes DIR]
//! cargo run --release -p favur-context-fuzz --bin fuzz -- --target NAME --replay FILE   # one saved input
//! ```

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use favur_context_fuzz::{TARGETS, Target, seeds};

/// xorshift64*: deterministic for a seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Tokens worth inserting into JSON, TOML and journal lines.
const TOKENS: &[&[u8]] = &[
    b"\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\n",
    b"\\",
    b"null",
    b"true",
    b"0",
    b"-1",
    b"4294967296",
    b"18446744073709551616",
    b"1e999",
    b"\"role\":\"system\"",
    b"\"id\":\"\"",
    b"\"tool_calls\":[]",
    b"\"tokens\":0",
    b"{\"capped\":{\"role\":\"system\",\"parts\":[]}}",
    b"\"\\ud800\"",
    b"\xff",
    b"[[rule]]\n",
    b"= ",
    b"\"summary\"",
    b"</context-summary>",
    b"{\"journal\":{\"format\":1,\"framing_tokens\":4}}\n",
];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    for _ in 0..=rng.below(4) {
        let len = input.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.below(len + 1);
                input.insert(i, rng.next() as u8);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = rng.below((len - i).min(64)) + 1;
                input.drain(i..i + n);
            }
            4 => {
                let i = rng.below(len + 1);
                let t = TOKENS[rng.below(TOKENS.len())];
                input.splice(i..i, t.iter().copied());
            }
            5 if len > 0 => {
                // Duplicate a chunk.
                let i = rng.below(len);
                let n = rng.below((len - i).min(256)) + 1;
                let chunk = input[i..i + n].to_vec();
                let at = rng.below(len + 1);
                input.splice(at..at, chunk);
            }
            6 => {
                // Splice in a piece of another input.
                let other = &corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let i = rng.below(other.len());
                    let n = rng.below((other.len() - i).min(512)) + 1;
                    let at = rng.below(len + 1);
                    input.splice(at..at, other[i..i + n].iter().copied());
                }
            }
            7 if len > 0 => input.truncate(rng.below(len)),
            _ => {
                // Replace a digit run with an extreme number.
                if let Some(i) =
                    (0..len).find(|&i| input[(i + rng.below(len)) % len].is_ascii_digit())
                {
                    let t = [&b"0"[..], b"4294967295", b"99999999999999999999"][rng.below(3)];
                    input.splice(i..(i + 1).min(len), t.iter().copied());
                }
            }
        }
    }
    input.truncate(1 << 20);
}

struct Args {
    targets: Vec<(&'static str, Target)>,
    seconds: f64,
    seed: u64,
    root: PathBuf,
    crashes: PathBuf,
    replay: Option<PathBuf>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        targets: TARGETS.to_vec(),
        seconds: 10.0,
        seed: 1,
        root: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
        crashes: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-crashes"),
        replay: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--target" => {
                let name = value()?;
                if name != "all" {
                    let t = favur_context_fuzz::target(&name)
                        .ok_or(format!("unknown target `{name}`"))?;
                    let name = TARGETS.iter().find(|(n, _)| *n == name).map(|(n, _)| *n);
                    out.targets = vec![(name.unwrap_or("?"), t)];
                }
            }
            "--seconds" => out.seconds = value()?.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--seed" => out.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--root" => out.root = PathBuf::from(value()?),
            "--crashes" => out.crashes = PathBuf::from(value()?),
            "--replay" => out.replay = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(out)
}

fn main() {
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fuzz: {e}");
            std::process::exit(2);
        }
    };
    // Panics are counted, not printed as they happen.
    let last_panic: Arc<Mutex<String>> = Arc::default();
    let sink = Arc::clone(&last_panic);
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(mut s) = sink.lock() {
            *s = info.to_string();
        }
    }));
    if let Some(file) = &args.replay {
        let input = std::fs::read(file).unwrap_or_else(|e| {
            eprintln!("fuzz: cannot read {}: {e}", file.display());
            std::process::exit(2);
        });
        let mut failed = 0;
        for (name, target) in &args.targets {
            if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
                failed += 1;
                let message = last_panic.lock().map(|s| s.clone()).unwrap_or_default();
                println!("{name}: PANIC on {}:\n{message}", file.display());
            } else {
                println!("{name}: {} passes", file.display());
            }
        }
        std::process::exit(i32::from(failed > 0));
    }
    let mut total_panics = 0u64;
    let mut passed = 0u32;
    for (name, target) in &args.targets {
        let corpus = seeds(name, &args.root);
        let mut rng = Rng(args.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let budget = Duration::from_secs_f64(args.seconds);
        let start = Instant::now();
        let (mut execs, mut panics) = (0u64, 0u64);
        let mut input = Vec::new();
        while start.elapsed() < budget {
            // The seeds as they are first, then mutations of them.
            input.clear();
            let base = &corpus[(execs as usize) % corpus.len()];
            input.extend_from_slice(base);
            if execs >= corpus.len() as u64 {
                mutate(&mut rng, &mut input, &corpus);
            }
            execs += 1;
            if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
                panics += 1;
                let _ = std::fs::create_dir_all(&args.crashes);
                let file = args.crashes.join(format!("{name}-{execs}.bin"));
                let _ = std::fs::write(&file, &input);
                let message = last_panic.lock().map(|s| s.clone()).unwrap_or_default();
                println!(
                    "{name}: PANIC on input saved to {}:\n{message}",
                    file.display()
                );
                if panics >= 5 {
                    break;
                }
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name}: {execs} executions in {secs:.1} s ({:.0}/s), {} seeds, {panics} panics",
            execs as f64 / secs.max(1e-9),
            corpus.len()
        );
        total_panics += panics;
        if panics == 0 {
            passed += 1;
        }
    }
    println!(
        "fuzz: {passed} passed, {} failed",
        args.targets.len() as u32 - passed
    );
    if total_panics > 0 {
        std::process::exit(1);
    }
}
