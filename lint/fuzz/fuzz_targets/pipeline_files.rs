//! Arbitrary source text as two module files (`a.rs`, NUL, `b.rs`) of a crate whose root
//! holds a sentinel chain that must still be reported.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some(text) = nosync_lint_fuzz::text(data) {
        let (a, b) = nosync_lint_fuzz::split(text);
        nosync_lint_fuzz::two_files(a, b);
    }
});
