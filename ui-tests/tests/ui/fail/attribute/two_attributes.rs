use favur_context::{retention, History, Message};

#[retention(strict)]
#[retention(fuzzy)]
struct Plan(String);

impl From<Plan> for Message {
    fn from(p: Plan) -> Message {
        Message::assistant(p.0)
    }
}

fn main() {
    History::new().append(Plan("reproduce, fix, test".into()));
}
