//! Lazy fn bodies (`parse::lazy`): which bodies are kept lazy, the eager fallback, statement
//! macros naming a `macro_rules!`, and syntax errors inside a body.

use crate::config::Config;
use crate::test_support::*;

/// The names of the fns whose bodies the pre-pass keeps lazy in `src`.
fn lazy_fns(src: &str) -> Vec<String> {
    let (_, recorded, _) = crate::parse::blank::blank(src).expect("the scanner reads it");
    let mut starts: Vec<usize> = recorded.keys().map(|&lo| lo as usize).collect();
    starts.sort();
    starts
        .into_iter()
        .map(|lo| {
            let head = &src[..lo];
            let at = head.rfind("fn ").expect("a fn before the body") + 3;
            let name: String = head[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            name
        })
        .collect()
}

/// `src` as crate `t`, with lazy (or eager) bodies, walking only what the roots reach (walking
/// every fn would read every body).
fn analyze(src: &str, eager_bodies: bool) -> Analysis {
    let fx = Fixture::src(src);
    let config = Config::default();
    let opts = Options {
        eager_bodies,
        ..Options::default()
    };
    analyze_crates_with(fx.input(&config), opts, &fx.files)
}

/// The chains of `src` analysed with lazy bodies, checked equal to the eager analysis.
fn chains_both(src: &str) -> String {
    let lazy = chains_of(&analyze(src, false), false);
    assert_eq!(
        lazy,
        chains_of(&analyze(src, true), false),
        "lazy and eager bodies differ"
    );
    lazy
}

#[test]
fn bodies_that_may_declare_items_or_name_escapes_stay_eager() {
    let src = "fn plain(s: &S) { s.go(); let x: *const u8 = p(); q::<'static>(x); a.union(&b); m!(1) }\n\
               fn empty() {}\n\
               fn item() { fn inner() {} }\n\
               fn strukt() { struct A; }\n\
               fn uses() { use std::mem; mem::drop(1); use a::{b as _, c::*}; }\n\
               fn inner_use() { if a { use std::mem; } }\n\
               fn macro_use() { m!(use x;); }\n\
               fn pub_use() { pub use a::b; }\n\
               fn escape_use() { use nosync::allow_sync; }\n\
               fn konst() { const N: u8 = 1; }\n\
               fn stat() { static N: u8 = 1; }\n\
               fn uni() { union U { a: u8 } }\n\
               fn attr() { #[cfg(x)] f(); }\n\
               fn esc() { nosync::allow_sync(|| f()); }\n\
               fn esc_macro() { allow_sync_expr!(f()); }\n\
               fn rules() { macro_rules! m { () => {} } }\n\
               fn deep() { if a { loop { { impl X for Y {} } } } }\n\
               mod m { impl T { fn in_impl(&self) { g() } } trait U { fn provided() { h() } fn decl(); } }\n\
               extern \"C\" { fn foreign(); }\n\
               struct S { f: u8 }\n\
               fn last() -> u8 { 1 }\n";
    assert_eq!(
        lazy_fns(src),
        ["plain", "uses", "in_impl", "provided", "last"],
        "only bodies that can declare nothing but top-level `use`s and name no escape are lazy"
    );
    let (_, recorded, _) = crate::parse::blank::blank(src).expect("the scanner reads it");
    let mut uses: Vec<&(u32, String)> = recorded.values().flat_map(|r| &r.uses).collect();
    uses.sort();
    let texts: Vec<&str> = uses
        .iter()
        .map(|(at, t)| &src[*at as usize..][..t.len()])
        .collect();
    let recorded_texts: Vec<&str> = uses.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts, recorded_texts, "each where it stands");
    assert_eq!(texts, ["use std::mem;", "use a::{b as _, c::*};"]);
}

