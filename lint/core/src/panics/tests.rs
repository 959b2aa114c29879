//! The safety nets: a panic in one stage on one crate, impl, body or root becomes an
//! `internal-error` naming it, and everything else is still analysed and reported. Each test
//! reaches a fault-injection point ([`failpoint`](super::failpoint), in this crate's unit-test
//! build only): an item named `nosync_lint_test_panic_in_<stage>` panics there.

use super::{catch, rethrow};
use crate::config::Config;
use crate::diagnostics::{Code, Level};
use crate::source::SourceMap;
use crate::test_support::{ROOT, analyze_src, check, check_tree, with_prelude};
use std::path::Path;

#[test]
fn a_panic_is_caught_with_its_message_and_location() {
    let caught = catch(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
    assert_eq!(caught.message, "boom 7");
    let at = caught.location.expect("the hook records where");
    assert!(at.starts_with("lint/core/src/panics/tests.rs:"), "{at}");
}

#[test]
fn a_rethrown_panic_is_caught_as_it_was() {
    let first = std::thread::scope(|s| {
        s.spawn(|| catch(|| -> u8 { panic!("on a worker") }))
            .join()
            .expect("caught on the worker")
            .unwrap_err()
    });
    let again = catch(|| -> u8 { rethrow(first.clone()) }).unwrap_err();
    assert_eq!(again, first);
}

#[test]
fn no_panic_returns_the_value_and_nets_nest() {
    assert_eq!(catch(|| 5), Ok(5));
    let inner = catch(|| catch(|| -> u8 { panic!("inner") }));
    assert_eq!(inner.unwrap().unwrap_err().message, "inner");
}

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

/// An internal error is denied (the run exits 2: the engine's tests) and says where the
/// lint panicked.
#[test]
fn the_internal_error_says_where_the_lint_panicked() {
    let src = with_prelude("#[no_sync] pub fn nosync_lint_test_panic_in_walk() {}\n");
    let a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let d = &a.diagnostics[0];
    assert_eq!((d.code, d.level), (Code::InternalError, Level::Deny));
    let note = &d.notes[0].message;
    assert!(
        note.starts_with("the lint panicked at lint/core/src/panics.rs:")
            && note.ends_with(": failpoint `walk` reached"),
        "{note}"
    );
}
