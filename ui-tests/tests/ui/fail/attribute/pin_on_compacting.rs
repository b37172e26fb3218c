// A `CompactingHistory` takes plain content in `append`, but it has no `pin`.
use favur_context::{retention, CompactingHistory};

#[retention(strict)]
fn record(history: &mut CompactingHistory) {
    history.append("fine");
    history.pin("a system prompt");
}

fn main() {}
