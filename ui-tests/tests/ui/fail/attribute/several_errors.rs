// Every problem of one attribute is reported at once.
use favur_context::retention;

#[retention(stric, "fuzzy", class = forgettable)]
static PLAN: &str = "the plan";

fn main() {
    let _ = PLAN;
}
