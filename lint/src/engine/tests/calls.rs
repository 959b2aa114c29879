//! The call-resolution figures of `-v`: each call site of the walked fns once per crate,
//! by its surest edge, and the unresolved ones.

use super::*;
use crate::engine::CrateCalls;

fn counts(krate: &str, [exact, inferred, name_only, unresolved]: [usize; 4]) -> CrateCalls {
    CrateCalls {
        krate: krate.to_owned(),
        exact,
        inferred,
        name_only,
        unresolved,
    }
}

#[test]
fn call_sites_by_crate_and_how_they_were_resolved() {
    let a = "pub struct T;\nimpl T { pub fn go(&self) {} }\n\
             pub trait Tr { fn m(&self); }\nimpl Tr for T { fn m(&self) {} }\n\
             pub struct U;\nimpl Tr for U { fn m(&self) {} }\n\
             pub fn make() -> T { T }\n";
    let b = "use a::{T, Tr};\n\
             #[nosync::no_sync] pub fn root(t: &T, d: &dyn Tr, x: Mystery) {\n\
             \x20   t.go();\n\
             \x20   a::make().go();\n\
             \x20   d.m();\n\
             \x20   x.frobnicate();\n\
             \x20   mystery();\n\
             }\n";
    let an = analyze_tree(
        &[("a/lib.rs", a), ("b/lib.rs", b)],
        &[("a", "a/lib.rs"), ("b", "b/lib.rs")],
        &[(1, 0)],
    );
    // `t.go()` and `a::make()` exact; `a::make().go()` inferred (a derived type); `d.m()`
    // one exact site (the trait's method), though it reaches both impls too (inferred);
    // `x.frobnicate()` and `mystery()` unresolved.
    assert_eq!(
        an.stats.calls,
        [counts("b", [3, 1, 0, 2]), counts("all", [3, 1, 0, 2])]
    );
}

/// Each root's unresolved calls below it, by crate: its own and its callees' (another
/// root's are that root's own), and a root that reaches none is not listed.
#[test]
fn each_root_says_what_it_could_not_see_below_it() {
    let a = "pub fn helper(x: Mystery) { x.frobnicate(); also_unknown(); }\n\
             pub fn clean() {}\n";
    let b = "#[nosync::no_sync] pub fn root(x: Mystery) { a::helper(x); mystery(); }\n\
             #[nosync::no_sync] pub fn other() { a::clean(); }\n\
             #[nosync::no_sync] pub fn calls_root(x: Mystery) { root(x); }\n";
    let an = analyze_tree(
        &[("a/lib.rs", a), ("b/lib.rs", b)],
        &[("a", "a/lib.rs"), ("b", "b/lib.rs")],
        &[(1, 0)],
    );
    let unseen = |root: &str, n, crates: &[(&str, usize)]| crate::engine::RootUnseen {
        root: root.to_owned(),
        unresolved: n,
        crates: crates.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
    };
    assert_eq!(
        an.stats.unseen,
        [unseen("b::root", 3, &[("a", 2), ("b", 1)])]
    );
}
