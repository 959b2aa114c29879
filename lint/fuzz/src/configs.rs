//! Target `config`: the input is a configuration file, read both as `--config FILE` and as
//! a `Cargo.toml` with `[package.metadata.nosync-lint]` / `[workspace.metadata.nosync-lint]`
//! tables, merged as the lint merges them, and matched against a small fixed crate (roots,
//! sinks, allow, levels).

use crate::{Expect, check, spec};
use nosync_lint::analyze_crates;
use nosync_lint_core::config::{
    Config, load_file as load_config_file, load_manifest as load_config_manifest,
};
use nosync_lint_core::crate_graph::MetadataTable;
use nosync_lint_core::diagnostics::sort as sort_diagnostics;
use nosync_lint_core::source::{MemLoader, SourceMap};
use std::path::PathBuf;

/// The fixed crate `t`: plain fns, inherent and trait methods, generics, a cudarc call and
/// one attribute root, for configured paths to match (or not).
pub const CONFIG_CRATE: &str = r#"use nosync::{no_sync, synchronizes};
use cudarc::driver::CudaStream;
use std::sync::Arc;

pub mod engine {
    use crate::vendor::{Device, Session};

    #[derive(Default)]
    pub struct Engine<T> {
        pub session: Session,
        pub steps: Vec<T>,
    }

    impl<T> Engine<T> {
        pub fn step(&mut self) {
            self.session.submit();
            self.checkpoint();
            self.session.wait();
            self.session.fence();
        }

        pub fn checkpoint(&self) {
            self.session.wait();
        }
    }
}

pub mod vendor {
    pub trait Device {
        fn fence(&self);
    }

    #[derive(Default)]
    pub struct Session;

    impl Session {
        pub fn submit(&self) {}
        pub fn wait(&self) {}
    }

    impl Device for Session {
        fn fence(&self) {}
    }
}

pub fn tick(session: &vendor::Session, stream: &Arc<CudaStream>) {
    session.wait();
    stream.synchronize().ok();
}

#[no_sync]
pub fn hot(stream: &Arc<CudaStream>) {
    helper(stream);
}

fn helper(stream: &Arc<CudaStream>) {
    stream.synchronize().ok();
    wait_here();
}

#[synchronizes]
pub fn wait_here() {}
"#;

/// Reads `text` as the manifest's tables and as `--config`, then analyses the fixed crate.
pub fn config_file(text: &str) {
    let root = PathBuf::from("/mem/t");
    let mut sources = SourceMap::new(&root);
    let mut cfg = Config::default();
    let mut diags = Vec::new();
    let manifest = root.join("Cargo.toml");
    let file = root.join("nosync.toml");
    let lib = root.join("src/lib.rs");
    let files = MemLoader::new()
        .with(&manifest, text)
        .with(&file, text)
        .with(&lib, CONFIG_CRATE);
    for table in [MetadataTable::Workspace, MetadataTable::Package] {
        load_config_manifest(&manifest, table, &mut cfg, &files, &mut sources, &mut diags);
    }
    // The file is in memory: loading it cannot fail.
    load_config_file(&file, &mut cfg, &files, &mut sources, &mut diags).expect("in-memory config");
    let mut a = analyze_crates(root, vec![spec("t", lib)], &cfg, &files, sources);
    a.diagnostics.extend(diags);
    sort_diagnostics(&mut a.diagnostics);
    check(&a, Expect::default());
}
