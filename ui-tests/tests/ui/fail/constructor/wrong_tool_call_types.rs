use favur_context::forgettable;

fn main() {
    let _ = forgettable!(tool_call: 1, "list_dir", "{}");
    let _ = forgettable!(tool_call: "c2", 'x', "{}");
    let _ = forgettable!(tool_call: "c3", "list_dir", 42);
}
