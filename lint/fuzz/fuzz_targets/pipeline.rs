//! Arbitrary source text as the root file of a crate, through the whole pipeline.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some(text) = nosync_lint_fuzz::text(data) {
        nosync_lint_fuzz::one_file(text);
    }
});
