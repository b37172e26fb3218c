use favur_context::{retention, History};

trait Journal {
    #[retention(strict)]
    fn note(&mut self, history: &mut History);
}

fn main() {}
