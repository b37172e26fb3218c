use favur_context::forgettable;

fn main() {
    let _ = forgettable!(tool_call: "call_1", "list_dir");
}
