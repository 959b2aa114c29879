//! `nosync_lint`: the library behind `cargo nosync-lint`.
//!
//! It runs the analysis of `nosync_lint_core` on the crates `nosync_lint_workspace` selects:
//! `engine` is the pipeline and its edge (config files, caches, the speculative run while cargo
//! answers), then `baseline`, `report` (what cargo and the baseline say of each diagnostic) and
//! `render` (human, short, JSON, SARIF); `cli` is the command line (see `ARCHITECTURE.md`).
//! Library code never prints: every stage returns data, renderers write to a sink given to them.
//!
//! What this crate exports is what its binary, tests, benches and fuzz targets use of it (the
//! data they hand it and get back is the core's, `nosync_lint_core`, and the workspace stage's,
//! `nosync_lint_workspace`):
//!
//! - running the lint: [`run`] (the whole command line; [`Terminal`] says whether its `out`
//!   is one; [`run_then_exit`] in a process that exits after it, the binary), [`analyze`]
//!   (cargo metadata, config, analysis, from [`Options`], or [`options_from_args`]) and
//!   [`analyze_crates`] (the analysis of given crates, reading every file through a loader),
//!   with their output ([`Analysis`], [`Speculation`]);
//! - what happens to the diagnostics before and while they are shown: [`Baseline`], the
//!   [`Report`] the renderers format (each diagnostic's cargo package and target,
//!   [`cargo_target`], [`workspace_origin`], and its fingerprint), and the renderers:
//!   [`render`] in a [`Format`], and [`render_human`] for one diagnostic.

#![deny(clippy::print_stdout, clippy::print_stderr)]

/// The version of the lint, as printed by `--version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

mod baseline;
mod cli;
mod engine;
mod render;
mod report;
mod runtime_report;

// The stages below, from the core and the workspace crates, by the names this crate's
// modules use (`crate::parse`, `crate::workspace`).
use nosync_lint_core::{
    config, diagnostics, incremental, levels, panics, parse, paths, pipeline, source,
};
use nosync_lint_workspace as workspace;

// Running the lint.
pub use cli::{Terminal, options_from_args, run, run_then_exit};
pub use engine::{Analysis, Options, Speculation, analyze, analyze_crates};

// What happens to the output before and while it is shown.
pub use baseline::Baseline;
/// Writes the baseline file that accepts every finding of `diagnostics`.
pub use baseline::write as write_baseline;
/// One diagnostic in rustc's human format.
pub use render::human::render as render_human;
/// The key of the line-free fingerprint in each SARIF result's `partialFingerprints`.
pub use render::sarif::FINGERPRINT_KEY as SARIF_FINGERPRINT_KEY;
pub use render::{Format, render};
/// cargo's `target` object of a diagnostic's origin.
pub use report::cargo::target as cargo_target;
pub use report::cargo::workspace_origin;
pub use report::{Context as ReportContext, Report};
