//! Robustness of the engine (issue 3): the analysis never panics, hangs or overflows
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
//! The default tests are sized for CI (debug build, two cores); `--ignored` adds the
//! heavy variants (10^5..10^6-element inputs, mutation of the registry sources on disk).

#![allow(clippy::disallowed_macros)] // the child prints its verdict for the parent

use nosync_lint::config::Config;
use nosync_lint::diagnostics::{Code, Diagnostic, Origin, Span};
use nosync_lint::engine::{Analysis, analyze_crates};
use nosync_lint::render::human;
use nosync_lint::source::SourceMap;
use nosync_lint::workspace::{CrateSpec, DepTarget};
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
        is_lib: true,
        origin: Origin {
            package_id: "qa".into(),
            package_name: "qa".into(),
            manifest_path: dir.join("Cargo.toml"),
            target_name: "qa".into(),
            target_kind: vec!["lib".into()],
            target_src_path: root,
        },
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
        let text = human::render(d, &a.sources, false);
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

/// Runs the cases listed in `NOSYNC_QA_CASES` (comma-separated), each in a child.
#[test]
#[ignore = "exploration entry point: set NOSYNC_QA_CASES to a comma-separated list of cases"]
fn explore() {
    let list = std::env::var("NOSYNC_QA_CASES").expect("NOSYNC_QA_CASES lists the cases");
    let list: Vec<String> = list.split(',').map(str::to_owned).collect();
    run_all(&list);
}

/// Every registry crate of the heavy corpus, analysed from its root file, each in a child.
#[test]
#[ignore = "heavy: needs ~/.cargo/registry sources; run with --ignored"]
fn registry_crates_analyse_cleanly() {
    run_all(&registry_cases(false));
}

/// Crates whose glob imports made name resolution blow up before the B9 fix (a regression test).
const GLOB_HEAVY: &[&str] = &["candle-core-", "criterion-"];

fn registry_cases(glob_heavy: bool) -> Vec<String> {
    let dirs = mutate::registry_dirs().expect("registry sources");
    assert!(!dirs.is_empty(), "no registry crates found");
    dirs.iter()
        .filter(|d| {
            let name = d.file_name().unwrap_or_default().to_string_lossy();
            GLOB_HEAVY.iter().any(|g| name.starts_with(g)) == glob_heavy
        })
        .map(|d| format!("corpus:{}", d.display()))
        .collect()
}

#[test]
#[ignore = "heavy: needs ~/.cargo/registry sources; run with --ignored"]
fn glob_heavy_registry_crates_finish() {
    run_all(&registry_cases(true));
}

// ---------------------------------------------------------------------------------
// The suite. Sizes are chosen to cross the engine's limits (nesting 200, 4000 tokens per
// segment, 256 expression levels, 10 000 macro expansions) while staying cheap in debug.

fn family(prefix: &str, kinds: &[&str], n: usize) -> Vec<String> {
    kinds.iter().map(|k| format!("{prefix}:{k}:{n}")).collect()
}

const DEEP_KINDS: &[&str] = &[
    "paren",
    "bracket",
    "block",
    "if-block",
    "generic-type",
    "generic-comma",
    "ref-mut-expr",
    "ref-lifetime-type",
    "ptr-type",
    "fn-type",
    "closure",
    "move-closure",
    "return",
    "assign",
    "not",
    "neg-spaced",
    "deref",
    "ref",
    "char-call-comma",
    "impl-fn-comma",
    "dyn-fn-comma",
    "closure-tuple-pat",
    "async-closure-comma",
    "hrtb-fn-comma",
    "where-fn-comma",
    "ascii-char-call",
    "else-if",
    "pat-ref-mut",
    "pat-tuple",
    "mod",
    "use-tree",
    "macro-tokens",
    "attr",
];

const LONG_KINDS: &[&str] = &[
    "method-chain",
    "method-chain-args",
    "method-chain-stmt",
    "field-chain",
    "index-chain",
    "call-chain",
    "try-chain",
    "await-chain",
    "cast-chain",
    "binary",
    "binary-mixed",
    "binary-blocks",
    "binary-calls",
    "binary-stmt",
    "binary-return",
    "binary-const",
    "binary-arg",
    "comparison-and",
    "path",
    "items",
    "stmts",
    "attrs",
    "bounds",
    "args",
    "params",
    "match-arms",
    "string",
    "line",
    "empty-lines",
    "comment",
    "lets",
    "macro-rep",
    "mods-missing",
    "glob-mods",
];

const CYCLE_KINDS: &[&str] = &[
    "mod-path-dir",
    "glob-pair",
    "glob-self",
    "use-self-name",
    "alias-a-unused",
    "trait-cycle",
    "deref-cycle",
    "field-cycle",
    "return-cycle",
    "macro-self-empty",
    "macro-self-fn",
    "macro-double",
    "macro-pair",
    "macro-nest",
    "extern-self",
    "impl-self-recursive",
    "symlink-loop",
    "symlink-mod-loop",
];

