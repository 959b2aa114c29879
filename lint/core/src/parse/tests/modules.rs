//! Module files declared where the lint must look for them itself: inside `macro_rules!`
//! expansions (tokio's `cfg_*!` macros), inside inline modules, under `#[path]`; a module
//! file that cannot be read; files read only through the loader.

use crate::config::Config;
use crate::source::{MemLoader, SourceMap};
use crate::test_support::{
    Input, Options, analyze_crates_with, chains_tree, check_tree, render, spec,
};
use std::path::PathBuf;

/// tokio 1.16's shape: `cfg_aio! { pub mod bsd { mod poll_aio; } }` in `src/io/mod.rs`, with
/// the macro wrapping each item in a `#[cfg]`. The lint looked for `bsd/poll_aio.rs`
/// relative to nothing (a `missing-module` on a published crate), and dropped every
/// `mod x;` at an expansion's top level (`cfg_rt! { pub mod runtime; }`) unanalysed.
#[test]
fn modules_declared_inside_macro_expansions_are_found_and_analysed() {
    let cfg_macros = "macro_rules! cfg_io {\n    ($($item:item)*) => {\n        \
                      $( #[cfg(feature = \"on\")] $item )*\n    }\n}\n";
    let lib = format!(
        "use nosync::{{no_sync, synchronizes}};\n{cfg_macros}\
         cfg_io! {{\n    pub mod io;\n}}\n\
         #[no_sync]\npub fn step() {{\n    io::bsd::wait();\n    io::flush();\n}}\n"
    );
    let out = check_tree(
        &[
            ("src/lib.rs", &lib),
            (
                "src/io/mod.rs",
                "cfg_io! {\n    pub mod bsd {\n        mod poll_aio;\n        \
                 pub use poll_aio::wait;\n    }\n    mod driver;\n}\n\
                 pub fn flush() { driver::drain(); }\n",
            ),
            (
                "src/io/bsd/poll_aio.rs",
                "#[nosync::synchronizes]\npub fn wait() {}\n",
            ),
            (
                "src/io/driver.rs",
                "#[nosync::synchronizes]\npub fn drain() {}\n",
            ),
        ],
        &[("tk", "src/lib.rs")],
    );
    assert_eq!(
        out,
        "src/lib.rs:12:5 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`\n  \
         = this call reaches `tk::io::bsd::poll_aio::wait`, which blocks the host\n  \
         via 12:5 tk::step (exact)\n\
         src/lib.rs:13:5 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `drain`\n  \
         = this call reaches `tk::io::driver::drain`, which blocks the host\n  \
         via 13:5 tk::step (exact)\n  \
         via 8:18 tk::io::flush (exact)\n  \
         stats: 3 edges, 0 unresolved\n"
    );
}

/// In an expansion inside an inline module, a file is looked for under the inline
/// module's directory (the parse error shows `here.rs` was read); a file that really is
/// missing is reported (it was dropped silently).
#[test]
fn expansions_in_inline_modules_look_in_their_directory_and_report_missing_files() {
    let out = check_tree(
        &[
            (
                "src/lib.rs",
                "macro_rules! wrap { ($($i:item)*) => { $($i)* } }\nwrap! { mod gone; }\n\
                 mod inner {\n    wrap! { pub mod deep { pub mod here; } }\n}\n",
            ),
            ("src/inner/deep/here.rs", "fn f( {\n"),
        ],
        &[("mm", "src/lib.rs")],
    );
    assert_eq!(
        out,
        "src/inner/deep/here.rs:1:5 parse-error: unclosed delimiter: this `(` is never closed (the file ends first)\n\
         src/lib.rs:2:1 missing-module: file not found for module `gone`\n  \
         = declared here\n  \
         stats: 0 edges, 0 unresolved\n"
    );
}

/// nalgebra's shape: one file included by `#[path]` as a module of several modules of one
/// crate (benches, per-version glam glue) was reported as "already part of the module
/// tree" and analysed once; each inclusion is its own module, as in rustc. A file that
/// includes itself is still refused, and so is a file naming a `mod r#type;` found in `type.rs`.
#[test]
fn one_file_may_be_several_modules_but_never_its_own_descendant() {
    let out = check_tree(
        &[
            (
                "src/lib.rs",
                "use nosync::no_sync;\npub mod v1;\npub mod v2;\nmod r#type;\n\
                 #[no_sync]\npub fn step() {\n    v1::glue::wait();\n    v2::glue::wait();\n    r#type::wait();\n}\n",
            ),
            ("src/v1.rs", "#[path = \"common/glue.rs\"]\npub mod glue;\n"),
            ("src/v2.rs", "#[path = \"common/glue.rs\"]\npub mod glue;\n"),
            (
                "src/common/glue.rs",
                "#[nosync::synchronizes]\npub fn wait() {}\n#[path = \"glue.rs\"]\nmod again;\n",
            ),
            ("src/type.rs", "#[nosync::synchronizes]\npub fn wait() {}\n"),
        ],
        &[("nal", "src/lib.rs")],
    );
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(
        lines,
        [
            "src/common/glue.rs:3:1 missing-module: module `again` names `src/common/glue.rs`, which is the file of a module that contains it",
            "src/lib.rs:7:5 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`",
            "src/lib.rs:8:5 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`",
            "src/lib.rs:9:5 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`",
        ],
        "{out}"
    );
    assert!(
        out.contains("this call reaches `nal::v1::glue::wait`"),
        "{out}"
    );
    assert!(
        out.contains("this call reaches `nal::v2::glue::wait`"),
        "{out}"
    );
    assert!(
        out.contains("this call reaches `nal::r#type::wait`"),
        "{out}"
    );
}

