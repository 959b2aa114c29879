//! The stamp table (`source::Text`): a run whose files' stamps vouch for the texts an
//! earlier run read looks their lowerings up without reading them, reads only the texts it
//! needs (the files its diagnostics point into), and says so; a text read late that is not
//! the one its stamp vouched for makes the run stale.

use super::*;
use crate::engine::analyze_crates_incremental;
use crate::incremental::{Incremental, Keep};
use crate::pipeline::{Input, Options};
use crate::source::{Loader, LoweredCache, Reader, Stamp};
use crate::workspace::{CrateSpec, DepTarget};
use std::sync::{Arc, Mutex};

/// Files in memory whose stamps never change and always vouch, read late from `later`
/// (the files as they are by then).
struct Stamped {
    files: MemLoader,
    later: Arc<MemLoader>,
}

/// Keeps the lowered cache the run gives back.
#[derive(Debug, Default)]
struct Kept(Mutex<Option<LoweredCache>>);

impl Keep for Kept {
    fn lowered(&self, cache: LoweredCache) {
        *self.0.lock().unwrap() = Some(cache);
    }

    fn walks(&self, cache: LoweredCache) {
        drop(cache);
    }
}

impl Loader for Stamped {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.files.read(path)
    }

    fn file(&self, path: &Path) -> Option<PathBuf> {
        self.files.file(path)
    }

    fn stamp(&self, _path: &Path) -> Option<Stamp> {
        let (len, inode, device) = (1, 1, 1);
        let (modified, changed, taken) = (0, 0, 10_000_000_000);
        Some(Stamp {
            len,
            modified,
            changed,
            inode,
            device,
            taken,
        })
    }

    fn reader(&self) -> Option<Reader> {
        let later = self.later.clone();
        Some(Arc::new(move |path: &Path| later.read(path)))
    }
}

const LIB: &str =
    "mod helper;\nmod quiet;\n\n#[nosync::no_sync]\nfn step() {\n    helper::wait();\n}\n";
const HELPER: &str = "#[nosync::synchronizes]\npub fn wait() {}\n";
const QUIET: &str = "pub fn idle() -> u32 {\n    1 + 1\n}\n";

fn files(lib: &str) -> MemLoader {
    let src = Path::new(ROOT).join("src");
    MemLoader::new()
        .with(src.join("lib.rs"), lib)
        .with(src.join("helper.rs"), HELPER)
        .with(src.join("quiet.rs"), QUIET)
}

/// One run over `files` (read late from `later`) with the stamp table and the lowered
/// cache of the run before (empty ones for the first): the analysis, whether it was stale,
/// and the two caches as this run leaves them.
fn run(
    files: MemLoader,
    later: MemLoader,
    caches: (LoweredCache, LoweredCache),
) -> (crate::Analysis, bool, (LoweredCache, LoweredCache)) {
    let crates = vec![spec("t", Path::new(ROOT).join("src/lib.rs"))];
    run_crates(crates, (files, later), caches)
}

/// [`run`] over `crates`.
fn run_crates(
    crates: Vec<CrateSpec>,
    (files, later): (MemLoader, MemLoader),
    caches: (LoweredCache, LoweredCache),
) -> (crate::Analysis, bool, (LoweredCache, LoweredCache)) {
    let root = PathBuf::from(ROOT);
    let loader = Stamped {
        files,
        later: Arc::new(later),
    };
    let kept = Arc::new(Kept::default());
    let mut incr = Incremental {
        keep: Some(kept.clone()),
        ..Incremental::default()
    };
    (incr.files.stamps, incr.files.lowered) = (Some(caches.0), Some(caches.1));
    let cfg = Config::default();
    let input = Input::new(root.clone(), crates, SourceMap::new(&root), &cfg);
    let a = analyze_crates_incremental(input, &Options::default(), &loader, &mut incr);
    let stamps = incr.files.stamps.take().expect("the stamp table");
    let lowered = kept.0.lock().unwrap().take().expect("the lowered files");
    (a, incr.stale(), (stamps, lowered))
}

/// Which of the crate's files were read, by name.
fn read(a: &crate::Analysis) -> Vec<String> {
    let names = a.sources.files().iter().filter(|f| f.text.is_read());
    let name = |f: &crate::source::SourceFile| f.display.display().to_string();
    names.map(name).collect()
}

#[test]
fn files_vouched_for_by_their_stamps_are_read_only_when_needed() {
    let (first, _, caches) = run(files(LIB), files(LIB), Default::default());
    assert_eq!(
        read(&first),
        ["src/lib.rs", "src/helper.rs", "src/quiet.rs"]
    );
    assert_eq!(first.sources.texts_read(), (3, 3));
    let (second, second_stale, _) = run(files(LIB), files(LIB), caches);
    assert_eq!(second.diagnostics, first.diagnostics);
    assert_eq!(first.diagnostics.len(), 1, "{:#?}", first.diagnostics);
    // The finding points into lib.rs (the call) and helper.rs (the sink); nothing into
    // quiet.rs, which is looked up by its stamped hash and never read.
    assert_eq!(read(&second), ["src/lib.rs", "src/helper.rs"]);
    assert!(!second_stale);
    assert_eq!(second.stats.lines, first.stats.lines);
}

