use favur_context::{retention, History};

#[retention(strict)]
trait Journal {
    fn note(&mut self, history: &mut History);
}

fn main() {}
