use favur_context::History;

fn main() {
    let mut history = History::new();
    history.pin("You are a coding agent.");
}
