// Data-driven paths name a class at run time with `Message::classify`.
use favur_context::{History, Message, Retention};

fn class_for(tool: &str) -> Retention {
    match tool {
        "ls" => Retention::Forgettable,
        "cat" => Retention::Fuzzy,
        _ => Retention::Strict,
    }
}

fn main() {
    let mut history = History::new();
    for (tool, output) in [("ls", "a.rs"), ("cat", "fn main() {}"), ("cargo test", "FAILED")] {
        history.append(Message::tool_result(tool, output, false).classify(class_for(tool)));
    }
    let classes: Vec<Retention> = history.entries().iter().map(|e| e.retention()).collect();
    assert_eq!(classes, Retention::ALL);
    assert_eq!(history.entries()[0].site().line(), 15);
}
