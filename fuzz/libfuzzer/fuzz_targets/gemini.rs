#![no_main]
// cargo +nightly fuzz run gemini (from fuzz/libfuzzer); the stable driver runs the same target.
libfuzzer_sys::fuzz_target!(|data: &[u8]| favur_context_fuzz::gemini(data));
