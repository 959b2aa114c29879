//! The cache in the target dir changes nothing but the time: on every fixture, and on a
//! workspace edited step by step (sources, features, members, the lock file), a run that
//! reads the cache prints exactly what a `--no-cache` run of the same tree prints, and
//! `-v` says whether the cache was hit.
#![allow(clippy::disallowed_macros)] // a test reports progress on stderr

use std::fs;

use nosync_tests::fixture;
use nosync_tests::run::with;

mod cache_support;
use cache_support::{
    APP, APP_LIB, GPU, Step, WALK_OPS, WalkStep, bodies_from_cache, cache_dir, check_identical,
    files_read, lowered_from_cache, run, timeless, times, two_crate_workspace, walk_workspace,
    walks_from_cache, write,
};

#[test]
fn every_fixture_prints_the_same_from_the_cache() {
    let fixtures = fixture::selected().unwrap_or_else(|e| panic!("{e}"));
    let mut failed = Vec::new();
    for f in &fixtures {
        let args = f.lint_args().unwrap_or_else(|e| panic!("{}: {e}", f.name));
        if let Err(e) = check_identical(&args) {
            failed.push(format!("fixtures/{}: {e}", f.name));
        }
    }
    eprintln!("{} fixtures checked", fixtures.len());
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// A two-crate workspace edited step by step; after each step the cached run prints what
/// a `--no-cache` run prints, and a step that changes what cargo says (a feature, a new
/// member, the lock file) is seen by the cached run too.
#[test]
fn an_edit_sequence_prints_the_same_from_the_cache() {
    let (dir, manifest) = two_crate_workspace("nosync-cache");
    let args: Vec<String> = [
        "cargo-nosync-lint",
        "--manifest-path",
        &manifest,
        "--color",
        "never",
    ]
    .map(str::to_owned)
    .to_vec();
    let all = with(&args, &["--all-features"]);
    // The entry holds the selection, which `-p` and `--exclude` change: runs that differ
    // only in them must not read each other's entry.
    let only_gpu = with(&args, &["-p", "gpu"]);
    let no_app = with(&args, &["--workspace", "--exclude", "app"]);
    let steps: Vec<Step<'_>> = vec![
        ("first run", Box::new(|| {})),
        (
            "a source edit",
            Box::new(|| write(&dir, "src/lib.rs", &APP_LIB.replace("step", "step2"))),
        ),
        (
            "a line inserted at the top of a file (every span in it moves)",
            Box::new(|| {
                let text = APP_LIB.replace("step", "step2");
                write(&dir, "src/lib.rs", &format!("// a new first line\n{text}"));
            }),
        ),
        (
            "a new feature of a member",
            Box::new(|| {
                write(
                    &dir,
                    "gpu/Cargo.toml",
                    &format!("{GPU}\n[features]\nextra = []\n"),
                );
            }),
        ),
        (
            "the lock file",
            Box::new(|| {
                let lock = dir.join("Cargo.lock");
                let text = fs::read_to_string(&lock).unwrap_or_default();
                fs::write(lock, format!("{text}\n# edited\n")).expect("the lock file");
            }),
        ),
        (
            "a new member",
            Box::new(|| {
                write(
                    &dir,
                    "Cargo.toml",
                    &APP.replace("[\"gpu\"]", "[\"gpu\", \"extra\"]"),
                );
                write(
                    &dir,
                    "extra/Cargo.toml",
                    &GPU.replace("\"gpu\"", "\"extra\""),
                );
                write(
                    &dir,
                    "extra/src/lib.rs",
                    "#[no_sync]\npub fn go() { wait(); }\n#[synchronizes]\nfn wait() {}\n",
                );
            }),
        ),
    ];
    let mut failed = Vec::new();
    for (what, step) in &steps {
        step();
        for a in [&args, &all, &only_gpu, &no_app] {
            if let Err(e) = check_identical(a) {
                failed.push(format!("after {what}: {e}"));
            }
        }
    }
    // The member added by the last step is seen through the cache (its root `go`).
    for a in [&args, &all] {
        let out = run(a).1;
        assert!(out.contains("`go` is #[no_sync]"), "{out}");
    }
    let _ = fs::remove_dir_all(&dir);
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// A `macro_rules!` exported by `gpu` that generates a root calling a sink, and a local
/// one that generates a sink, both invoked in `app`.
const GPU_MACRO_LIB: &str = r#"#[macro_export]
macro_rules! root {
    ($name:ident, $sink:ident) => {
        #[no_sync]
        pub fn $name() { $crate::$sink(); }
    };
}

#[synchronizes]
pub fn wait() {}

#[synchronizes]
pub fn other() {}
"#;

const APP_MACRO_LIB: &str = r#"macro_rules! sink {
    ($name:ident) => {
        #[synchronizes]
        fn $name() {}
    };
}

