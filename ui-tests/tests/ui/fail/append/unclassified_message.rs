use favur_context::{History, Message};

fn main() {
    let mut history = History::new();
    history.append(Message::user("a message with no class"));
}
