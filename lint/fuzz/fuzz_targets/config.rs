//! An arbitrary configuration file, as `--config` and as a manifest's metadata tables,
//! matched against a small fixed crate.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some(text) = nosync_lint_fuzz::text(data) {
        nosync_lint_fuzz::config_file(text);
    }
});
