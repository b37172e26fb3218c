//! Test helper for the kill test (`tests/journal_kill.rs`): opens the journal named by its
//! first argument, then appends (and now and then compacts) in a loop, printing each
//! acknowledged step to stdout only after the call returned:
//!
//! - `A <id>` after an append of the message [`message_text`]`(id)` returned `Ok(id)`;
//! - `C <next id> engine` after the `Compactor` compacted the journal (tried every 10
//!   appends), `C <next id>` after a compaction built here was applied with `apply`
//!   (every 25 appends);
//! - `B <first id> <n>` after a batch of `n` entries ([`batch_text`]) recorded with
//!   `Store::record` returned (every 7 appends): one long line, so that some kills land
//!   in the middle of a batch.
//!
//! It runs until killed, or stops by itself after 30 seconds.

use std::io::Write;
use std::num::NonZeroU8;
use std::time::{Duration, Instant};

use favur_context::compact::{Compaction, Edit};
use favur_context::journal::{Durability, JournaledHistory, OpenOptions};
use favur_context::message::{CallSite, EntryKind};
use favur_context::render::Form;
use favur_context::store::NewEntry;
use favur_context::{Compactor, Entry, Message, Policy, Retention, Store};

/// The tier the writer compacts at.
const TIER_2: NonZeroU8 = NonZeroU8::new(2).unwrap();

fn main() {
    if let Err(e) = run() {
        eprintln!("journal_writer: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: journal_writer <journal> [flush|sync]")?;
    let durability = match args.next().as_deref() {
        Some("sync") => Durability::SyncEvery(16),
        _ => Durability::Flush,
    };
    let mut history = OpenOptions::new().durability(durability).open(&path)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let started = Instant::now();
    let classes = [Retention::Forgettable, Retention::Fuzzy, Retention::Strict];
    let mut n = 0usize;
    let mut compactor = Compactor::new(Policy::default());
    while started.elapsed() < Duration::from_secs(30) {
        n += 1;
        let next = history.history().next_id();
        let text = message_text(next.0);
        let class = classes[n % classes.len()];
        let message = if n.is_multiple_of(2) {
            Message::assistant(text)
        } else {
            Message::user(text)
        };
        let id = history.append(message.classify(class))?;
        writeln!(out, "A {}", id.0)?;
        out.flush()?;
        if n.is_multiple_of(10) {
            // The compaction engine, recording into the journal like into any store.
            if compactor.compact_at(&mut history, TIER_2)?.is_some() {
                writeln!(out, "C {} engine", history.history().next_id().0)?;
                out.flush()?;
            }
        } else if n.is_multiple_of(7) {
            let first = history.history().next_id().0;
            let batch = (0..BATCH)
                .map(|k| NewEntry::appended(Message::user(batch_text(first, k)).classify(class)))
                .collect();
            let id = history.record(batch)?;
            writeln!(out, "B {} {BATCH}", id.0)?;
            out.flush()?;
        } else if n.is_multiple_of(25) {
            compact(&mut history)?;
            writeln!(out, "C {}", history.history().next_id().0)?;
            out.flush()?;
        }
    }
    Ok(())
}

/// Entries in each batch.
pub const BATCH: u64 = 12;

/// The text of entry `k` of the batch whose first id is `first`: `batch <first> <k>`
/// and a 4 KiB padding.
pub fn batch_text(first: u64, k: u64) -> String {
    format!("batch {first} {k} {}", "y".repeat(4096))
}

/// The text of the message appended with id `id`: `message <id>`, and for one id in ten a
/// 64 KiB padding after it, so that some kills land in the middle of a long write.
pub fn message_text(id: u64) -> String {
    let mut text = format!("message {id}");
    if id % 10 == 7 {
        text.push(' ');
        text.push_str(&"x".repeat(1 << 16));
    }
    text
}

/// Summarizes the three oldest verbatim items of the view, drops the next one, and caps
/// the one after that.
fn compact(history: &mut JournaledHistory) -> Result<(), Box<dyn std::error::Error>> {
    let items: Vec<_> = history
        .history()
        .view()
        .items()
        .iter()
        .filter(|i| i.form == Form::Verbatim)
        .map(|i| i.id)
        .take(5)
        .collect();
    if items.len() < 5 {
        return Ok(());
    }
    let summary = Entry::new(
        history.history().next_id(),
        Retention::Fuzzy,
        3,
        CallSite::new("journal_writer", 1, 1),
        EntryKind::Summary {
            replaces: items[..3].to_vec(),
        },
        Message::assistant(format!("summary of {:?}", &items[..3])),
    );
    history.apply(Compaction {
        tier: TIER_2,
        edits: vec![
            Edit::Summarize {
                summary: summary.into(),
            },
            Edit::Drop { id: items[3] },
            Edit::Reform {
                id: items[4],
                form: Form::capped(&*history.history().recall(items[4])?, 4),
                tokens: 1,
            },
        ],
        usage_after: None,
    })?;
    Ok(())
}
