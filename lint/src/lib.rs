//! `nosync_lint`: the library behind `cargo nosync-lint`.
//!
//! The stages are private modules, in data-flow order: `workspace` (cargo metadata) →
//! `source` (the loader: every file the analysis reads) → `config` → `parse` (syn, in
//! parallel, lowered to a small IR) → `resolve` (def map, names, types, macro expansion) →
//! `callgraph` → `analysis` (chains from roots to sinks) → `render`; `engine` runs the pipeline and `cli` is the command line (see
//! `ARCHITECTURE.md`). Library code never prints: every stage returns data, renderers
//! write to a sink given to them.
//!
//! What this crate exports is what its binary, tests, benches and fuzz targets use:
//!
//! - running the lint: [`run`] (the whole command line; [`Terminal`] says whether its `out` is one; [`run_then_exit`] in a
//!   process that exits after it, the binary), [`analyze`] (cargo metadata,
//!   config, analysis) and [`analyze_crates`] (the analysis of given crates, reading
//!   every file through a [`Loader`]: [`DiskLoader`], or [`MemLoader`] in memory), with their inputs ([`Options`], [`WorkspaceOptions`],
//!   [`CrateSpec`], [`Config`]) and output ([`Analysis`]);
//! - the output data: [`Diagnostic`] and its parts, [`Code`] and [`explain`];
//! - what happens to it before and while it is shown: [`Baseline`], [`LevelOverrides`],
//!   the [`Report`] the renderers format (each diagnostic's cargo package and target,
//!   [`cargo_target`], [`workspace_origin`], and its fingerprint), and the renderers:
//!   [`render`] in a [`Format`], and [`render_human`] for one diagnostic.

#![deny(clippy::print_stdout, clippy::print_stderr)]

/// The version of the lint, as printed by `--version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

mod analysis;
mod baseline;
mod callgraph;
mod cli;
mod config;
mod diagnostics;
mod engine;
mod known;
mod levels;
mod net;
mod parse;
mod paths;
mod render;
mod report;
mod resolve;
mod source;
mod workspace;

#[cfg(test)]
mod tests;

// Running the lint.
pub use cli::{Terminal, options_from_args, run, run_then_exit};
/// Sorts diagnostics into the order they are printed in (file, line, column, code).
pub use engine::sort as sort_diagnostics;
pub use engine::{
    Analysis, Core, Options, Speculation, Stats, analyze, analyze_crates, analyze_crates_with,
};
/// The stack size of the analysis threads (syn recurses once per nesting level).
pub use parse::STACK_SIZE;

// Its inputs.
pub use config::Config;
/// Reads a `--config` file into `cfg`.
pub use config::load_file as load_config_file;
/// Merges a manifest's `[package.metadata.nosync-lint]` or `[workspace.metadata.nosync-lint]`
/// table into `cfg`.
pub use config::load_manifest as load_config_manifest;
pub use source::{DiskLoader, Loader, MemLoader, SourceMap};
/// Runs `cargo metadata` and selects the crates to analyse.
pub use workspace::cache_dir::cache_dir;
pub use workspace::load as load_workspace;
pub use workspace::{
    CrateSpec, DepTarget, MetadataTable, Versions, WorkspaceOptions, is_status_line,
};

// The output data.
pub use diagnostics::explain::explain;
pub use diagnostics::explain::reference as diagnostics_reference;
pub use diagnostics::{Code, Confidence, Diagnostic, Finding, Hop, Level, Origin, SinkKind, Span};
pub use known::models::{
    Flag, Library as ModelLibrary, Model, Models, SHIPPED as SHIPPED_MODELS, Source as ModelSource,
    is_package, shipped as shipped_models,
};

// Baselines, level overrides and rendering.
pub use baseline::Baseline;
/// Writes the baseline file that accepts every finding of `diagnostics`.
pub use baseline::write as write_baseline;
pub use levels::{LevelOverrides, Target as LevelTarget};
/// One diagnostic in rustc's human format.
pub use render::human::render as render_human;
/// The key of the line-free fingerprint in each SARIF result's `partialFingerprints`.
pub use render::sarif::FINGERPRINT_KEY as SARIF_FINGERPRINT_KEY;
pub use render::{Format, Rendered, render};
/// cargo's `target` object of a diagnostic's origin.
pub use report::cargo::target as cargo_target;
pub use report::cargo::{Target as CargoTarget, workspace_origin};
pub use report::{Report, Workspace as ReportWorkspace};
