//! Shared machinery for the end-to-end tests in `tests/tests/`.
//!
//! - [`fixture`]: the fixture crates under `fixtures/` and how the lint is invoked on them.
//! - [`annotations`]: the `//~ CODE` expectations written in the fixtures' sources.
//! - [`reported`]: the diagnostics the lint actually reported, as `(file, line, code)`.
//! - [`golden`]: path normalisation, blessing and line diffs for the golden files.
//!
//! Nothing here prints or panics on fixture content: errors come back as `String`s
//! that the tests turn into one failure message listing every fixture.

pub mod annotations;
pub mod fixture;
pub mod golden;
pub mod reported;

/// `NOSYNC_BLESS=1` (or any value but `0`/empty) rewrites goldens and fixture lock files.
pub fn blessing() -> bool {
    std::env::var_os("NOSYNC_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}
