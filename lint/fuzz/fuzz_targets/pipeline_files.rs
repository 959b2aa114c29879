//! Arbitrary source text as two files (`a.rs`, NUL, `u.rs`): a module of a crate whose root
//! holds a sentinel chain that must still be reported, and the root of a crate it depends on.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some(text) = nosync_lint_fuzz::text(data) {
        let (a, u) = nosync_lint_fuzz::split(text);
        nosync_lint_fuzz::two_files(a, u);
    }
});
