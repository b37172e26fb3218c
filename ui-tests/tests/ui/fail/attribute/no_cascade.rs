// A misspelled class is the only error: the type, function and tool are still emitted and
// classified (with a stub), so their uses below do not add "has no retention class" errors.
use favur_context::{retention, History, Message, tools::Tool, ToolCall};

#[path = "../../tool_methods.rs"]
#[macro_use]
mod tool_methods;

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

struct Ls;

#[retention(strickt)]
impl Tool for Ls {
    tool_methods!("ls", |_| Ok("a.rs".into()));
}

fn main() {
    let mut history = History::new();
    history.append(View("b.rs".into()));
    record(&mut history);
    history.run_tool(&Ls, &ToolCall::new("c1", "ls", "{}"));
}
