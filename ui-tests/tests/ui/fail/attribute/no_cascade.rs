// A misspelled class is the only error: the type is still emitted and classified (with a
// stub), so its uses below do not add "has no retention class" errors.
use favur_context::{retention, History, Message};

#[retention(fuzy)]
struct View(String);

impl From<View> for Message {
    fn from(v: View) -> Message {
        Message::user(v.0)
    }
}

#[retention(forgetable)]
fn record(history: &mut History) {
    history.append("listing");
    history.append(View("a.rs".into()));
}

fn main() {
    let mut history = History::new();
    history.append(View("b.rs".into()));
    record(&mut history);
}
