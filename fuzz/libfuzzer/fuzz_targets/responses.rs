#![no_main]
// cargo +nightly fuzz run responses (from fuzz/libfuzzer); the stable driver runs the same target.
libfuzzer_sys::fuzz_target!(|data: &[u8]| favur_context_fuzz::responses(data));
