//! `nosync_lint`: the library behind `cargo nosync-lint`.
//!
//! The analysis engine (workspace discovery, parsing, resolution, call graph,
//! reporting) lands with the engine issue; this crate exists so that the
//! binary, its `--help` and the workspace layout are stable from the start.

/// The version of the lint, as printed by `--version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub mod baseline;
pub mod diagnostics;
pub mod levels;
