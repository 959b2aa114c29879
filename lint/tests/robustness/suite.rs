//! The tests: each runs a list of cases in child processes (see the crate docs), plus the
//! command line over a real broken package and hostile configuration files.

use super::*;

/// Every registry crate of the heavy corpus, analysed from its root file, each in a child.
#[test]
#[ignore = "heavy: needs ~/.cargo/registry sources; run with --ignored"]
fn registry_crates_analyse_cleanly() {
    run_all(&registry_cases(false));
}

/// Crates whose glob imports made name resolution exponential before each member search was
/// done once per query (a regression test).
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
    "malformed-fragments",
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
        // A syntax error in a body is reported where the call graph reads the body: a
        // root's (a body no root reaches is never lowered), which is then `unparsed-root`.
        (
            "src/main.rs",
            b"#[nosync::no_sync]\nfn main() { let x = ; }\n".to_vec(),
        ),
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
        // `main` is a root whose body does not parse: not checked, so the run is not a
        // verdict (exit 2), and the sentinel is still reported.
        assert_eq!(code, Some(2), "a root was not checked: {ctx}");
        assert!(out.contains("unparsed-root"), "{ctx}");
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
    // The broken package's unparsed root is allowed: the exit status is the config's.
    run_cli(
        dir.path(),
        &[
            "nosync-lint",
            "--no-deps",
            "--config",
            "qa.toml",
            "-A",
            "unparsed-root",
        ],
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
    // 4 modules, 60 unresolvable names: each name cost seconds before the per-query memo of
    // glob lookups.
    run_all(&names(&["cycle:glob-mesh:12", "cycle:glob-mesh-calls:60"]));
}