const FILE_KINDS: &[&str] = &[
    "empty",
    "cfg-false",
    "cfg-false-only-attr",
    "bom",
    "bom-only",
    "bom-shebang",
    "shebang-only",
    "crlf",
    "cr-only",
    "non-utf8",
    "nul",
    "binary:1",
    "binary:2",
    "unicode",
    "unterminated-string",
    "unterminated-comment",
    "unterminated-raw",
    "missing-mod",
    "dev-path",
    "huge-ident:100000",
    "lib-broken",
    "lib-missing",
    "lib-non-utf8",
    "lib-dir",
];

const GRAPH_KINDS: &[&str] = &[
    "chain",
    "chain-all-roots",
    "self-call",
    "dense",
    "fan-in",
    "name-only",
];

#[test]
fn deep_nesting_is_rejected_or_analysed() {
    // 1500 levels: beyond the pre-scan's nesting limit and syn's comfort in debug.
    run_all(&family("deep", DEEP_KINDS, 1500));
}

#[test]
fn long_sequences_are_analysed() {
    // 6000: beyond the 4000-token segment limit and the 256-level expression limit.
    run_all(&family("long", LONG_KINDS, 6000));
}

#[test]
fn cycles_terminate() {
    let list: Vec<String> = CYCLE_KINDS.iter().map(|k| format!("cycle:{k}")).collect();
    run_all(&list);
}

#[test]
fn odd_files_are_reported_and_the_rest_analysed() {
    let list: Vec<String> = FILE_KINDS.iter().map(|k| format!("file:{k}")).collect();
    run_all(&list);
}

const ODD_KINDS: &[&str] = &[
    "weird-impls",
    "self-outside-impl",
    "raw-idents",
    "attrs-everywhere",
    "extern-blocks",
    "super-beyond-root",
    "generic-soup",
    "closures-async",
    "tabs-and-wide",
    "long-line-finding:20000",
    "drop-soup",
    "shadowing",
    "unsupported-syntax",
    "cfg-soup",
];

#[test]
fn odd_but_plausible_code_is_analysed() {
    let list: Vec<String> = ODD_KINDS.iter().map(|k| format!("odd:{k}")).collect();
    run_all(&list);
}

#[test]
fn crate_cycles_terminate() {
    run_all(&names(&[
        "multi:glob-cycle",
        "multi:reexport-cycle",
        "multi:same-file",
    ]));
}

#[test]
fn call_graph_shapes_terminate() {
    run_all(&family("graph", GRAPH_KINDS, 1000));
}

#[test]
fn mutants_of_the_fixtures() {
    run_all(&names(&["mutate:fixtures:1:120", "mutate:lint:2:40"]));
}

#[test]
fn module_path_cycles_terminate() {
    run_all(&names(&[
        "cycle:mod-path-self",
        "cycle:mod-path-pair",
        "cycle:mod-path-root",
    ]));
}

#[test]
fn type_alias_cycles_terminate() {
    run_all(&names(&[
        "cycle:alias-a",
        "cycle:alias-bc",
        "cycle:alias-vec",
    ]));
}

#[test]
fn comma_separated_nesting_is_rejected() {
    run_all(&family(
        "deep",
        &["closure-comma", "fn-type-comma"],
        100_000,
    ));
}

#[test]
fn rejection_spans_are_on_char_boundaries() {
    run_all(&names(&["deep:char-call:100000"]));
}

#[test]
fn big_macro_repetitions_terminate() {
    run_all(&names(&["long:macro-rep-items:4000", "cycle:macro-grow"]));
}

#[test]
fn many_locals_are_linear() {
    run_all(&names(&["long:shadowed-drops:100000"]));
}

#[test]
#[ignore = "heavy: 10^5-element inputs; run with --ignored"]
fn heavy_deep_and_long_inputs() {
    let mut list = family("deep", DEEP_KINDS, 100_000);
    list.extend(family("long", LONG_KINDS, 100_000));
    run_all(&list);
}

#[test]
#[ignore = "heavy: 10^4-fn call graphs; run with --ignored"]
fn heavy_call_graphs() {
    let kinds: Vec<&str> = GRAPH_KINDS
        .iter()
        .copied()
        .filter(|k| *k != "chain-all-roots")
        .collect();
    run_all(&family("graph", &kinds, 10_000));
}

#[test]
fn nested_roots_do_not_exhaust_memory() {
    run_all(&names(&["graph:chain-all-roots:10000"]));
}

#[test]
#[ignore = "heavy: mutants of registry sources under ~/.cargo/registry; run with --ignored"]
fn heavy_mutants_of_registry_sources() {
    run_all(&names(&[
        "mutate:registry:11:300",
        "mutate:registry:12:300",
        "mutate:fixtures:13:1000",
    ]));
}

// ---------------------------------------------------------------------------------
// The command line over a real (broken) Cargo package: cargo metadata, every format.

