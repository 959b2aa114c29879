//! Shared machinery for the end-to-end tests in `tests/tests/`.
//!
//! - [`fixture`]: the fixture crates under `fixtures/` and how the lint is invoked on them.
//! - [`annotations`]: the `//~ CODE` expectations written in the fixtures' sources.
//! - [`reported`]: the diagnostics the lint actually reported, as `(file, line, code)`.
//! - [`golden`]: the text of the golden snapshots (insta, in `tests/golden/`), paths normalised.
//! - [`run`]: the lint run in process with its output captured.
//!
//! Nothing here prints or panics on fixture content: errors come back as `String`s
//! that the tests turn into one failure message listing every fixture.

pub mod annotations;
pub mod fixture;
pub mod golden;
pub mod reported;
pub mod run;

/// `NOSYNC_UPDATE_LOCKS=1` (or any value but `0`/empty): `fixtures_check` refreshes the
/// fixtures' lock files instead of checking with `--locked`. (Snapshots are insta's:
/// `INSTA_UPDATE=always` rewrites them.)
pub fn updating_locks() -> bool {
    std::env::var_os("NOSYNC_UPDATE_LOCKS").is_some_and(|v| !v.is_empty() && v != "0")
}