/// A lattice of files each including the next twice would be 2^n modules: a file is at
/// most `MAX_LOADS` (64) modules of a crate, then refused with a diagnostic.
#[test]
fn a_lattice_of_double_inclusions_stays_bounded() {
    let names: Vec<String> = (0..=20).map(|i| format!("src/f{i}.rs")).collect();
    let texts: Vec<String> = (0..20)
        .map(|i| {
            let next = format!("f{}.rs", i + 1);
            format!("#[path = \"{next}\"]\nmod a;\n#[path = \"{next}\"]\nmod b;\n")
        })
        .chain(["pub fn leaf() {}\n".to_owned()])
        .collect();
    let mut files: Vec<(&str, &str)> = vec![("src/lib.rs", "#[path = \"f0.rs\"]\nmod f0;\n")];
    files.extend(
        names
            .iter()
            .map(String::as_str)
            .zip(texts.iter().map(String::as_str)),
    );
    let out = check_tree(&files, &[("lat", "src/lib.rs")]);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    // f0..f6 are 2^i <= 64 modules each; from f7 on, each file is 64 modules (its
    // declarations are reached 128 times): both declarations of f6..f19 are refused, each
    // reported once (a file's diagnostics are reported once).
    let mut expected: Vec<String> = (6..20)
        .flat_map(|i| {
            [(1, "a"), (3, "b")].map(|(line, m)| {
                format!("src/f{i}.rs:{line}:1 missing-module: module `{m}` names `src/f{}.rs`, which is already 64 modules of this crate", i + 1)
            })
        })
        .collect();
    expected.sort();
    assert_eq!(lines, expected, "{out}");
}

/// rustix / socket2 / tempfile / heapless choose a module's file with `#[cfg_attr(pred,
/// path = "..")]`: the lint read only a plain `#[path]` and reported `missing-module`
/// for `sys.rs`, never analysing the platform code. The first `path` whose predicate
/// holds and whose file exists is the file (unknown predicates hold, so `unix` and
/// `windows` both do: the first written wins); a false predicate's path is not taken.
#[test]
fn cfg_attr_path_chooses_the_module_file() {
    let out = chains_tree(
        &[
            (
                "src/lib.rs",
                "use nosync::no_sync;\n\
                 #[cfg_attr(feature = \"off\", path = \"sys/none.rs\")]\n\
                 #[cfg_attr(unix, path = \"sys/unix.rs\")]\n\
                 #[cfg_attr(windows, path = \"sys/windows.rs\")]\n\
                 mod sys;\n\
                 #[cfg_attr(all(), cfg_attr(feature = \"on\", path = \"poly/std.rs\"))]\nmod poly;\n\
                 #[no_sync]\npub fn step() {\n    sys::wait();\n    poly::wait();\n}\n",
            ),
            // Only the file that must be chosen has the sink.
            ("src/sys/none.rs", "pub fn wait() {}\n"),
            (
                "src/sys/unix.rs",
                "#[nosync::synchronizes]\npub fn wait() {}\n",
            ),
            ("src/sys/windows.rs", "pub fn wait() {}\n"),
            (
                "src/poly/std.rs",
                "#[nosync::synchronizes]\npub fn wait() {}\n",
            ),
        ],
        &[("ca", "src/lib.rs")],
        &[],
    );
    // No missing-module: each `mod` finds the file its attributes choose.
    insta::assert_snapshot!(out, @"
    src/lib.rs:10:5 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `ca::sys::wait`, which blocks the host
      ca::step -> ca::sys::wait (Blocks, exact, Deny)
      via 10:5 ca::step (exact)
    src/lib.rs:11:5 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `ca::poly::wait`, which blocks the host
      ca::step -> ca::poly::wait (Blocks, exact, Deny)
      via 11:5 ca::step (exact)
    ");
}

/// A module file that is not UTF-8 is reported at the `mod` item that names it (as
/// rustc does), not at 1:1 of a file with no text.
#[test]
fn an_unreadable_module_file_is_reported_at_its_mod_item() {
    let dir = PathBuf::from("/mem/utf8");
    let files = MemLoader::new()
        .with(dir.join("lib.rs"), "pub mod fine {}\nmod bad;\n")
        .with(dir.join("bad.rs"), &b"fn f() {}\n\xff\xfe\n"[..]);
    let (crates, config) = (vec![spec("t", dir.join("lib.rs"))], Config::default());
    let input = Input::new(dir.clone(), crates, SourceMap::new(&dir), &config);
    let a = analyze_crates_with(input, Options::default(), &files);
    let out = render(&a, true);
    assert_eq!(
        out,
        "lib.rs:2:1 parse-error: cannot read `bad.rs`: stream did not contain valid UTF-8\n  = the module's file is declared here\n  stats: 0 edges, 0 unresolved\n"
    );
}

/// The core reads only through its loader: its own `src/parse/mod.rs` is on the disk, but
/// `mod parse;` names it only once the loader has it.
#[test]
fn the_core_reads_files_only_through_its_loader() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let lib = root.join("src/lib.rs");
    let analyse = |files: &MemLoader| {
        let (crates, config) = (vec![spec("t", lib.clone())], Config::default());
        let input = Input::new(root.clone(), crates, SourceMap::new(&root), &config);
        let a = analyze_crates_with(input, Options::default(), files);
        render(&a, true)
    };
    let files = MemLoader::new().with(&lib, "mod parse;\n");
    assert_eq!(
        analyse(&files),
        "src/lib.rs:1:1 missing-module: file not found for module `parse`\n  = declared here\n  stats: 0 edges, 0 unresolved\n"
    );
    let files = files.with(root.join("src/parse/mod.rs"), "");
    assert_eq!(analyse(&files), "  stats: 0 edges, 0 unresolved\n");
}
