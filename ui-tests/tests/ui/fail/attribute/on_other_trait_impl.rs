use std::fmt;

use favur_context::retention;

struct Listing;

#[retention(forgettable)]
impl fmt::Display for Listing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a.rs")
    }
}

fn main() {
    println!("{Listing}");
}
