use favur_context::strict;

fn main() {
    let call_id = 7_u64;
    let _ = strict!(tool_result(call_id): "exit status 1");
}
