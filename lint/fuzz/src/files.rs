//! Target `pipeline_files`: two fuzzed files on disk (the lint finds `mod x;` files on the
//! file system): a module file `a.rs` of crate `t`, whose root holds a sentinel chain that
//! must be reported whatever the fuzzed files hold, and the root file of a second crate `u`
//! that `t` depends on (cross-crate `use`, globs, traits and macros).

use crate::{Expect, check, spec};
use nosync_lint::analyze_crates;
use nosync_lint_core::config::Config;
use nosync_lint_core::crate_graph::DepTarget;
use nosync_lint_core::source::{DiskLoader, SourceMap};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The root of crate `t`: a `#[no_sync]` root calling a `#[synchronizes]` sink, and the
/// fuzzed module `a` (`t/src/a.rs`).
pub const SENTINEL_LIB: &str = "use nosync::{no_sync, synchronizes};\n\
#[synchronizes]\nfn sentinel_sink() {}\n\
#[no_sync]\nfn sentinel_root() {\n    sentinel_sink();\n}\n\
mod a;\n";

/// This process's directory, with `t/src/lib.rs` written: in `/dev/shm` where there is one
/// (rewriting a file on ext4 flushes it to disk: ten times slower), else the temporary
/// directory.
fn work_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = PathBuf::from("/dev/shm");
        let base = if shm.is_dir() {
            shm
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("nosync-lint-fuzz-{}", std::process::id()));
        for sub in ["t/src", "u/src"] {
            std::fs::create_dir_all(dir.join(sub)).expect("create the fuzz crate directories");
        }
        std::fs::write(dir.join("t/src/lib.rs"), SENTINEL_LIB).expect("write t/src/lib.rs");
        dir
    })
}

/// Splits an input at its first NUL byte: `t/src/a.rs` before it, `u/src/lib.rs` after it.
pub fn split(text: &str) -> (&str, &str) {
    text.split_once('\0').unwrap_or((text, ""))
}

/// Analyses crate `t` (sentinel root, module `a`) and crate `u` (root `u`), `t` → `u`.
pub fn two_files(a: &str, u: &str) {
    let dir = work_dir();
    std::fs::write(dir.join("t/src/a.rs"), a).expect("write t/src/a.rs");
    std::fs::write(dir.join("u/src/lib.rs"), u).expect("write u/src/lib.rs");
    let mut t = spec("t", dir.join("t/src/lib.rs"));
    t.deps.push(("u".into(), DepTarget::Analysed(1)));
    let u = spec("u", dir.join("u/src/lib.rs"));
    let analysis = analyze_crates(
        dir.clone(),
        vec![t, u],
        &Config::default(),
        &DiskLoader,
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
