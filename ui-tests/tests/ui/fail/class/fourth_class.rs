// The classes are sealed: user code cannot invent a fourth one.
use favur_context::message::class::Class;
use favur_context::Retention;

#[derive(Clone, Copy)]
struct Important;

impl Class for Important {
    const RETENTION: Retention = Retention::Strict;
}

fn main() {}
