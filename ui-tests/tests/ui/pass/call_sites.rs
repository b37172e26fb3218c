// The call site recorded by the macros is the user's invocation (line and column of
// `strict!`), not a location inside the macro; the function form records the `append` line.
use favur_context::{retention, strict, History};

#[retention(fuzzy)]
fn in_fn(history: &mut History) {
    history.append("plain");
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

    let sites: Vec<(u32, u32)> = history
        .entries()
        .iter()
        .map(|e| (e.site().line(), e.site().column()))
        .collect();
    // Macros: the column of `strict!`. The function form: rustc's `#[track_caller]`
    // location of a method call, which is the method name `append`.
    assert_eq!(sites, [(18, 20), (19, 13), (7, 13), (22, 20)]);
    assert!(history.entries()[0].site().file().ends_with("call_sites.rs"));
}
