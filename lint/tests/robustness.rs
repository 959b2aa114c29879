//! Robustness of the engine: the analysis never panics, hangs or overflows
//! the stack on any input, and a broken file never stops the others from being analysed.
//!
//! Every case is a small crate written to a temporary directory: `src/lib.rs` holds a
//! *sentinel* (a `#[no_sync]` root calling a `#[synchronizes]` sink) and `mod victim;`,
//! and `src/victim.rs` (plus whatever else the case needs) holds the hostile input. A
//! case passes when the analysis terminates, reports no `internal-error`, every span
//! it reports lies inside its file on char boundaries, every diagnostic renders, and
//! the sentinel's finding is still reported.
//!
//! Each case runs in a child process (this test binary re-executed with
//! `NOSYNC_QA_CASE=<case>` running the ignored `child_entry` test) under a timeout, so a
//! stack overflow or a hang is reported as that case's failure and hides no other case.
//! Inputs come from deterministic generators (a xorshift PRNG with fixed seeds): a
//! failure reproduces with
//! `NOSYNC_QA_CASE=<case> cargo test -p cargo-nosync-lint --test robustness -- --ignored --exact child_entry --nocapture`.
//!
//! The default tests (in `robustness/suite.rs`) are sized for CI (debug build, two cores);
//! `-- --ignored --skip child_entry --skip explore` runs the heavy variants (10^5-element
//! inputs, 10^4-fn graphs, the registry crates on disk and mutants of their 1197 files).

use nosync_lint::{Analysis, analyze_crates, render_human};
use nosync_lint_core::config::Config;
use nosync_lint_core::crate_graph::{CrateSpec, DepTarget};
use nosync_lint_core::diagnostics::{Code, Diagnostic, Origin, Span};
use nosync_lint_core::source::{DiskLoader, SourceMap};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------
// Deterministic randomness.

/// xorshift64*: tiny, deterministic, good enough to pick mutation points.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

// ---------------------------------------------------------------------------------
// Cases: a crate on disk, analysed through the library.

const SENTINEL: &str = "use nosync::{no_sync, synchronizes};\n\
#[synchronizes]\nfn sentinel_sink() {}\n\
#[no_sync]\nfn sentinel_root() {\n    sentinel_sink();\n}\n\
mod victim;\n";

/// A crate to analyse: files relative to its directory (`src/lib.rs` is the root).
#[derive(Debug, Default)]
struct Case {
    files: Vec<(String, Vec<u8>)>,
    /// `(link, target)`, both relative to the crate directory.
    symlinks: Vec<(String, String)>,
    /// Whether the sentinel's finding must be reported (false when lib.rs itself is hostile).
    sentinel: bool,
}

impl Case {
    /// The sentinel root plus `src/victim.rs` with `text`.
    fn victim(text: impl Into<Vec<u8>>) -> Case {
        Case {
            files: vec![
                ("src/lib.rs".into(), SENTINEL.into()),
                ("src/victim.rs".into(), text.into()),
            ],
            symlinks: Vec::new(),
            sentinel: true,
        }
    }

    fn with(mut self, path: &str, text: impl Into<Vec<u8>>) -> Case {
        self.files.push((path.into(), text.into()));
        self
    }

    fn write(&self, dir: &Path) -> std::io::Result<()> {
        for (rel, bytes) in &self.files {
            let p = dir.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(p, bytes)?;
        }
        for (link, target) in &self.symlinks {
            let p = dir.join(link);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            #[cfg(unix)]
            std::os::unix::fs::symlink(target, &p)?;
            #[cfg(not(unix))]
            let _ = (target, p);
        }
        Ok(())
    }
}

fn spec(dir: &Path) -> CrateSpec {
    let root = dir.join("src/lib.rs");
    CrateSpec {
        name: "qa".into(),
        root: root.clone(),
        features: Default::default(),
        deps: ["cudarc", "nosync"]
            .iter()
            .map(|d| (d.to_string(), DepTarget::External(d.to_string())))
            .collect(),
        check_roots: true,
        origin: Origin {
            package_id: "qa".into(),
            package_name: "qa".into(),
            manifest_path: dir.join("Cargo.toml"),
            target_name: "qa".into(),
            target_kind: vec!["lib".into()],
            target_src_path: root,
        },
        versions: Default::default(),
    }
}

/// Writes `case` to a fresh directory and analyses it; `Err` says which invariant broke.
fn run_case(case: &Case) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    case.write(dir.path()).map_err(|e| format!("write: {e}"))?;
    let start = Instant::now();
    let a = analyze_crates(
        dir.path().to_path_buf(),
        vec![spec(dir.path())],
        &Config::default(),
        &DiskLoader,
        SourceMap::new(dir.path()),
    );
    let took = start.elapsed();
    check_invariants(&a, case.sentinel)?;
    Ok(format!(
        "files={} lines={} fns={} diags={} took={took:?}",
        a.stats.files,
        a.stats.lines,
        a.stats.fns,
        a.diagnostics.len()
    ))
}

