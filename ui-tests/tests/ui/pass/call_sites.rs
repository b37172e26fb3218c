// The call site recorded by the macros is the user's invocation (line and column of
// `strict!`), not a location inside the macro; the function form records the `append` line
// and column, both when the call is dispatched (a `&mut History` parameter) and when it is
// forwarded to the receiver's own `append` (`&mut self`).
use favur_context::{retention, strict, History};

#[retention(fuzzy)]
fn in_fn(history: &mut History) {
    history.append("plain");
}

trait Note {
    fn note(&mut self);
}

impl Note for History {
    #[retention(strict)]
    fn note(&mut self) {
        self.append("noted");
    }
}

macro_rules! wrapped {
    ($text:expr) => {
        favur_context::forgettable!(user: $text)
    };
}

fn main() {
    let mut history = History::new();
    history.append(strict!(user: "a"));
    let c = strict!(assistant: "b");
    history.append(c);
    in_fn(&mut history);
    history.append(wrapped!("c"));
    history.note();

    let sites: Vec<(u32, u32)> = history
        .entries()
        .iter()
        .map(|e| (e.site().line(), e.site().column()))
        .collect();
    // Macros: the column of `strict!`. The function form: rustc's `#[track_caller]`
    // location of a method call, which is the method name `append`.
    assert_eq!(sites, [(31, 20), (32, 13), (9, 13), (35, 20), (19, 14)]);
    assert!(history.entries()[0].site().file().ends_with("call_sites.rs"));
}
