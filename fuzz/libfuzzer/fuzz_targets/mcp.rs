#![no_main]
// cargo +nightly fuzz run mcp (from fuzz/libfuzzer); the stable driver runs the same target.
libfuzzer_sys::fuzz_target!(|data: &[u8]| favur_context_fuzz::mcp(data));
