//! A worker of the store fleet test (`tests/stores_fleet.rs`): claims up to `max` of the
//! sessions named on its command line on one PostgreSQL server, and drives each one it
//! holds (appends, compactions through the `Compactor`, recalls of evicted originals), reporting each step on
//! stdout only after it was acknowledged:
//!
//! - `E <session> <epoch>` after it claimed a session;
//! - `A <session> <id>` after the append of the text [`text`]`(session, id)` returned
//!   `Ok(id)`;
//! - `F <session>` when a write was refused as fenced (it then drops the session).
//!
//! A recall that does not give back what was appended exits with status 3. It runs
//! until the stop file exists (then it closes its stores) or it is killed, or stops by
//! itself after 60 seconds.
//!
//! Usage: `store_fleet_worker <config> <stop file> <lease ms> <max> <session>...`

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use favur_context::compact::{BuiltinSummarizer, Ready};
use favur_context::store::{NewEntry, PgStore, SessionOptions, StoreError};
use favur_context::{AsyncStore, Compactor, EntryId, Message, Policy, Retention, ToolCall};

/// The text of the entry with id `id` in `session`.
fn text(session: &str, id: EntryId) -> String {
    format!("{session}#{} {}", id.0, "payload ".repeat(20))
}

struct Held {
    store: PgStore,
    compactor: Compactor<Ready<BuiltinSummarizer>>,
    acked: Vec<EntryId>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        eprintln!("usage: store_fleet_worker <config> <stop file> <lease ms> <max> <session>...");
        std::process::exit(2);
    }
    let code = favur_context_tests::block_on(run(&args));
    std::process::exit(code);
}

async fn run(args: &[String]) -> i32 {
    let (config, stop) = (&args[0], Path::new(&args[1]));
    let lease = Duration::from_millis(args[2].parse().unwrap_or(500));
    let max: usize = args[3].parse().unwrap_or(2);
    let sessions = &args[4..];
    let options = SessionOptions::new().lease(lease);
    let mut held: BTreeMap<String, Held> = BTreeMap::new();
    let mut out = std::io::stdout().lock();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut step = 0u64;
    while !stop.exists() && Instant::now() < deadline {
        step += 1;
        for s in sessions {
            if held.len() >= max || held.contains_key(s) {
                continue;
            }
            match PgStore::open_with(config, s, &options).await {
                Ok(store) => {
                    let _ = writeln!(out, "E {s} {}", store.claim().epoch());
                    let _ = out.flush();
                    let policy = Policy::for_window(4_000).expect("a valid window");
                    let compactor =
                        Compactor::with_summarizer(policy, Ready(BuiltinSummarizer::default()));
                    held.insert(
                        s.clone(),
                        Held {
                            store,
                            compactor,
                            acked: Vec::new(),
                        },
                    );
                }
                Err(StoreError::Claimed { .. }) => {}
                Err(e) => eprintln!("open {s}: {e}"),
            }
        }
        let mut dropped = Vec::new();
        for (s, h) in held.iter_mut() {
            // A tool call and its result, recorded all or none.
            let first = h.store.history().next_id();
            let result = EntryId(first.0 + 1);
            let call = ToolCall::new(format!("c{}", first.0), "ls", "{}");
            let batch = vec![
                NewEntry::appended(Message::assistant_calls([call]).classify(Retention::Fuzzy)),
                NewEntry::appended(
                    Message::tool_result(format!("c{}", first.0), text(s, result), false)
                        .classify(Retention::Forgettable),
                ),
            ];
            match h.store.record(batch).await {
                Ok(got) if got == first => {
                    h.acked.push(result);
                    let _ = writeln!(out, "A {s} {}", first.0);
                    let _ = out.flush();
                }
                Ok(got) => {
                    eprintln!("{s}: recorded at {got}, expected {first}");
                    return 3;
                }
                Err(StoreError::Fenced { .. }) => {
                    let _ = writeln!(out, "F {s}");
                    let _ = out.flush();
                    dropped.push(s.clone());
                    continue;
                }
                Err(e) => {
                    eprintln!("record {s}: {e}");
                    dropped.push(s.clone());
                    continue;
                }
            }
            if step.is_multiple_of(4)
                && let Err(e) = h.compactor.compact_async(&mut h.store).await
            {
                eprintln!("compact {s}: {e}");
                dropped.push(s.clone());
                continue;
            }
            if step.is_multiple_of(3) {
                let pick = h.acked[(step as usize * 7) % h.acked.len()];
                match h.store.history().recall(pick) {
                    Ok(e)
                        if e.message()
                            .tool_results()
                            .next()
                            .map(|r| r.content.as_str())
                            == Some(text(s, pick).as_str()) => {}
                    Ok(e) => {
                        eprintln!("{s}: recall of {pick} gave {e:?}");
                        return 3;
                    }
                    Err(e) => eprintln!("recall {s} {pick}: {e}"),
                }
            }
        }
        for s in dropped {
            held.remove(&s);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for (_, h) in held {
        let _ = h.store.close().await;
    }
    0
}
