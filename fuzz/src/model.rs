//! The model-based target: the input is read as a program of steps (appends of every
//! shape, pins, compactions at random windows and tiers, reopens, renders) run against a
//! journaled history, checking after each step what must hold.

use std::sync::atomic::{AtomicU64, Ordering};

use favur_context::journal::{JournaledHistory, OpenOptions};
use favur_context::message::{Media, Part, Reasoning, ToolResult};
use favur_context::store::NewEntry;
use favur_context::{Compactor, Message, Policy, Retention, Role, Store, ToolCall};

use crate::assert_renders_valid;

/// Reads the input a byte at a time (zeros once it is used up).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }

    fn class(&mut self) -> Retention {
        [Retention::Forgettable, Retention::Fuzzy, Retention::Strict][usize::from(self.next() % 3)]
    }

    /// Some text: words, and now and then something that looks like markup.
    fn text(&mut self) -> String {
        let n = usize::from(self.next()) * 3;
        let flavour = self.next();
        let word = match flavour % 9 {
            0 => "</context-summary> ",
            1 => "[directive] ",
            2 => "User: ",
            3 => "```bash\nls -R\n``` ",
            4 => "é✓ ",
            // An observation's markup, diff headers and a listing's directory, as the
            // built-in summarizer reads them.
            5 => "<returncode>1</returncode>\n<warning>\nlong\n</warning><output_head>\n<a>\n",
            6 => "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n",
            7 => "./src/é:\nlib.rs\n<</ \n",
            // A Python traceback (its frames join their source lines) and lines a search
            // numbers (`585:` a match, `584-` its context), with C1 controls.
            _ if flavour % 27 == 17 => {
                "  File \"/a\u{85}é.py\", line 3, in f\u{85}\n    g(\u{9f}x)\n  File \"b.py\", line 9, in g\n"
            }
            _ if flavour % 27 == 26 => "585:    def f(\u{85}é):\n584-  x = 1\n",
            _ => "word ",
        };
        word.repeat(n / word.len() + 1)
    }

    /// A call id from a small pool, so that ids repeat.
    fn call_id(&mut self) -> String {
        match self.next() % 8 {
            7 => String::new(),
            k => format!("c{k}"),
        }
    }
}

/// The history's state that reopening must give back.
fn state(j: &JournaledHistory) -> (u64, usize, String, u64) {
    let h = j.history();
    (
        h.next_id().0,
        h.compactions().len(),
        format!("{:?}", h.view()),
        h.usage_tokens(),
    )
}

/// Runs the program in `data` against a journal in a fresh temporary directory.
///
/// ```
/// favur_context_fuzz::model(&[0, 10, 1, 2, 3, 5, 6, 7, 2, 4, 1, 7, 6]);
/// ```
pub fn model(data: &[u8]) {
    static RUN: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "favur-fuzz-model-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("model.jsonl");
    let result = std::panic::catch_unwind(|| run(data, &path));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

fn run(data: &[u8], path: &std::path::Path) {
    let mut input = Bytes(data);
    let mut j = OpenOptions::new().open(path).expect("a new journal");
    let mut steps = 0;
    while !input.0.is_empty() && steps < 64 {
        steps += 1;
        match input.next() % 9 {
            0 => {
                let m = Message::user(input.text()).classify(input.class());
                j.append(m).expect("appends");
            }
            1 => {
                let m = Message::assistant(input.text()).classify(input.class());
                j.append(m).expect("appends");
            }
            2 => {
                let n = usize::from(input.next() % 4) + 1;
                let mut parts = vec![Part::Text(input.text())];
                // Reasoning of either provider leads the calls it came with.
                match input.next() % 3 {
                    0 => parts.insert(
                        0,
                        Part::Reasoning(Box::new(Reasoning::anthropic(input.text(), "SIG"))),
                    ),
                    1 => parts.insert(
                        0,
                        Part::Reasoning(Box::new(Reasoning::openai(
                            input.call_id() + "rs",
                            [input.text()],
                            Some("ENC".into()),
                        ))),
                    ),
                    _ => {}
                }
                for _ in 0..n {
                    let id = input.call_id();
                    parts.push(Part::ToolCall(Box::new(ToolCall::new(
                        id,
                        "bash",
                        serde_json::json!({"command": "ls"}),
                    ))));
                }
                let m = Message::new(Role::Assistant, parts).classify(input.class());
                // Empty or repeated ids are refused, with nothing recorded.
                let refused = m.message().check_call_ids().is_err();
                let before = state(&j);
                match j.record(vec![NewEntry::appended(m)]) {
                    Ok(_) => assert!(!refused, "a message with ambiguous call ids was recorded"),
                    Err(_) => {
                        assert!(refused, "a message was refused");
                        assert_eq!(state(&j), before, "a refused record changed the history");
                    }
                }
            }
            3 => {
                let mut m = Message::new(
                    Role::Tool,
                    vec![Part::ToolResult(ToolResult {
                        call_id: input.call_id(),
                        content: input.text(),
                        is_error: input.next() % 4 == 0,
                    })],
                );
                // A tool that returned an image (kept with its result).
                if input.next() % 3 == 0 {
                    m.parts.push(Part::Image(Box::new(Media::base64(
                        "image/png",
                        "iVBORw0KGgo=",
                    ))));
                }
                j.append(m.classify(input.class())).expect("appends");
            }
            4 => {
                let role = if input.next() % 2 == 0 {
                    Role::System
                } else {
                    Role::User
                };
                let m = Message::new(role, vec![Part::Text(input.text())]);
                j.pin(m.classify(Retention::Strict)).expect("pins");
            }
            5 => {
                let window = 500 + u64::from(input.next()) * 100;
                let policy = Policy::builder()
                    .window_tokens(window)
                    .entry_cap_tokens(if input.next() % 2 == 0 {
                        Some(64)
                    } else {
                        None
                    })
                    .build()
                    .expect("a valid policy");
                let tiers = policy.tiers().len() as u8;
                let mut compactor = Compactor::new(policy);
                match std::num::NonZeroU8::new(input.next() % (tiers + 1)) {
                    None => compactor
                        .compact(&mut j)
                        .expect("the engine's compaction applies"),
                    Some(tier) => compactor
                        .compact_at(&mut j, tier)
                        .expect("the engine's compaction applies"),
                };
            }
            6 => {
                let before = state(&j);
                drop(j);
                j = OpenOptions::new().open(path).expect("reopens");
                assert!(j.report().is_clean(), "{:?}", j.report());
                assert_eq!(state(&j), before, "the reopened journal differs");
            }
            7 => assert_renders_valid(j.history()),
            _ => {
                // The JSON form round-trips.
                let full = j.history().full_copy().expect("every original reads back");
                let back =
                    favur_context::History::from_json(&full.to_json()).expect("its own JSON loads");
                assert_eq!(back.view(), full.view(), "the JSON form differs");
                assert_eq!(back.usage_tokens(), full.usage_tokens());
            }
        }
    }
    assert_renders_valid(j.history());
}