fn check_invariants(a: &Analysis, sentinel: bool) -> Result<(), String> {
    for d in &a.diagnostics {
        if d.code == Code::InternalError {
            return Err(format!("internal-error: {} at {:?}", d.message, d.primary));
        }
        for s in spans(d) {
            check_span(&a.sources, s).map_err(|e| format!("{e} in `{}`", d.message))?;
        }
        let text = render_human(d, &a.sources, false);
        if text.is_empty() {
            return Err(format!("empty rendering of `{}`", d.message));
        }
    }
    if sentinel && !has_sentinel(&a.diagnostics) {
        let got: Vec<String> = a
            .diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.code.as_str(), d.message))
            .collect();
        return Err(format!(
            "the sentinel finding is missing; got: {}",
            got.join(" | ")
        ));
    }
    Ok(())
}

fn has_sentinel(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| {
        d.code == Code::SyncInNoSync
            && d.message.contains("`sentinel_root`")
            && d.message.contains("sentinel_sink")
    })
}

fn spans(d: &Diagnostic) -> impl Iterator<Item = &Span> {
    let notes = d.notes.iter().filter_map(|n| n.span.as_ref());
    let hops = d
        .finding
        .iter()
        .flat_map(|f| f.chain.iter().map(|h| &h.call_site));
    std::iter::once(&d.primary).chain(notes).chain(hops)
}

fn check_span(sources: &SourceMap, s: &Span) -> Result<(), String> {
    let Some(text) = sources.text(&s.file) else {
        return Err(format!("span into an unknown file {:?}", s.file));
    };
    let ok = s.byte_start <= s.byte_end
        && s.byte_end <= text.len()
        && text.is_char_boundary(s.byte_start)
        && text.is_char_boundary(s.byte_end)
        && s.line_start >= 1
        && s.column_start >= 1
        && (s.line_start, s.column_start) <= (s.line_end, s.column_end);
    if ok {
        Ok(())
    } else {
        Err(format!("bad span {s:?} (file has {} bytes)", text.len()))
    }
}

/// Two or three crates that depend on each other (as cargo never allows, but a broken
/// metadata or a dev-dependency cycle can look like it), sharing files or names.
fn run_multi(kind: &str) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let d = dir.path();
    let (a, b) = match kind {
        "glob-cycle" => (
            "pub use b::*;\npub fn fa() { b::fb(); Missing::x(); }\n",
            "pub use a::*;\npub fn fb() { a::fa(); fa(); Gone::y(); }\n",
        ),
        "reexport-cycle" => (
            "pub use b::x as y;\npub use b as c;\npub fn fa() { y(); c::c::c::x(); }\n",
            "pub use a::y as x;\npub use a as c;\npub fn fb() { x(); c::c::c::y(); }\n",
        ),
        "same-file" => ("pub fn fa() { crate::fa() }\n", ""),
        _ => return Err(format!("unknown multi case `{kind}`")),
    };
    let case = Case::victim("pub fn v() {}\n")
        .with("a/src/lib.rs", format!("{SENTINEL_NO_MOD}{a}"))
        .with("b/src/lib.rs", b);
    case.write(d).map_err(|e| format!("write: {e}"))?;
    let mut specs = vec![spec(d), spec(&d.join("a")), spec(&d.join("b"))];
    specs[1].name = "a".into();
    specs[2].name = "b".into();
    if kind == "same-file" {
        specs[2].root = specs[1].root.clone();
    }
    for (i, s) in specs.iter_mut().enumerate() {
        s.deps.push(("a".into(), DepTarget::Analysed(1)));
        s.deps.push(("b".into(), DepTarget::Analysed(2)));
        s.deps.push(("itself".into(), DepTarget::Analysed(i)));
    }
    let a = analyze_crates(
        d.to_path_buf(),
        specs,
        &Config::default(),
        &DiskLoader,
        SourceMap::new(d),
    );
    check_invariants(&a, true)?;
    Ok(format!(
        "crates=3 files={} diags={}",
        a.stats.files,
        a.diagnostics.len()
    ))
}

/// The sentinel without its `mod victim;` line.
const SENTINEL_NO_MOD: &str = "use nosync::{no_sync, synchronizes};\n\
#[synchronizes]\nfn other_sink() {}\n#[no_sync]\nfn other_root() {\n    other_sink();\n}\n";

/// Analyses a real crate directory (its `src/lib.rs` module tree) in place.
fn run_corpus_crate(dir: &Path) -> Result<String, String> {
    let mut spec = spec(dir);
    spec.root = ["src/lib.rs", "lib.rs", "src/main.rs"]
        .iter()
        .map(|r| dir.join(r))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("no root file in {}", dir.display()))?;
    let start = Instant::now();
    let a = analyze_crates(
        dir.to_path_buf(),
        vec![spec],
        &Config::default(),
        &DiskLoader,
        SourceMap::new(dir),
    );
    let took = start.elapsed();
    check_invariants(&a, false)?;
    let parse_errors = a
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::ParseError)
        .count();
    Ok(format!(
        "files={} lines={} fns={} diags={} parse-errors={parse_errors} took={took:?}",
        a.stats.files,
        a.stats.lines,
        a.stats.fns,
        a.diagnostics.len()
    ))
}