#[test]
fn a_lazy_body_declares_its_top_level_uses_as_an_eager_one_does() {
    // The body stays lazy; its `use`s are the fn's nested items all the same, so the calls
    // through them resolve when a root reaches it, at the same places.
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         mod inner { #[synchronizes] pub fn block() {} }\n\
         #[no_sync] fn root() { use inner::block as b; b(); use self::wait as w; w(); }\n",
    );
    assert!(
        lazy_fns(&src).contains(&"root".to_owned()),
        "{:?}",
        lazy_fns(&src)
    );
    insta::assert_snapshot!(chains_both(&src), @"
    6:47 sync-in-no-sync: `root` is #[no_sync] but reaches a host-blocking call: `block`
      = this call reaches `t::inner::block`, which blocks the host
      t::root -> t::inner::block (Blocks, exact, Deny)
      via 6:47 t::root (exact)
    6:73 sync-in-no-sync: `root` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::root -> t::wait (Blocks, exact, Deny)
      via 6:73 t::root (exact)
    ");
}

#[test]
fn the_scanner_reads_literals_comments_and_lifetimes_as_the_lexer_does() {
    // Braces, `#` and keywords inside literals and comments are not tokens; a doc comment
    // is an attribute; `'static`, `*const`, `r#fn` and `x != y` are not what they look like.
    let src = "fn strs() { let _ = (\"{ fn }\", r#\"}\" # fn\"#, b'{', '}', '\\'', br\"#\", c\"}\"); }\n\
               fn chars<'a>(x: &'a u8) -> &'a u8 { let _: &'static str = \"\"; let _ = 'é'; x }\n\
               fn comments() { /* { fn /* nested } */ } */ // } fn\n g() }\n\
               fn raw() { r#fn(); r#struct::f(); a.r#type(); }\n\
               fn not_macro() { let _ = x != y; m!(a); n! [b]; }\n\
               fn doc() { /// a doc comment is an attribute\n f(); }\n\
               fn inner_doc() { //! so is this\n }\n\
               fn block_doc() { /** and this */ f() }\n\
               fn plain_block() { /**/ /*** not doc */ f() }\n\
               fn unicode() { let é = 1; é\u{2028}; }\n";
    assert_eq!(
        lazy_fns(src),
        [
            "strs",
            "chars",
            "comments",
            "raw",
            "not_macro",
            "plain_block",
            "unicode"
        ],
    );
    let (_, recorded, _) = crate::parse::blank::blank(src).expect("reads");
    let macros: Vec<&Vec<String>> = recorded
        .values()
        .map(|r| &r.macros)
        .filter(|m| !m.is_empty())
        .collect();
    assert_eq!(macros, [&vec!["m".to_owned(), "n".to_owned()]]);
}

#[test]
fn text_the_scanner_cannot_read_blanks_nothing() {
    for src in [
        "fn f() { let s = \"unterminated; }",
        "fn f() { /* unterminated }",
        "fn f() { (] }",
        "fn f() { g() }}",
        "fn f() { g() ",
        "fn f() { `x` }",
    ] {
        assert_eq!(crate::parse::blank::blank(src), None, "{src}");
    }
    // A lazy body's contents are cut out, its braces kept; the parsed text's offsets map
    // back to the file's: the `{}` to the body, what follows past the cut.
    let src = "fn f() { g(\"é\") }\nfn h() {}\n";
    let (cut, recorded, cuts) = crate::parse::blank::blank(src).expect("reads");
    assert_eq!(cut, "fn f() {}\nfn h() {}\n");
    assert_eq!(recorded[&7].hi, 18);
    assert_eq!(cuts, crate::parse::lazy::Cuts(vec![(8, 9)]));
    assert_eq!(cuts.range(7..9), (7, 18), "the braces: the body");
    assert_eq!(
        cuts.range(7..8),
        (7, 8),
        "the opening brace: its end is not moved"
    );
    assert_eq!(cuts.range(8..9), (17, 18), "the closing brace");
    assert_eq!(cuts.range(0..2), (0, 2), "before the cut");
    assert_eq!(cuts.range(10..12), (19, 21), "after it: `fn` of `h`");
}

#[test]
fn lazy_bodies_give_what_eager_ones_give() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         struct M;\n\
         impl M { fn run(&self, s: &CudaStream) { let v = vec![1]; for _ in v { s.synchronize(); } } }\n\
         trait T { fn go(&self) { wait() } }\n\
         impl T for M {}\n\
         #[no_sync] fn root(s: &CudaStream) { let m = M; m.run(s); m.go(); }\n",
    );
    insta::assert_snapshot!(chains_both(&src), @"
    9:51 sync-in-no-sync: `root` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::root -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 9:51 t::root (inferred)
      via 6:74 t::M::run (exact)
    9:61 sync-in-no-sync: `root` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::root -> t::wait (Blocks, inferred, Deny)
      via 9:61 t::root (inferred)
      via 7:26 <t::M as t::T>::go (exact)
    ");
}

