//! Drops as calls: the hop names what is dropped, and `drop(x)` drops `x` there.

use crate::test_support::*;

#[test]
fn drop_hops_name_what_is_dropped() {
    let src = with_prelude(
        "#[synchronizes] fn w() {}\nstruct G; impl Drop for G { fn drop(&mut self) { w(); } }\n\
         struct S; impl Drop for S { #[synchronizes] fn drop(&mut self) {} }\n\
         #[no_sync] fn a() { let _timer = G; }\n#[no_sync] fn c() { let _ = G; }\n\
         #[no_sync] fn d() { let s = S; }\n",
    );
    let out = check(&src);
    for label in [
        "7:37 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `w`\n  \
         = `_timer` is dropped here, and its `Drop` reaches `t::w`, which blocks the host\n",
        "8:21 sync-in-no-sync: `c` is #[no_sync] but reaches a host-blocking call: `w`\n  \
         = the value is dropped here, and its `Drop` reaches `t::w`, which blocks the host\n",
        "= `s` is dropped here, and its `Drop` (`<t::S as Drop>::drop`) blocks the host\n",
    ] {
        assert!(out.contains(label), "{out}");
    }
    assert!(!out.contains("this call reaches"), "{out}");
}

#[test]
fn mem_drop_drops_its_argument_there() {
    let defs = "#[synchronizes] fn w() {}\nstruct G; impl Drop for G { fn drop(&mut self) { w(); } }\n\
                struct P;\n";
    // Each body is the only root; the call graph has G::drop -> w plus the root's edges.
    let cases = [
        // (body of the root, label expected (None: no finding), edges in the graph)
        (
            "let g = G; drop(g); let _p = P;",
            Some("`g` is dropped here"),
            2,
        ),
        (
            "let g = G; std::mem::drop(g);",
            Some("`g` is dropped here"),
            2,
        ),
        (
            "let g = G; core::mem::drop(g);",
            Some("`g` is dropped here"),
            2,
        ),
        ("let g = G; mem::drop(g);", Some("`g` is dropped here"), 2),
        ("drop(G);", Some("the value is dropped here"), 2),
        // A borrow is not a move: `g` is still dropped at the closing brace.
        ("let g = G; drop(&g);", Some("`g` is dropped here"), 2),
        ("let p = P; drop(p);", None, 1),
        (
            "let g = &G; let _ = g; let _ = &G;",
            Some("`g` is dropped here"),
            2,
        ),
    ];
    for (body, label, edges) in cases {
        let src = with_prelude(&format!(
            "use std::mem;\n{defs}#[no_sync] fn r() {{ {body} }}\n"
        ));
        let out = check(&src);
        assert!(
            !out.contains("`drop`"),
            "{body}: drop is not unresolved\n{out}"
        );
        assert!(
            out.contains(&format!("  stats: {edges} edges, 0 unresolved")),
            "{body}\n{out}"
        );
        match label {
            Some(l) => assert!(
                findings(&src).len() == 1
                    && out.contains(&format!("= {l}, and its `Drop` reaches `t::w`")),
                "{body}\n{out}"
            ),
            None => assert!(findings(&src).is_empty(), "{body}\n{out}"),
        }
    }
    // Where it is dropped: at `drop(g)`, not at the closing brace.
    let src = with_prelude(&format!(
        "{defs}#[no_sync] fn r() {{ let g = G; drop(g); }}\n"
    ));
    assert!(
        check(&src).contains("7:32 sync-in-no-sync"),
        "{}",
        check(&src)
    );
}

/// The types of the by-value parameter tests: a `Pending` holds an `Option<Tail>`, whose
/// `Drop` waits (four lines: the roots' lines are counted from them).
const PENDING: &str = "#[synchronizes] fn w() {}\n\
                       pub struct Tail; impl Drop for Tail { fn drop(&mut self) { w(); } }\n\
                       pub struct Pending { tail: Option<Tail>, n: usize }\n\
                       pub struct Done { tail: Option<Tail> }\n";

/// A parameter taken by value is dropped at the fn's end with the fields it still holds:
/// a field taken out of it on the straight path before every exit is not; one taken only
/// after an early `return`, `?` or `bail!` is dropped at that exit.
#[test]
fn a_by_value_parameter_drops_what_it_still_holds() {
    let defs = PENDING.to_owned()
        + "impl Pending { fn into_tail(self) -> Option<Tail> { self.tail } }\n\
                fn check(n: usize) -> Result<(), ()> { Ok(()) }\n";
    let cases = [
        // (the root, the line of its expected finding's site: None for no finding)
        ("fn r(p: Pending) {}", Some("10:30")),
        ("fn r(p: Pending) -> Done { Done { tail: p.tail } }", None),
        (
            "fn r(mut p: Pending) -> usize { let _t = p.tail.take(); p.n }",
            None,
        ),
        (
            "fn r(mut p: Pending) -> Result<Done, ()> { if p.n == 0 { return Err(()); } Ok(Done { tail: p.tail.take() }) }",
            Some("10:69"),
        ),
        (
            "fn r(mut p: Pending) -> usize { if p.n == 0 { let _t = p.tail.take(); } p.n }",
            Some("10:88"),
        ),
        (
            "fn r(mut p: Pending) -> Result<Done, ()> { check(p.n)?; Ok(Done { tail: p.tail.take() }) }",
            Some("10:55"),
        ),
        ("fn r(p: Pending) -> Pending { p }", None),
        ("fn r(p: Pending) -> Option<Tail> { p.into_tail() }", None),
        ("fn r(p: &Pending) {}", None),
    ];
    for (root, site) in cases {
        assert_site(&defs, root, site);
    }
}

/// What a by-value parameter does not drop: a typed receiver that borrows (`self: &Self`)
/// holds no `Self`; a method called `take` on a field of a user type moves nothing out of
/// it; `bail!(value)` is an exit like `bail!("..")`.
#[test]
fn a_borrowing_receiver_drops_nothing_and_only_options_are_taken() {
    let defs = PENDING.to_owned()
        + "impl Pending { fn peek(self: &Self) -> usize { self.n } }\n\
                pub struct Pool { t: Option<Tail> } impl Pool { fn take(&mut self) -> usize { 0 } }\n\
                pub struct Job { pool: Pool }\n";
    let cases = [
        ("fn r(p: &Pending) -> usize { p.peek() }", None),
        (
            "fn r() -> usize { let p = Pending { tail: None, n: 0 }; p.peek() }",
            Some("11:77"),
        ),
        ("fn r(mut j: Job) -> usize { j.pool.take() }", Some("11:54")),
        (
            "fn r(mut p: Pending) -> Result<Done, ()> { if p.n == 0 { bail!(()); } Ok(Done { tail: p.tail.take() }) }",
            Some("11:69"),
        ),
    ];
    for (root, site) in cases {
        assert_site(&defs, root, site);
    }
}

/// The site of root `r`'s finding (`line:col`) in `defs` then `#[no_sync] root`, as `site`
/// says (`None`: no finding).
fn assert_site(defs: &str, root: &str, site: Option<&str>) {
    let src = with_prelude(&format!("{defs}#[no_sync] {root}\n"));
    let out = check(&src);
    let found = out
        .lines()
        .find(|l| l.contains("sync-in-no-sync: `r`"))
        .map(|l| l.split(' ').next().unwrap_or(""));
    assert_eq!(found, site, "{root}\n{out}");
}
