use favur_context::{retention, History};

#[retention]
fn record(history: &mut History) {
    history.append("the plan");
}

fn main() {}
