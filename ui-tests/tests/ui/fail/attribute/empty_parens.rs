use favur_context::{retention, Message};

#[retention()]
struct Note(String);

impl From<Note> for Message {
    fn from(n: Note) -> Message {
        Message::user(n.0)
    }
}

fn main() {}
