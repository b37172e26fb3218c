use favur_context::strict;

fn main() {
    let _ = strict!(message: 42);
}
