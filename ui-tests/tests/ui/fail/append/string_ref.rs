use favur_context::History;

fn main() {
    let mut history = History::new();
    let text = String::from("some text");
    history.append(&text);
}