/// Runs the lint binary in `dir` with `args` under the hang timeout; (exit code, stdout, stderr).
fn run_cli(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out_dir = tempfile::tempdir().expect("tempdir");
    let (o, e) = (out_dir.path().join("o"), out_dir.path().join("e"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_cargo-nosync-lint"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&o).expect("stdout file"))
        .stderr(std::fs::File::create(&e).expect("stderr file"))
        .spawn()
        .expect("spawn the lint");
    let start = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the lint hung on {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    (code, read(&o), read(&e))
}

/// A package whose lib has the sentinel and whose other modules are broken in every way
/// that still terminates today: syntax error, missing module, non-UTF-8, deep nesting.
fn broken_package(dir: &Path) {
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime");
    let manifest = format!(
        "[package]\nname = \"qa-broken\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
         [dependencies]\nnosync = {{ path = {:?} }}\n\n[workspace]\n",
        runtime.display().to_string()
    );
    let lib = format!("{SENTINEL}mod syntax;\nmod encoding;\nmod deep;\nmod nowhere;\n");
    let deep = cases::build("deep:paren:1000").expect("case");
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("Cargo.toml", manifest.into_bytes()),
        ("src/lib.rs", lib.into_bytes()),
        ("src/victim.rs", b"pub fn ok() {}\n".to_vec()),
        ("src/syntax.rs", b"pub fn broken( {\n".to_vec()),
        ("src/encoding.rs", b"pub fn f() { \xFF }\n".to_vec()),
        ("src/deep.rs", deep.files[1].1.clone()),
        ("src/main.rs", b"fn main() { let x = ; }\n".to_vec()),
    ];
    for (rel, bytes) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, bytes).expect("write");
    }
}

#[test]
fn cli_reports_broken_files_and_still_finds_the_sentinel() {
    let dir = tempfile::tempdir().expect("tempdir");
    broken_package(dir.path());
    for format in ["human", "json", "sarif"] {
        let (code, out, err) = run_cli(
            dir.path(),
            &["nosync-lint", "--no-deps", "--format", format],
        );
        let ctx = format!("--format {format}: exit {code:?}\nstdout:\n{out}\nstderr:\n{err}");
        assert_eq!(code, Some(1), "the sentinel is deny-level: {ctx}");
        assert!(!err.contains("panicked"), "{ctx}");
        assert!(out.contains("sentinel_root"), "{ctx}");
        for file in ["syntax.rs", "encoding.rs", "deep.rs", "main.rs"] {
            assert!(out.contains(file), "no diagnostic for {file}: {ctx}");
        }
        let internal = match format {
            "human" => "[internal-error]",
            "json" => "\"code\":\"internal-error\"",
            _ => "\"ruleId\": \"internal-error\"",
        };
        assert!(!out.contains(internal), "{ctx}");
    }
}

/// Writes `config` next to the broken package and runs the lint with `--config` on it.
fn run_with_config(config: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    broken_package(dir.path());
    std::fs::write(dir.path().join("qa.toml"), config).expect("write config");
    run_cli(
        dir.path(),
        &["nosync-lint", "--no-deps", "--config", "qa.toml"],
    )
}

fn assert_config_error(config: &str) {
    let (code, out, err) = run_with_config(config);
    let shown: String = config.chars().take(80).collect();
    let ctx = format!("config {shown:?}: exit {code:?}\nstdout:\n{out}\nstderr:\n{err}");
    assert_eq!(code, Some(1), "{ctx}");
    assert!(out.contains("config-error"), "{ctx}");
    assert!(out.contains("sentinel_root"), "{ctx}");
    assert!(!err.contains("panicked"), "{ctx}");
}

#[test]
fn hostile_configs_are_located_errors() {
    let n = 5000;
    let odd_roots = [
        format!("{}{}", "(".repeat(n), ")".repeat(n)),
        format!("qa::{}m", "a::".repeat(n)),
        String::new(),
        "::".to_owned(),
        "<>::m".to_owned(),
        "<qa as>::m".to_owned(),
        "qa::\\u0000".to_owned(),
    ];
    let configs = [
        "roots = 3\nsinks = [1, { a = 2 }]\nallow = \"x\"\nunknown = 1\n".to_owned(),
        "roots = [\n".to_owned(),
        format!("x = {}{}\n", "[".repeat(n), "]".repeat(n)),
        format!(
            "roots = {odd_roots:?}\nsinks = [\n{}]\n",
            vec!["\"qa::nope\""; 500].join(",\n")
        ),
    ];
    for c in &configs {
        assert_config_error(c);
    }
}

#[test]
fn deeply_nested_configured_paths_are_errors() {
    let n = 20_000;
    assert_config_error(&format!("roots = [\"<{}qa::T as X>::m\"]\n", "&".repeat(n)));
    assert_config_error(&format!(
        "roots = [\"qa::T::<{}u8{}>::m\"]\n",
        "Vec<".repeat(n),
        ">".repeat(n)
    ));
}

#[test]
fn glob_meshes_resolve_quickly() {
    // 4 modules, 60 unresolvable names: each name cost seconds before the per-query memo (B9).
    run_all(&names(&["cycle:glob-mesh:12", "cycle:glob-mesh-calls:60"]));
}
