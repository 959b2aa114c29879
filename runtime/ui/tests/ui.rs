//! The attributes at compile time: one `.stderr` per rejection (`ui/fail/`), and one file using
//! every accepted form (`ui/pass/`). `TRYBUILD=overwrite cargo test -p nosync-ui` refreshes the
//! `.stderr` files.
#![cfg(not(nosync_off))]

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
