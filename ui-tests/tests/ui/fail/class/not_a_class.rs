// Code generic over classes accepts only the three sealed classes.
use favur_context::message::class::Class;

fn retention_of<C: Class>() -> favur_context::Retention {
    C::RETENTION
}

#[derive(Clone, Copy)]
struct Important;

fn main() {
    let _ = retention_of::<Important>();
}
