//! `nosync_lint_core`: the analysis of `cargo nosync-lint`, from source text to the chains
//! from `#[no_sync]` roots to blocking sinks, with no IO but through a [`source::Loader`].
//!
//! The stages, in data-flow order: `source` (the files the analysis reads) → `config` →
//! `parse` (syn, in parallel, lowered to a small IR) → `resolve` (def map, names, types,
//! macro expansion) → `callgraph` → `analysis` (chains from roots to sinks); below them
//! `diagnostics` (the output data and the registry of codes), `paths`, `known` (the names
//! of std and cudarc), `levels`, `panics` (the panic safety net) and `crate_graph` (the crates
//! to analyse). The `cargo-nosync-lint` crate runs them (see `ARCHITECTURE.md`).

#![deny(clippy::print_stdout, clippy::print_stderr)]
// Its doc comments are for the lint's developers and name private items on purpose (`cargo doc
// --document-private-items` renders them all); the crate is not meant to be used on its own.
#![allow(rustdoc::private_intra_doc_links)]

pub mod analysis;
pub mod callgraph;
pub mod config;
pub mod crate_graph;
pub mod diagnostics;
pub mod incremental;
pub mod known;
pub mod levels;
pub mod panics;
pub mod parse;
pub mod paths;
pub mod pipeline;
pub mod resolve;
pub mod source;
/// The stages' unit tests' fixtures, pipeline and rendering (also the engine's, through
/// the `test-support` feature).
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
