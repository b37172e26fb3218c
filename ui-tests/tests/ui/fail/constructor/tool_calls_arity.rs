use favur_context::fuzzy;

fn main() {
    let _ = fuzzy!(tool_calls: [("c1", "read", "{}"), ("c2", "read")]);
}
