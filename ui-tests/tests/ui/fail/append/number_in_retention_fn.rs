// Inside a `#[retention(...)]` function `append` takes text, a `Message` or a classified
// value; anything else is reported as such.
use favur_context::{retention, History};

#[retention(strict)]
fn record(history: &mut History, exit_code: i32) {
    history.append(exit_code);
}

fn main() {}
