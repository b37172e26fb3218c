use favur_context::retention;

#[retention(strict)]
const PLAN: &str = "the plan";

fn main() {
    let _ = PLAN;
}
