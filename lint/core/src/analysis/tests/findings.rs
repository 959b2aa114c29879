//! Which findings a root gets: one per (call site in the root, sink the call reaches), each
//! with its shortest chain, so that fixing one reported chain reveals nothing that was
//! already there.

use crate::test_support::*;

fn heads(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| !l.starts_with("  ") && !l.contains("unresolved-call"))
        .collect()
}

#[test]
fn two_calls_reaching_the_same_sink_are_two_findings() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         fn a() { wait() }\n\
         fn b() { let _x = 1; c() }\n\
         fn c() { wait() }\n\
         #[no_sync] fn step() {\n    a();\n    b();\n}\n",
    );
    let out = check(&src);
    assert_eq!(
        heads(&out),
        [
            "9:5 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`",
            "10:5 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`",
        ],
        "{out}"
    );
    // Each with its own shortest chain.
    assert!(
        out.contains("via 9:5 t::step (exact)\n  via 5:10 t::a (exact)\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "via 10:5 t::step (exact)\n  via 6:22 t::b (exact)\n  via 7:10 t::c (exact)\n"
        ),
        "{out}"
    );
}

#[test]
fn the_same_helper_called_twice_is_reported_at_each_call() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\nfn helper() { wait() }\n\
         #[no_sync] fn step() { helper(); helper(); }\n",
    );
    assert_eq!(
        heads(&check(&src)),
        [
            "6:24 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`",
            "6:34 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`",
        ]
    );
}

#[test]
fn one_call_reaching_two_sinks_is_two_findings_at_that_call() {
    let src = with_prelude(
        "#[synchronizes] fn wait_a() {}\n#[synchronizes] fn wait_b() {}\n\
         fn helper() { wait_a(); wait_b(); }\n#[no_sync] fn step() { helper(); }\n",
    );
    assert_eq!(
        heads(&check(&src)),
        [
            "7:24 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait_a`",
            "7:24 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait_b`",
        ]
    );
}

/// A call dispatched to several impls that reach the same sink is one finding, with the
/// shortest of their chains.
#[test]
fn a_dispatched_call_is_one_finding_per_sink() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         trait Op { fn run(&self); }\n\
         struct Far; impl Op for Far { fn run(&self) { hop() } }\n\
         fn hop() { wait() }\n\
         struct Near; impl Op for Near { fn run(&self) { wait() } }\n\
         #[no_sync] fn step(op: &dyn Op) { op.run(); }\n",
    );
    let out = check(&src);
    assert_eq!(
        heads(&out),
        ["9:38 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`"],
        "{out}"
    );
    assert!(
        out.contains("via 9:38 t::step (inferred)\n  via 8:49 <t::Near as t::Op>::run (exact)\n"),
        "{out}"
    );
}

/// A name-only call next to an exact one: both are reported (the name-only one as a
/// warning), since fixing the exact one would leave the other.
#[test]
fn an_exact_and_a_name_only_call_of_one_sink_are_both_reported() {
    let src = with_prelude(
        "struct Buf; impl Buf { #[synchronizes] fn read(&self) {} }\n\
         #[no_sync] fn step(b: &Buf, x: Unknown) { b.read(); x.read(); }\n",
    );
    let out = check(&src);
    assert_eq!(
        heads(&out),
        [
            "5:45 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `Buf::read`",
            "5:55 possible-sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `Buf::read`",
        ],
        "{out}"
    );
}

/// Calls into another root are reported at that root only, however many there are.
#[test]
fn calls_into_an_inner_root_are_not_findings_of_the_outer_root() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n#[no_sync] fn inner() { wait() }\n\
         #[no_sync] fn outer() { inner(); inner(); }\n",
    );
    assert_eq!(
        heads(&check(&src)),
        ["5:25 sync-in-no-sync: `inner` is #[no_sync] but reaches a host-blocking call: `wait`"]
    );
}

#[test]
fn a_file_included_by_two_targets_is_one_file_and_reports_once() {
    let model = "use nosync::no_sync;\nuse cudarc::driver::CudaStream;\n\
                 #[no_sync] pub fn step(s: &CudaStream) { s.synchronize(); }\n";
    let out = chains_tree(
        &[
            (
                "examples/e/main.rs",
                "mod model;\nmod broken;\nfn main() {}\n",
            ),
            ("examples/e/model.rs", model),
            ("examples/e/broken.rs", "fn f( {\n"),
            (
                "benches/b.rs",
                "#[path = \"../examples/e/model.rs\"]\nmod model;\n\
                 #[path = \"./../examples/e/broken.rs\"]\nmod broken;\nfn main() {}\n",
            ),
        ],
        &[("e", "examples/e/main.rs"), ("b", "benches/b.rs")],
        &[],
    );
    // One parse error and one finding, not one per crate; the kept copy is the first
    // crate's (the one the file's diagnostics belong to).
    insta::assert_snapshot!(out, @"
    examples/e/broken.rs:1:5 parse-error: unclosed delimiter: this `(` is never closed (the file ends first)
    examples/e/model.rs:3:44 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      e::model::step -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 3:44 e::model::step (exact)
    ");
}

/// A root's program links its crate's dependencies, and, for a library, those of the crates
/// built on it: a `dyn` call in an application reaches only the impls of crates it links,
/// the same call in the library the impls of every crate beside a user of it.
#[test]
fn a_root_reaches_only_the_crates_its_program_can_link() {
    let files = [
        (
            "base/src/lib.rs",
            "pub trait Backend { fn read(&self); }\n\
             #[nosync::no_sync] pub fn lib_read(b: &dyn Backend) { b.read() }\n",
        ),
        (
            "cpu/src/lib.rs",
            "pub struct Cpu;\nimpl base::Backend for Cpu { fn read(&self) {} }\n",
        ),
        (
            "gpu/src/lib.rs",
            "pub struct Gpu;\nimpl base::Backend for Gpu {\n    \
             #[nosync::synchronizes] fn read(&self) {}\n}\n",
        ),
        (
            "app/src/lib.rs",
            "#[nosync::no_sync] pub fn step(b: &dyn base::Backend) { b.read() }\n",
        ),
    ];
    let crates = [
        ("base", "base/src/lib.rs"),
        ("cpu", "cpu/src/lib.rs"),
        ("gpu", "gpu/src/lib.rs"),
        ("app", "app/src/lib.rs"),
    ];
    let fixture = Fixture::tree(&files, &crates, &[(1, 0), (2, 0), (3, 0), (3, 1)]);
    let sources = fixture.sources();
    let out = render(
        &analyze_fixture(&fixture, &Default::default(), sources),
        true,
    );
    assert_eq!(
        heads(&out),
        [
            "base/src/lib.rs:2:57 sync-in-no-sync: `lib_read` is #[no_sync] but reaches a host-blocking call: `Gpu::read`"
        ],
        "{out}"
    );
}
