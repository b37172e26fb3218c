// Without a `&mut ...History` parameter, every `&mut` parameter is taken as a history; one
// that is not a history is reported as such, at the parameter, naming what is accepted.
use favur_context::retention;

#[retention(fuzzy)]
fn collect(lines: &mut Vec<String>, other: &mut Vec<String>) {
    lines.append(other);
}

fn main() {
    collect(&mut Vec::new(), &mut Vec::new());
}
