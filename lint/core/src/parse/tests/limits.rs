//! Bounded work on hostile input: broken and truncated files parse to located errors, never a panic.

use crate::test_support::*;

#[test]
fn broken_input_never_panics() {
    let deep_parens = format!("fn f() {{ {}1{} }}", "(".repeat(5000), ")".repeat(5000));
    let deep_unary = format!("fn f() {{ let x = {}1; }}", "!".repeat(100_000));
    let long_chain = format!("fn f() {{ x{} ; }}", ".a()".repeat(20_000));
    let deep_blocks = format!("fn f() {{ {}{} }}", "{".repeat(3000), "}".repeat(3000));
    let garbage: String = (0..5000u32)
        .map(|i| char::from_u32(32 + (i * 7919) % 90).unwrap_or(' '))
        .collect();
    let cases = [
        deep_parens,
        deep_unary,
        long_chain,
        deep_blocks,
        garbage,
        "fn f( {".to_owned(),
        "\u{feff}#!/bin/x\nfn f() {}".to_owned(),
        "impl<T> X for T where T: {} mod m { fn".to_owned(),
        "macro_rules! m { ($($x:tt)*) => { m!($($x)*); } } m!(a);".to_owned(),
        "mod a { pub use super::b::*; } mod b { pub use super::a::*; } use a::Z; #[no_sync] fn r() { Z::f(); }".to_owned(),
        "pub type A = A;\npub type B = C;\npub type C = B;\npub type D = Vec<D>;\n\
         pub fn f(a: A, b: B, d: D) { a.m(); b.m(); d.m(); }"
            .to_owned(),
        format!(
            "macro_rules! id {{ ($($t:tt)*) => {{ $($t)* }}; }}\nid! {{ {} }}",
            (0..3000).map(|i| format!("fn m{i}() {{}} ")).collect::<String>()
        ),
        String::new(),
    ];
    for src in &cases {
        // A panic would be caught by the nets and reported: none may be.
        let out = check(src);
        assert!(!out.contains("internal-error"), "{src:.80}\n{out}");
    }
}

#[test]
fn truncated_files_never_panic_and_report_a_parse_error() {
    let text = include_str!("../../../../../fixtures/demo/src/model.rs");
    let cuts: Vec<usize> = (1..text.len())
        .step_by(97)
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    let mut errors = 0;
    for cut in cuts {
        let out = check(&text[..cut]);
        errors += usize::from(out.contains("parse-error"));
    }
    assert!(
        errors > 0,
        "truncating a real file must produce parse errors"
    );
}
