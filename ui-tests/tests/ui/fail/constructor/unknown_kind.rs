use favur_context::strict;

fn main() {
    let _ = strict!(usr: "the plan");
}
