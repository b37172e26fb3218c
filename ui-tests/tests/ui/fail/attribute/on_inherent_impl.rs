use favur_context::{retention, History};

struct Agent;

#[retention(strict)]
impl Agent {
    fn plan(&self, history: &mut History) {
        let _ = history;
    }
}

fn main() {
    Agent.plan(&mut History::new());
}
