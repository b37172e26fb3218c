use favur_context::{retention, History};

#[retention(stric)]
fn record(history: &mut History) {
    history.append("the plan");
}

fn main() {}
