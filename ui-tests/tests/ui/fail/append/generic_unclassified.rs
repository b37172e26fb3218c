// A generic append site must require `Classify`, not accept anything.
use favur_context::History;

fn record<T>(history: &mut History, value: T) {
    history.append(value);
}

fn main() {}
