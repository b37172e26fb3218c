use favur_context::strict;

fn main() {
    let _ = strict!(user "the plan");
}
