//! A run whose cancel token is set (a speculative analysis cargo's answer has
//! contradicted) stops after parsing: no diagnostics, no later stage, and the lowered
//! files go back to the edge for the run that replaces it.

use super::*;
use crate::engine::analyze_crates_incremental;
use crate::incremental::{Incremental, Keep};
use crate::pipeline::{Input, Options};
use crate::source::LoweredCache;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// Counts the lowered caches given back.
#[derive(Debug, Default)]
struct Kept(Mutex<usize>);

impl Keep for Kept {
    fn lowered(&self, cache: LoweredCache) {
        drop(cache);
        *self.0.lock().unwrap() += 1;
    }

    fn walks(&self, cache: LoweredCache) {
        drop(cache);
    }
}

fn run(off: bool) -> (crate::Analysis, usize) {
    let root = PathBuf::from(ROOT);
    let file = root.join("src/lib.rs");
    // A parse error: a diagnostic whenever the run goes on to report.
    let files = MemLoader::new().with(&file, "fn broken( {\n");
    let kept = Arc::new(Kept::default());
    let mut incr = Incremental {
        cancel: Some(Arc::new(AtomicBool::new(off))),
        keep: Some(kept.clone()),
        ..Incremental::default()
    };
    incr.files.lowered = Some(LoweredCache::read_only());
    let cfg = Config::default();
    let input = Input::new(
        root.clone(),
        vec![spec("t", file)],
        SourceMap::new(&root),
        &cfg,
    );
    let a = analyze_crates_incremental(input, &Options::default(), &files, &mut incr);
    let stored = *kept.0.lock().unwrap();
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
