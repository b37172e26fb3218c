// A function without any `&mut` parameter or `&mut self` has nothing to append to.
use favur_context::{retention, History};

#[retention(strict)]
fn summarize(history: &History, limit: usize) -> usize {
    history.len().min(limit)
}

fn main() {
    summarize(&History::new(), 3);
}
