use favur_context::strict;

struct Plan;

fn main() {
    let _ = strict!(assistant: Plan);
}