#[test]
fn a_text_read_late_that_is_not_the_one_stamped_makes_the_run_stale() {
    let (_, _, (stamps, _)) = run(files(LIB), files(LIB), Default::default());
    // No lowered files: each is vouched for, not read, then read late to be lowered.
    let caches = (stamps.clone(), LoweredCache::default());
    let (_, fresh_stale, (_, lowered)) = run(files(LIB), files(LIB), caches);
    assert!(!fresh_stale);
    assert_eq!(lowered.counts(), (3, 3), "each file lowered and stored");
    let edited = format!("// changed while the lint ran\n{LIB}");
    let caches = (stamps, LoweredCache::default());
    let (_, stale, (_, lowered)) = run(files(LIB), files(&edited), caches);
    assert!(stale);
    // Nothing lowered after the late text was not the stamped one is stored.
    assert_eq!(lowered.counts().1, 0);
}

/// A `candle_core` with a library flag (`known::models`' `[[flag]]`).
const CANDLE: &str = "pub mod quantized { pub mod cuda {\n\
static FORCE_DMMV: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);\n\
pub fn set_force_dmmv(f: bool) { FORCE_DMMV.store(f, std::sync::atomic::Ordering::Relaxed) }\n\
} }\n";

#[test]
fn the_search_for_a_flag_setter_keeps_no_text_it_was_not_otherwise_to_read() {
    let candle = Path::new(ROOT).join("candle/src/lib.rs");
    let files = || files(LIB).with(&candle, CANDLE);
    let crates = with_candle(&candle);
    let (first, _, caches) = run_crates(crates.clone(), (files(), files()), Default::default());
    let (second, stale, _) = run_crates(crates, (files(), files()), caches);
    assert_eq!(second.diagnostics, first.diagnostics);
    // quiet.rs is searched for `set_force_dmmv` (its crate can call candle_core) by the
    // mask the stamp table kept of its text, which is not read.
    assert_eq!(read(&second), ["src/lib.rs", "src/helper.rs"]);
    assert!(!stale);
}

/// Crate `t` (`src/lib.rs`) depending on a `candle_core` rooted at `candle`.
fn with_candle(candle: &Path) -> Vec<CrateSpec> {
    let mut crates = vec![spec("t", Path::new(ROOT).join("src/lib.rs"))];
    crates.push(spec("candle_core", candle.to_path_buf()));
    crates[0]
        .deps
        .push(("candle_core".into(), DepTarget::Analysed(1)));
    crates
}

/// [`CANDLE`] whose `matmul` waits on the arm its flag's default does not take.
const CANDLE_MATMUL: &str = "pub mod quantized { pub mod cuda {\n\
use std::sync::atomic::{AtomicBool, Ordering};\n\
static FORCE_DMMV: AtomicBool = AtomicBool::new(false);\n\
pub fn set_force_dmmv(f: bool) { FORCE_DMMV.store(f, Ordering::Relaxed) }\n\
pub fn matmul() { if FORCE_DMMV.load(Ordering::Relaxed) { wait(); } }\n\
#[nosync::synchronizes]\nfn wait() {}\n\
} }\n";

/// Two runs of a crate whose root calls candle's `matmul` and whose quiet.rs is `quiet`:
/// each run's diagnostics and the files the second read.
fn flag_runs(quiet: &str) -> (usize, usize, Vec<String>) {
    let candle = Path::new(ROOT).join("candle/src/lib.rs");
    let lib = LIB.replace("helper::wait();", "candle_core::quantized::cuda::matmul();");
    let quiet_rs = Path::new(ROOT).join("src/quiet.rs");
    let files = || (files(&lib).with(&candle, CANDLE_MATMUL)).with(&quiet_rs, quiet);
    let crates = with_candle(&candle);
    let (first, _, caches) = run_crates(crates.clone(), (files(), files()), Default::default());
    let (second, stale, _) = run_crates(crates, (files(), files()), caches);
    assert!(!stale);
    assert_eq!(second.diagnostics, first.diagnostics);
    (
        first.diagnostics.len(),
        second.diagnostics.len(),
        read(&second),
    )
}

#[test]
fn a_setter_named_in_a_text_a_warm_run_does_not_read_still_sets_its_flag() {
    // Nothing names the setter: the flag keeps its default, matmul does not wait.
    let (first, second, _) = flag_runs(QUIET);
    assert_eq!((first, second), (0, 0));
    // quiet.rs names it, in a comment: both arms, in the first run and in the second,
    // which knows it from the stamp table without reading quiet.rs.
    let named = format!("// candle_core::quantized::cuda::set_force_dmmv(true) first\n{QUIET}");
    let (first, second, read) = flag_runs(&named);
    assert_eq!((first, second), (1, 1));
    assert!(!read.contains(&"src/quiet.rs".to_owned()), "{read:?}");
}
