//! Target `pipeline_files`: two fuzzed module files under a fixed crate root, on disk
//! (the lint finds `mod x;` files on the file system), with a sentinel chain in the root
//! that must be reported whatever the two files hold.

use crate::{Expect, check, spec};
use nosync_lint::config::Config;
use nosync_lint::engine::analyze_crates;
use nosync_lint::source::SourceMap;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The crate root: a `#[no_sync]` root calling a `#[synchronizes]` sink, and the two
/// fuzzed modules `a` (`src/a.rs`) and `b` (`src/b.rs`).
pub const SENTINEL_LIB: &str = "use nosync::{no_sync, synchronizes};\n\
#[synchronizes]\nfn sentinel_sink() {}\n\
#[no_sync]\nfn sentinel_root() {\n    sentinel_sink();\n}\n\
mod a;\nmod b;\n";

/// This process's crate directory (under the temporary directory), with `src/lib.rs`.
fn crate_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("nosync-lint-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).expect("create the fuzz crate directory");
        std::fs::write(dir.join("src/lib.rs"), SENTINEL_LIB).expect("write src/lib.rs");
        dir
    })
}

/// Splits an input at its first NUL byte: `src/a.rs` before it, `src/b.rs` after it.
pub fn split(text: &str) -> (&str, &str) {
    text.split_once('\0').unwrap_or((text, ""))
}

/// Analyses the sentinel crate with `a` and `b` as its two module files.
pub fn two_files(a: &str, b: &str) {
    let dir = crate_dir();
    std::fs::write(dir.join("src/a.rs"), a).expect("write src/a.rs");
    std::fs::write(dir.join("src/b.rs"), b).expect("write src/b.rs");
    let crate_spec = spec("t", dir.join("src/lib.rs"));
    let analysis = analyze_crates(
        dir.clone(),
        vec![crate_spec],
        &Config::default(),
        SourceMap::new(dir),
    );
    check(
        &analysis,
        Expect {
            finding: Some(("`sentinel_root`", "sentinel_sink")),
        },
    );
}
