#![deny(warnings)]
// `#[retention]` on functions: free, generic, async, methods with `&mut self`, a fully
// qualified `&mut favur_context::History`, a `mut` parameter, two history parameters.
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use favur_context::message::kinds::Directive;
use favur_context::{fuzzy, retention, strict, Classify, History, Message, Retention};

#[retention(forgettable)]
fn record_listing(history: &mut History, files: &[&str]) {
    history.append(files.join("\n"));
}

#[retention(fuzzy)]
fn record_view<T: AsRef<str>>(path: T, history: &mut favur_context::History) -> usize {
    history.append(format!("viewed {}", path.as_ref()));
    history.append(&String::from("a &String"));
    history.append(Message::assistant("a Message takes the function's class"));
    // A value with a class of its own keeps it.
    history.append(Directive::new("keep this exact"));
    // The parameter is the `&mut History` it was declared as, and is passed on as it is.
    helper(history);
    history.len()
}

fn helper(history: &mut History) {
    history.append(fuzzy!(user: "from a helper"));
}

#[retention(strict)]
async fn record_trace(history: &mut History, trace: String) {
    std::future::ready(()).await;
    history.append(trace);
}

#[retention(strict)]
fn two_histories(mut a: &mut History, b: &mut ::favur_context::History) {
    a.append("to a");
    b.append("to b");
    a.pin("a pinned system prompt");
    // A `mut` parameter can also be passed on as `&mut a` (a `&mut &mut History`).
    helper(&mut a);
}

// A generic value with a class of its own keeps it.
#[retention(forgettable)]
fn record_any<T: Classify>(history: &mut History, value: T) {
    history.append(value);
}

struct Agent {
    steps: u32,
}

impl Agent {
    #[retention(fuzzy)]
    fn think(&mut self, history: &mut History, thought: &str) {
        self.steps += 1;
        history.append(format!("step {}: {thought}", self.steps));
    }

    #[retention(strict)]
    pub(crate) fn plan(&self, history: &mut History) {
        history.append(String::from("the plan"));
    }
}

fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

fn main() {
    let mut history = History::new();
    record_listing(&mut history, &["a.rs", "b.rs"]);
    assert_eq!(record_view("src/lib.rs", &mut history), 6);
    let trace = record_trace(&mut history, "thread main panicked".into());
    // The future holds the classed history across an await point and stays `Send`.
    fn assert_send<T: Send>(_: &T) {}
    assert_send(&trace);
    block_on(trace);
    let mut agent = Agent { steps: 0 };
    agent.think(&mut history, "read the lexer");
    agent.plan(&mut history);
    let mut other = History::new();
    two_histories(&mut history, &mut other);
    record_any(&mut history, strict!(user: "generic"));

    let got: Vec<(Retention, String)> = history
        .entries()
        .iter()
        .map(|e| (e.retention(), e.message().text()))
        .collect();
    assert_eq!(
        got,
        [
            (Retention::Forgettable, "a.rs\nb.rs".to_owned()),
            (Retention::Fuzzy, "viewed src/lib.rs".to_owned()),
            (Retention::Fuzzy, "a &String".to_owned()),
            (Retention::Fuzzy, "a Message takes the function's class".to_owned()),
            (Retention::Strict, "[directive] keep this exact".to_owned()),
            (Retention::Fuzzy, "from a helper".to_owned()),
            (Retention::Strict, "thread main panicked".to_owned()),
            (Retention::Fuzzy, "step 1: read the lexer".to_owned()),
            (Retention::Strict, "the plan".to_owned()),
            (Retention::Strict, "to a".to_owned()),
            (Retention::Strict, "a pinned system prompt".to_owned()),
            (Retention::Fuzzy, "from a helper".to_owned()),
            (Retention::Strict, "generic".to_owned()),
        ]
    );
    assert_eq!(history.pinned().len(), 1);
    assert_eq!(other.entries()[0].retention(), Retention::Strict);
    // The recorded site is the user's own `append` line inside the function.
    assert_eq!(history.entries()[0].site().line(), 13);
    assert_eq!(history.entries()[1].site().line(), 18);
}
