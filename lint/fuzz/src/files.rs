//! Target `pipeline_files`: two fuzzed files of crates in memory (the lint finds `mod x;`
//! files through its loader, here a `MemLoader`): a module file `a.rs` of crate `t`, whose
//! root holds a sentinel chain that must be reported whatever the fuzzed files hold, and the
//! root file of a second crate `u` that `t` depends on (cross-crate `use`, globs, traits and
//! macros).

use crate::{Expect, check, spec};
use nosync_lint::analyze_crates;
use nosync_lint_core::config::Config;
use nosync_lint_core::crate_graph::DepTarget;
use nosync_lint_core::source::{MemLoader, SourceMap};
use std::path::Path;

/// The root of crate `t`: a `#[no_sync]` root calling a `#[synchronizes]` sink, and the
/// fuzzed module `a` (`t/src/a.rs`).
pub const SENTINEL_LIB: &str = "use nosync::{no_sync, synchronizes};\n\
#[synchronizes]\nfn sentinel_sink() {}\n\
#[no_sync]\nfn sentinel_root() {\n    sentinel_sink();\n}\n\
mod a;\n";

/// Where the two crates are: `/mem/t` and `/mem/u`.
const ROOT: &str = "/mem";

/// Splits an input at its first NUL byte: `t/src/a.rs` before it, `u/src/lib.rs` after it.
pub fn split(text: &str) -> (&str, &str) {
    text.split_once('\0').unwrap_or((text, ""))
}

/// Analyses crate `t` (sentinel root, module `a`) and crate `u` (root `u`), `t` → `u`.
pub fn two_files(a: &str, u: &str) {
    let dir = Path::new(ROOT);
    let files = MemLoader::new()
        .with(dir.join("t/src/lib.rs"), SENTINEL_LIB)
        .with(dir.join("t/src/a.rs"), a)
        .with(dir.join("u/src/lib.rs"), u);
    let mut t = spec("t", dir.join("t/src/lib.rs"));
    t.deps.push(("u".into(), DepTarget::Analysed(1)));
    let u = spec("u", dir.join("u/src/lib.rs"));
    let analysis = analyze_crates(
        dir.to_path_buf(),
        vec![t, u],
        &Config::default(),
        &files,
        SourceMap::new(dir),
    );
    check(
        &analysis,
        Expect {
            finding: Some(("`sentinel_root`", "sentinel_sink")),
            sarif: false,
        },
    );
}
