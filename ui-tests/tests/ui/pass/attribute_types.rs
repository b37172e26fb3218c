#![deny(warnings)]
// `#[retention]` on a struct, an enum and a generic struct that convert into a `Message`,
// and the ready-made kinds `Directive` and `ProgressNote`.
use std::fmt::Display;

use favur_context::message::kinds::{Directive, ProgressNote};
use favur_context::{retention, Classify, History, Message, Retention};

#[retention(forgettable)]
struct Listing {
    files: Vec<&'static str>,
}

impl From<Listing> for Message {
    fn from(l: Listing) -> Message {
        Message::tool_result("ls", l.files.join("\n"), false)
    }
}

#[retention(fuzzy)]
enum Step {
    Thought(String),
    Observation { text: String },
}

impl From<Step> for Message {
    fn from(s: Step) -> Message {
        match s {
            Step::Thought(t) => Message::assistant(t),
            Step::Observation { text } => Message::user(text),
        }
    }
}

// Only `Note<T>` with `T: Display` converts, so only those are classified.
#[retention(strict)]
struct Note<T> {
    value: T,
}

impl<T: Display> From<Note<T>> for Message {
    fn from(n: Note<T>) -> Message {
        Message::assistant(format!("note: {}", n.value))
    }
}

fn assert_classify<T: Classify>() {}

fn main() {
    assert_classify::<Listing>();
    assert_classify::<Step>();
    assert_classify::<Note<u32>>();
    assert_classify::<Directive>();
    assert_classify::<ProgressNote>();

    let mut history = History::new();
    history.append(Listing { files: vec!["a.rs", "b.rs"] });
    history.append(Step::Thought("the bug is in the lexer".into()));
    history.append(Step::Observation { text: "tests pass".into() });
    history.append(Note { value: 3.5 });
    history.append(Directive::new("do not touch the public API"));
    history.append(ProgressNote::new("step 2 of 3 done"));

    let classes: Vec<Retention> = history.entries().iter().map(|e| e.retention()).collect();
    assert_eq!(
        classes,
        [
            Retention::Forgettable,
            Retention::Fuzzy,
            Retention::Fuzzy,
            Retention::Strict,
            Retention::Strict,
            Retention::Strict,
        ]
    );
    assert_eq!(history.entries()[3].message().text(), "note: 3.5");
    // The site of a value classified by its type is the `append` call.
    assert_eq!(history.entries()[0].site().line(), 57);
}