#[test]
fn a_brace_group_that_is_not_the_body_makes_the_file_eager() {
    // `{ 3 }` is the first brace group of `f` (a const generic argument), and `X`'s `{..}`
    // follows a `fn` that is a type: neither is a body, so the file is parsed eagerly.
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         struct A<const N: usize>;\n\
         const X: fn() = { wait };\n\
         #[no_sync] fn f() -> A<{ 3 }> { wait(); A }\n",
    );
    assert_eq!(lazy_fns(&src).len(), 2, "both groups are taken for bodies");
    let (cut, recorded, cuts) = crate::parse::blank::blank(&src).expect("the scanner reads it");
    let file: syn::File = syn::parse_str(&cut).expect("the cut text parses");
    assert!(
        !crate::parse::lazy::check(&file, &recorded, &cuts),
        "no fn has those blocks"
    );
    insta::assert_snapshot!(chains_both(&src), @"
    7:33 sync-in-no-sync: `f` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::f -> t::wait (Blocks, exact, Deny)
      via 7:33 t::f (exact)
    ");
}

#[test]
fn a_lazy_body_invoking_a_macro_rules_is_expanded_as_before() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         macro_rules! helper { ($n:ident) => { fn $n() { wait() } }; }\n\
         #[no_sync] fn root() { helper!(made); made(); }\n",
    );
    assert_eq!(lazy_fns(&src), ["root"]);
    insta::assert_snapshot!(chains_both(&src), @"
    6:39 sync-in-no-sync: `root` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::root -> t::wait (Blocks, exact, Deny)
      via 6:39 t::root (exact)
      via 6:24 t::made (exact)
    ");
}

#[test]
fn a_syntax_error_in_a_reached_body_is_reported_there_and_the_file_is_analysed() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         #[no_sync] fn broken() { let x = ; wait(); }\n\
         #[no_sync] fn fine() { wait(); }\n",
    );
    // `broken` is a root that could not be read: not checked, and the run says so.
    insta::assert_snapshot!(check(&src), @"
    5:15 unparsed-root: this #[no_sync] function's body could not be parsed, so it was not checked
      = its syntax error is reported as a `parse-error`
    5:34 parse-error: syntax error: expected an expression
    6:24 sync-in-no-sync: `fine` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      via 6:24 t::fine (exact)
      stats: 1 edges, 0 unresolved
    ");
}

#[test]
fn a_syntax_error_in_a_body_no_root_reaches_is_not_reported() {
    // `helper` is not reached from `root`: its body is never parsed, so its error is left to
    // rustc, and the rest of the file (the finding of `root`) is analysed.
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         fn helper() { let y = ; }\n\
         #[no_sync] fn root() { wait(); }\n",
    );
    // Through `analyze`, not `check`: walking every fn reads `helper` too (and reports its
    // error), which a run does not.
    insta::assert_snapshot!(render(&analyze(&src, false), false), @"
    6:24 sync-in-no-sync: `root` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      via 6:24 t::root (exact)
      stats: 1 edges, 0 unresolved
    ");
}

#[test]
fn macros_that_generate_items_directly_or_through_another_are_expanded_in_lazy_bodies() {
    // `outer!` declares nothing itself but invokes `helper!`, which does; `bail!` can only
    // return, so a body invoking it stays lazy until the walk reads it.
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         macro_rules! helper { ($n:ident) => { fn $n() { wait() } }; }\n\
         macro_rules! outer { ($n:ident) => { helper!($n); }; }\n\
         macro_rules! bail { ($e:expr) => { return Err(format!(\"{}\", $e)) }; }\n\
         #[no_sync] fn root() -> Result<(), String> { outer!(made); made(); if false { bail!(1) } Ok(()) }\n\
         #[no_sync] fn other() -> Result<(), String> { wait(); bail!(2) }\n",
    );
    insta::assert_snapshot!(chains_both(&src), @"
    8:60 sync-in-no-sync: `root` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::root -> t::wait (Blocks, exact, Deny)
      via 8:60 t::root (exact)
      via 8:46 t::made (exact)
    9:47 sync-in-no-sync: `other` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::other -> t::wait (Blocks, exact, Deny)
      via 9:47 t::other (exact)
    ");
}
