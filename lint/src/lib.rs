//! `nosync_lint`: the library behind `cargo nosync-lint`.
//!
//! Stages in data-flow order: [`workspace`] (cargo metadata) → [`config`] → [`source`]
//! → [`parse`] (syn, in parallel, lowered to a small IR) → [`resolve`] (def map, names,
//! types, macro expansion) → [`callgraph`] → [`analysis`] (chains from roots to sinks)
//! → [`render`]. [`engine`] runs the pipeline; [`cli`] is the command line. Library
//! code never prints: every stage returns data, renderers write to a sink given to them.

#![deny(clippy::print_stdout, clippy::print_stderr)]

/// The version of the lint, as printed by `--version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub mod analysis;
pub mod baseline;
pub mod callgraph;
pub mod cli;
pub mod cli_output;
pub mod config;
pub mod diagnostics;
pub mod engine;
pub mod known;
pub mod levels;
pub mod net;
pub mod parse;
pub mod render;
pub mod resolve;
pub mod source;
pub mod workspace;

#[cfg(test)]
mod tests;

pub use engine::{Analysis, Options, Stats, analyze};
