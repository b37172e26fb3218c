// Plain content is accepted only inside a `#[retention(...)]` function; the helper it
// calls has no class of its own.
use favur_context::{retention, History};

#[retention(fuzzy)]
fn record(history: &mut History) {
    history.append("fine here");
    helper(history);
}

fn helper(history: &mut History) {
    history.append("not here");
}

fn main() {
    record(&mut History::new());
}
