// Inside a `#[retention(...)]` function the history parameter classifies plain content;
// it is passed on to code expecting `&mut History` as `&mut history`, not by value.
use favur_context::{retention, strict, History};

fn helper(history: &mut History) {
    history.append(strict!(user: "from a helper"));
}

#[retention(fuzzy)]
fn record(history: &mut History) {
    history.append("a file view");
    helper(history);
}

fn main() {
    record(&mut History::new());
}
