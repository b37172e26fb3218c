// A classified type must convert into a `Message`.
use favur_context::retention;

#[retention(strict)]
struct Plan {
    steps: Vec<String>,
}

fn main() {
    let _ = Plan { steps: Vec::new() }.steps;
}