// ---------------------------------------------------------------------------------
// Running a case in a child process, with a timeout.

#[derive(Debug)]
enum Outcome {
    Passed(String),
    Failed(String),
    Crashed(String),
    TimedOut(String),
}

/// Runs case `name` in a child process; the child re-builds the case from its name.
fn run_in_child(name: &str, timeout: Duration) -> Outcome {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = tempfile::tempdir().expect("tempdir");
    let (out_path, err_path) = (dir.path().join("out"), dir.path().join("err"));
    let stdout = std::fs::File::create(&out_path).expect("stdout file");
    let stderr = std::fs::File::create(&err_path).expect("stderr file");
    // The child gets an address-space limit: a runaway case must not take the machine down.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {CHILD_MEMORY_KB} && exec \"$0\" \"$@\""))
        .arg(exe)
        .args(["child_entry", "--exact", "--ignored", "--nocapture"])
        .args(["--test-threads=1"])
        .env("NOSYNC_QA_CASE", name)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("spawn the test binary");
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for the child: {e}"),
        }
    };
    let out = std::fs::read_to_string(&out_path).unwrap_or_default();
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    let Some(status) = status else {
        // The last lines name the mutant (batches print `QA-MUTANT i` before each).
        return Outcome::TimedOut(tail(&err, 400));
    };
    if let Some(at) = out.find("QA-OK ").filter(|_| status.success()) {
        let line = out[at..].lines().next().unwrap_or_default();
        return Outcome::Passed(line.to_owned());
    }
    let tail = tail(&format!("{out}\n{err}"), 1500);
    if status.code() == Some(101) {
        Outcome::Failed(tail)
    } else {
        Outcome::Crashed(format!("{status}: {tail}"))
    }
}

fn tail(s: &str, n: usize) -> String {
    let start = s.len().saturating_sub(n);
    let start = (start..s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    s[start..].trim().to_owned()
}

/// Address space a child may use (virtual; rayon's 64 MiB stacks count in full).
const CHILD_MEMORY_KB: u64 = 4 << 20;

/// How long a case may run before it counts as a hang (a hang detector, not a speed test).
const TIMEOUT: Duration = Duration::from_secs(120);

/// Runs every case in a child and fails with the list of cases that did not pass.
fn run_all(names: &[String]) {
    let mut failures = Vec::new();
    for name in names {
        match run_in_child(name, TIMEOUT) {
            Outcome::Passed(summary) => eprintln!("{name}: passed: {summary}"),
            Outcome::Failed(why) => failures.push(format!("{name}: FAILED: {why}")),
            Outcome::Crashed(why) => failures.push(format!("{name}: CRASHED: {why}")),
            Outcome::TimedOut(last) => failures.push(format!(
                "{name}: TIMED OUT after {TIMEOUT:?}; last output: {last}"
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The child side: builds the case named by `NOSYNC_QA_CASE`, runs it, prints `QA-OK`.
#[test]
#[ignore = "subprocess entry point: the other tests run it with NOSYNC_QA_CASE set"]
fn child_entry() {
    let name = std::env::var("NOSYNC_QA_CASE").expect("NOSYNC_QA_CASE names the case to run");
    let summary = run_named(&name).unwrap_or_else(|e| panic!("case `{name}`: {e}"));
    println!("\nQA-OK {name} {summary}");
}

/// Cases that are batches (mutations) run many crates; the others one.
fn run_named(name: &str) -> Result<String, String> {
    if let Some(rest) = name.strip_prefix("mutate:") {
        return mutate::run_batch(rest);
    }
    if let Some(path) = name.strip_prefix("victim:") {
        let text = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        return run_case(&Case::victim(text));
    }
    if let Some(kind) = name.strip_prefix("multi:") {
        return run_multi(kind);
    }
    if let Some(dir) = name.strip_prefix("corpus:") {
        return run_corpus_crate(Path::new(dir));
    }
    let case = cases::build(name).ok_or_else(|| format!("unknown case `{name}`"))?;
    run_case(&case)
}

#[path = "robustness/cases.rs"]
mod cases;
#[path = "robustness/mutate.rs"]
mod mutate;
#[path = "robustness/suite.rs"]
mod suite;

/// Runs the cases listed in `NOSYNC_QA_CASES` (comma-separated), each in a child.
#[test]
#[ignore = "exploration entry point: set NOSYNC_QA_CASES to a comma-separated list of cases"]
fn explore() {
    let list = std::env::var("NOSYNC_QA_CASES").expect("NOSYNC_QA_CASES lists the cases");
    let list: Vec<String> = list.split(',').map(str::to_owned).collect();
    run_all(&list);
}
