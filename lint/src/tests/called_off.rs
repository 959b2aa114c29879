//! A run whose loader says it is called off (a speculative analysis cargo's answer has
//! contradicted) stops after parsing: no diagnostics, no later stage, and the lowered
//! files go back to the loader for the run that replaces it.

use super::*;
use crate::source::{Loader, LoweredCache};
use std::sync::Mutex;

/// Files in memory, the run called off when `off`; counts the lowered caches given back.
struct Loaded {
    files: MemLoader,
    off: bool,
    stored: Mutex<usize>,
}

impl Loader for Loaded {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.files.read(path)
    }

    fn file(&self, path: &Path) -> Option<PathBuf> {
        self.files.file(path)
    }

    fn store_lowered(&self, cache: LoweredCache) {
        drop(cache);
        *self.stored.lock().unwrap() += 1;
    }

    fn cancelled(&self) -> bool {
        self.off
    }
}

fn run(off: bool) -> (crate::Analysis, usize) {
    let root = PathBuf::from(ROOT);
    let file = root.join("src/lib.rs");
    let files = Loaded {
        // A parse error: a diagnostic whenever the run goes on to report.
        files: MemLoader::new().with(&file, "fn broken( {\n"),
        off,
        stored: Mutex::new(0),
    };
    let mut sources = SourceMap::new(&root);
    sources.set_lowered(Some(LoweredCache::read_only()));
    let cfg = Config::default();
    let core = Core {
        config: &cfg,
        eager_bodies: false,
        walk_every_fn: false,
        exiting: false,
        unresolved_calls: true,
        target: crate::parse::cfg::TargetCfg::unknown(),
    };
    let a = analyze_crates_with(root, vec![spec("t", file)], core, &files, sources);
    let stored = *files.stored.lock().unwrap();
    (a, stored)
}

#[test]
fn a_called_off_run_stops_after_parsing_and_gives_its_lowered_files_back() {
    let (on, stored_on) = run(false);
    let (off, stored_off) = run(true);
    assert_eq!(on.diagnostics.len(), 1, "{:#?}", on.diagnostics);
    let phases = |a: &crate::Analysis| a.stats.phases.iter().map(|p| p.0).collect::<Vec<_>>();
    assert_eq!(phases(&on), ["parse", "resolve", "callgraph", "analysis"]);
    assert!(off.diagnostics.is_empty(), "{:#?}", off.diagnostics);
    assert!(phases(&off).is_empty(), "{:?}", phases(&off));
    assert_eq!((stored_on, stored_off), (1, 1));
}
