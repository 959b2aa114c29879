//! Arbitrary source text analysed twice in one process: the results must be equal.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some(text) = nosync_lint_fuzz::text(data) {
        nosync_lint_fuzz::one_file_twice(text);
    }
});
