use favur_context::fuzzy;

fn main() {
    let _ = fuzzy!("a file view");
}
