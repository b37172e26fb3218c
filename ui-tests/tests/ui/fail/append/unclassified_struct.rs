// Converting into a `Message` is not enough: the type needs `#[retention(...)]`.
use favur_context::{History, Message};

struct Listing(String);

impl From<Listing> for Message {
    fn from(l: Listing) -> Message {
        Message::user(l.0)
    }
}

fn main() {
    let mut history = History::new();
    history.append(Listing("a.rs".into()));
}
