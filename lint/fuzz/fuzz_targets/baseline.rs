//! An arbitrary `--baseline` file, applied to the findings of a small fixed crate.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some(text) = nosync_lint_fuzz::text(data) {
        nosync_lint_fuzz::baseline_file(text);
    }
});
