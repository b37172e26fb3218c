use favur_context::History;

fn main() {
    let mut history = History::new();
    history.append("some text");
}