sink!(local_wait);

gpu::root! { step, wait }

#[no_sync]
pub fn go() { local_wait(); }

mod again {
    gpu::root! { step, wait }
}
"#;

/// Expansions come from the cache by content: after each edit of a definition, an
/// invocation, or what stands above one (every span of its expansion moves), the cached
/// run prints what a `--no-cache` run prints (a stale expansion would keep the old
/// finding or its old line), and two identical invocations keep their own spans.
#[test]
fn macro_edits_print_the_same_from_the_cache() {
    let (dir, manifest) = two_crate_workspace("nosync-cache-macros");
    write(&dir, "gpu/src/lib.rs", GPU_MACRO_LIB);
    write(&dir, "src/lib.rs", APP_MACRO_LIB);
    let args: Vec<String> = ["cargo-nosync-lint", "--manifest-path", &manifest]
        .map(str::to_owned)
        .to_vec();
    let json = with(&args, &["--message-format", "json"]);
    let app = |from: &str, to: &str| APP_MACRO_LIB.replace(from, to);
    let steps: Vec<Step<'_>> = vec![
        ("first run", Box::new(|| {})),
        (
            "the exported definition edited (another sink)",
            Box::new(|| {
                let edited = GPU_MACRO_LIB.replace("$crate::$sink();", "$crate::other();");
                write(&dir, "gpu/src/lib.rs", &edited);
            }),
        ),
        (
            "the definition edited back",
            Box::new(|| write(&dir, "gpu/src/lib.rs", GPU_MACRO_LIB)),
        ),
        (
            "an invocation edited",
            Box::new(|| {
                write(
                    &dir,
                    "src/lib.rs",
                    &app("{ step, wait }\n\n#", "{ step2, other }\n\n#"),
                )
            }),
        ),
        (
            "lines inserted above the invocations (their expansions' spans move)",
            Box::new(|| {
                write(
                    &dir,
                    "src/lib.rs",
                    &format!("// one\n// two\n{APP_MACRO_LIB}"),
                )
            }),
        ),
        (
            "the local definition edited (no longer a sink)",
            Box::new(|| {
                write(
                    &dir,
                    "src/lib.rs",
                    &app("#[synchronizes]\n        fn", "fn"),
                )
            }),
        ),
    ];
    let mut failed = Vec::new();
    for (what, step) in &steps {
        step();
        for a in [&args, &json] {
            if let Err(e) = check_identical(&with(a, &["-v"])) {
                failed.push(format!("after {what}: {e}"));
            }
        }
    }
    let _ = fs::remove_dir_all(&dir);
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// A cache of lowered files that is truncated, corrupt or not one at all is read as an
/// empty cache: the run prints what a `--no-cache` run prints, lowers every file again
/// and stores a good cache, which the next run reads.
#[test]
fn a_damaged_lowered_file_cache_is_ignored() {
    let (dir, manifest) = two_crate_workspace("nosync-lowered");
    let args: Vec<String> = ["cargo-nosync-lint", "--manifest-path", &manifest, "-v"]
        .map(str::to_owned)
        .to_vec();
    let cold = timeless(run(&with(&args, &["--no-cache"])));
    check_identical(&args).unwrap_or_else(|e| panic!("{e}"));
    let file = cache_dir(&dir).join("lowered.bin");
    let good = fs::read(&file).expect("the cache of lowered files");
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let damages: [(&str, Vec<u8>); 5] = [
        ("empty", Vec::new()),
        ("truncated", good[..good.len() / 2].to_vec()),
        ("a flipped bit", flipped),
        (
            "another build",
            [&good[..20], &[0u8; 16], &good[36..]].concat(),
        ),
        ("not a cache", b"{\"entries\": []}".to_vec()),
    ];
    for (what, bytes) in damages {
        fs::write(&file, bytes).expect("a damaged cache");
        let damaged = run(&args);
        let from = lowered_from_cache(&times(&damaged.2));
        assert_eq!(timeless(damaged), cold, "{what}");
        assert_eq!(from, Some((0, 2)), "{what}");
        check_identical(&args).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    let _ = fs::remove_dir_all(&dir);
}

/// The cache of walks, edit by edit: each cached run prints what a `--no-cache` run of
/// the same tree prints, and exactly the nodes the edit cannot change come from the
/// cache: all but those of a file whose text changed (a line at its top, a statement in
/// a body, lazy or lowered with its file), none after an edit that changes what resolution
/// sees (a signature, a `macro_rules!`, a new module, an item declared in a body), all
/// again after a comment line above the error of a file that does not parse (it gives no
/// items wherever its error stands). The nodes walked: `step` (lib.rs), `one`, `two`
/// (a.rs), `run_all` and `<Fast as Op>::go` (ops.rs: a provided method specialised to
/// `Fast`), `three` (a.rs), `Fast::run` (fast.rs), and the sinks `gpu::wait`,
/// `gpu::fast_wait` when reached.
#[test]
fn walks_come_from_the_cache_unless_the_edit_can_change_them() {
    let (dir, args) = walk_workspace("nosync-cache-walks");
    let json = with(&args, &["--message-format", "json"]);
    let edit = |path: &str, from: &str, to: &str| {
        let text = fs::read_to_string(dir.join(path)).expect("a source file");
        assert!(text.contains(from), "{path}: {from:?}");
        write(&dir, path, &text.replacen(from, to, 1));
    };
    let steps: Vec<WalkStep<'_>> = vec![
        ("first run", Box::new(|| {}), (0, 7), ""),
        ("nothing edited", Box::new(|| {}), (7, 7), ""),
        (
            "a comment line at the top of a.rs",
            Box::new(|| edit("src/a.rs", "macro_rules!", "// new\nmacro_rules!")),
            (4, 7),
            "",
        ),
        (
            "a sink call added in a lazy body of ops.rs",
            Box::new(|| edit("src/ops.rs", "Fast.go();", "Fast.go();\n    gpu::wait();")),
            (5, 8),
            "`gpu::wait`",
        ),
        (
            "that call removed",
            Box::new(|| edit("src/ops.rs", "\n    gpu::wait();", "")),
            (5, 7),
            "",
        ),
        (
            "the specialised node's callee (`Fast::run`) calls a sink",
            Box::new(|| edit("src/fast.rs", "let _unit = ();", "gpu::fast_wait();")),
            (6, 8),
            "`gpu::fast_wait`",
        ),
        (
            "the specialised node's own body (`Op::go`) edited",
            Box::new(|| {
                edit(
                    "src/ops.rs",
                    "self.run();",
                    "self.run();\n        self.run();",
                )
            }),
            (6, 8),
            "`gpu::fast_wait`",
        ),
        (
            "a signature changed",
            Box::new(|| edit("src/a.rs", "pub fn three()", "pub fn three(_n: u8)")),
            (0, 8),
            "",
        ),
        (
            "the macro_rules! a body invokes changed",
            Box::new(|| edit("src/a.rs", "$e;\n        $e", "$e")),
            (0, 8),
            "",
        ),
        (
            "a new module",
            Box::new(|| {
                write(&dir, "src/extra.rs", "pub fn four() {}\n");
                edit("src/lib.rs", "mod ops;", "mod ops;\nmod extra;");
            }),
            (0, 8),
            "",
        ),
        (
            "the new module no longer parses",
            Box::new(|| write(&dir, "src/extra.rs", "pub fn four( {}\n")),
            (0, 8),
            "parse-error",
        ),
        (
            "a comment line above its error",
            Box::new(|| edit("src/extra.rs", "pub fn four(", "// typing\npub fn four(")),
            (8, 8),
            "parse-error",
        ),
        (
            "a `use` declared in an inner block of a body of a.rs (the body is lowered with \
             its file: a top-level `use` would leave it lazy)",
            Box::new(|| {
                edit(
                    "src/a.rs",
                    "two();\n}",
                    "{ use std::fmt::Write as _; }\n    two();\n}",
                )
            }),
            (0, 8),
            "",
        ),
        (
            "a statement added to that body",
            Box::new(|| edit("src/a.rs", "two();\n}", "two();\n    three(1);\n}")),
            (5, 8),
            "",
        ),
        ("nothing edited again", Box::new(|| {}), (8, 8), ""),
    ];
    let mut failed = Vec::new();
    for (what, step, expected, finding) in &steps {
        step();
        let cold = timeless(run(&with(&args, &["--no-cache"])));
        let warm = run(&args);
        let walks = walks_from_cache(&times(&warm.2));
        // Nothing came from the cache of walks (every body is walked) and no body's text
        // changed: every lazy body comes from its cache, also those of the nodes the runs
        // before took from the cache of walks (kept there, not dropped as unused).
        let bodies = bodies_from_cache(&times(&warm.2));
        if expected.0 == 0
            && *what != "first run"
            && !matches!(bodies, Some((h, a)) if h == a && a > 0)
        {
            failed.push(format!(
                "after {what}: {bodies:?} lazy bodies from the cache"
            ));
        }
        if timeless(warm) != cold {
            failed.push(format!("after {what}: the cached run differs"));
        }
        if walks != Some(*expected) {
            failed.push(format!(
                "after {what}: {walks:?} walked nodes from the cache, not {expected:?}"
            ));
        }
        if !cold.1.contains(finding) {
            failed.push(format!("after {what}: no {finding} in\n{}", cold.1));
        }
        // The JSON of a run from the cache is byte for byte the `--no-cache` run's.
        let (json_cold, json_warm) = (run(&with(&json, &["--no-cache"])).1, run(&json).1);
        if json_cold != json_warm {
            failed.push(format!("after {what}: the cached JSON differs"));
        }
    }
    let _ = fs::remove_dir_all(&dir);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// The stamp table on disk: once a tree has settled, a run reads only the texts it needs
/// (the files its diagnostics point into, and a file edited since), the others looked up
/// by the hash their stamps vouch for; it prints what a `--no-cache` run prints.
#[test]
fn a_settled_file_is_not_read_again_unless_it_changed() {
    let (dir, args) = walk_workspace("nosync-cache-stamps");
    // A stamp vouches only for a file last changed some seconds before it was taken
    // (`source::Stamp::vouches_for`): the tree must have settled before the first run.
    std::thread::sleep(std::time::Duration::from_millis(3_200));
    let read = |what: &str, expected: (usize, usize), failed: &mut Vec<String>| {
        let cold = timeless(run(&with(&args, &["--no-cache"])));
        let warm = run(&args);
        let got = files_read(&times(&warm.2));
        if got != Some(expected) {
            failed.push(format!("{what}: {got:?} files read, not {expected:?}"));
        }
        if timeless(warm) != cold {
            failed.push(format!("{what}: the run differs from --no-cache"));
        }
    };
    let mut failed = Vec::new();
    read("first run", (5, 5), &mut failed);
    read("nothing edited", (0, 5), &mut failed);
    // The edited file (its metadata is not the stamped one), and the files the finding
    // now points into: the root's (src/lib.rs) and the sink's (gpu/src/lib.rs).
    let ops = WALK_OPS.replacen("Fast.go();", "Fast.go();\n    gpu::wait();", 1);
    assert_ne!(ops, WALK_OPS);
    write(&dir, "src/ops.rs", &ops);
    read("a sink call added to ops.rs", (3, 5), &mut failed);
    let _ = fs::remove_dir_all(&dir);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
