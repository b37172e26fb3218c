use favur_context::forgettable;

fn main() {
    let _ = forgettable!(tool_result: "a.rs\nb.rs");
}
