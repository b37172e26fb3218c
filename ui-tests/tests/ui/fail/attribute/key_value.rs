use favur_context::{retention, History};

#[retention(class = strict)]
fn record(history: &mut History) {
    history.append("the plan");
}

fn main() {}
