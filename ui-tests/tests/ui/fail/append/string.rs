use favur_context::History;

fn main() {
    let mut history = History::new();
    let output = String::from("cargo test: 3 failed");
    history.append(output);
}
