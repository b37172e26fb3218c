// Inside a `#[retention(...)]` function, only calls on its history parameters take plain
// content: not a nested function's parameter, a local history, or a closure's parameter
// that shadows the parameter's name.
use favur_context::{retention, History};

#[retention(fuzzy)]
fn record(history: &mut History) {
    history.append("fine here");

    fn nested(history: &mut History) {
        history.append("not in a nested function");
    }
    nested(history);

    let mut local = History::new();
    local.append("not on a local history");

    let add = |history: &mut History| {
        history.append("not on a closure's own parameter");
    };
    add(&mut local);
}

fn main() {}
