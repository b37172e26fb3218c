use favur_context::retention;

#[retention(fuzzy)]
mod views {
    pub fn view() {}
}

fn main() {
    views::view();
}
