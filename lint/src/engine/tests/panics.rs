//! The safety nets: a panic in one stage on one crate, impl, body or root becomes an
//! `internal-error` naming it, and everything else is still analysed and reported.
//! Each test reaches a fault-injection point (`panics::failpoint`, unit-test builds only).

use super::*;

/// A root whose chain must survive every injected fault elsewhere.
const SURVIVOR: &str = "#[no_sync] pub fn step(s: &CudaStream) { s.synchronize(); }\n";

fn top_lines(out: &str) -> Vec<&str> {
    out.lines().filter(|l| !l.starts_with("  ")).collect()
}

#[test]
fn a_panic_walking_one_body_loses_that_body_only() {
    let src = with_prelude(&format!(
        "{SURVIVOR}#[no_sync] pub fn nosync_lint_test_panic_in_walk() {{}}\n"
    ));
    let out = check(&src);
    assert_eq!(
        top_lines(&out),
        [
            "4:44 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`",
            "5:19 internal-error: internal error while walking the body of `t::nosync_lint_test_panic_in_walk`; its calls are not in the call graph",
        ],
        "{out}"
    );
}

#[test]
fn a_panic_searching_one_root_keeps_the_other_roots() {
    let src = with_prelude(&format!(
        "{SURVIVOR}#[no_sync] pub fn nosync_lint_test_panic_in_search(s: &CudaStream) {{ s.synchronize(); }}\n"
    ));
    let out = check(&src);
    assert_eq!(
        top_lines(&out),
        [
            "4:44 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`",
            "5:19 internal-error: internal error while searching from the #[no_sync] root `t::nosync_lint_test_panic_in_search`; this root's chains are not all reported",
        ],
        "{out}"
    );
}

#[test]
fn a_panic_in_one_impl_loses_that_impl_only() {
    let src = with_prelude(&format!(
        "{SURVIVOR}pub struct S;\nimpl S {{\n    pub fn nosync_lint_test_panic_in_impl(&self) {{}}\n}}\n"
    ));
    let out = check(&src);
    assert_eq!(
        top_lines(&out),
        [
            "4:44 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`",
            "6:6 internal-error: internal error while resolving an `impl` block; its methods are not analysed",
        ],
        "{out}"
    );
}

#[test]
fn a_panic_collecting_one_crate_keeps_the_other_crates() {
    let survivor = with_prelude(SURVIVOR);
    let out = check_tree(
        &[
            (
                "a/lib.rs",
                "pub fn nosync_lint_test_panic_in_collect() {}\n",
            ),
            ("b/lib.rs", &survivor),
        ],
        &[("a", "a/lib.rs"), ("b", "b/lib.rs")],
    );
    assert_eq!(
        top_lines(&out),
        [
            "a/lib.rs:1:1 internal-error: internal error while collecting the items of crate `a`; the items not collected yet are not analysed",
            "b/lib.rs:4:44 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`",
        ],
        "{out}"
    );
}

#[test]
fn the_internal_error_says_where_the_lint_panicked() {
    let out = check(&with_prelude(
        "#[no_sync] pub fn nosync_lint_test_panic_in_walk() {}\n",
    ));
    let a = analyze_src(
        &with_prelude("#[no_sync] pub fn nosync_lint_test_panic_in_walk() {}\n"),
        &Config::default(),
        SourceMap::new(Path::new(ROOT)),
    );
    let d = &a.diagnostics[0];
    assert_eq!(d.code, crate::diagnostics::Code::InternalError, "{out}");
    assert_eq!(d.level, crate::diagnostics::Level::Deny);
    let note = &d.notes[0].message;
    assert!(
        note.starts_with("the lint panicked at lint/core/src/panics.rs:")
            && note.ends_with(": failpoint `walk` reached"),
        "{note}"
    );
}

#[test]
fn an_internal_error_makes_the_exit_status_2_with_the_findings_printed() {
    let a = analyze_src(
        &with_prelude(&format!(
            "{SURVIVOR}#[no_sync] pub fn nosync_lint_test_panic_in_walk() {{}}\n"
        )),
        &Config::default(),
        SourceMap::new(Path::new(ROOT)),
    );
    let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["sync-in-no-sync", "internal-error"]);
    let workspace = crate::report::Context {
        manifest_path: Path::new("Cargo.toml"),
        metadata: None,
        srcroot: None,
    };
    let report = |d| crate::report::Report::new(d, &a.sources, &workspace);
    assert_eq!(crate::cli::exit_status(&report(&a.diagnostics), true), 2);
    assert_eq!(
        crate::cli::exit_status(&report(&a.diagnostics[..1]), true),
        1
    );
    assert_eq!(
        crate::cli::exit_status(&report(&a.diagnostics[..1]), false),
        2
    );
    assert_eq!(crate::cli::exit_status(&report(&[]), true), 0);
}
