use favur_context::retention;

#[retention(strict)]
fn plan(steps: &mut Vec<String>) {
    steps.push("reproduce".into());
}

fn main() {
    plan(&mut Vec::new());
}
