use favur_context::{retention, History};

#[retention(favur_context::class::Fuzzy)]
fn record(history: &mut History) {
    history.append("a file view");
}

fn main() {}
