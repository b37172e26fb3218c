// `crate = ...` names the path of the favur-context dependency.
use favur_context::{retention, History};

#[retention(strict, crate = 42)]
fn record(history: &mut History) {
    history.append("the plan");
}

fn main() {}
