use favur_context::fuzzy;

fn main() {
    let _ = fuzzy!(banana: "a file view");
}
