//! The hostile inputs, built from their names (`family:kind:size`).

use super::Case;

/// Builds case `name`, or `None` when the name is unknown.
pub(crate) fn build(name: &str) -> Option<Case> {
    let mut parts = name.splitn(3, ':');
    let family = parts.next()?;
    let kind = parts.next().unwrap_or("");
    let n: usize = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    match family {
        "deep" => deep(kind, n).map(Case::victim),
        "long" => long(kind, n).map(Case::victim),
        "graph" => graph(kind, n).map(Case::victim),
        "cycle" => cycle(kind, n),
        "file" => file(kind, n),
        "odd" => odd(kind, n).map(Case::victim),
        _ => None,
    }
}

/// `open * n + middle + close * n`.
fn nest(open: &str, middle: &str, close: &str, n: usize) -> String {
    let mut s = String::with_capacity((open.len() + close.len()) * n + middle.len());
    for _ in 0..n {
        s.push_str(open);
    }
    s.push_str(middle);
    for _ in 0..n {
        s.push_str(close);
    }
    s
}

fn in_fn(body: &str) -> String {
    format!("pub fn f(x: u8, y: Option<u8>) {{\n    let _ = {body};\n}}\n")
}

/// Deeply nested syntax: each is one construct repeated `n` times inside the other.
fn deep(kind: &str, n: usize) -> Option<String> {
    Some(match kind {
        "paren" => in_fn(&nest("(", "1", ")", n)),
        "bracket" => in_fn(&nest("[", "1", "]", n)),
        "block" => in_fn(&nest("{ ", "1", " }", n)),
        "if-block" => in_fn(&nest("if true { ", "1", " } else { 0 }", n)),
        "generic-type" => format!("pub type T = {};\n", nest("Option<", "u8", ">", n)),
        "ref-mut-expr" => in_fn(&nest("&mut ", "x", "", n)),
        "ref-lifetime-type" => format!("pub fn f<'a>(x: {}) {{}}\n", nest("&'a ", "u8", "", n)),
        "ptr-type" => format!("pub type T = {};\n", nest("*const ", "u8", "", n)),
        "fn-type" => format!("pub type T = {};\n", nest("fn() -> ", "u8", "", n)),
        "closure" => in_fn(&nest("|x: u8| ", "x", "", n)),
        "move-closure" => in_fn(&nest("move || ", "1", "", n)),
        "return" => format!("pub fn f() -> u8 {{ {} }}\n", nest("return ", "1", "", n)),
        "assign" => format!("pub fn f(mut a: u8) {{ {}; }}\n", nest("a = ", "1", "", n)),
        "range" => in_fn(&nest("", "1", "..1", 1)), // `..` does not chain; kept as a control
        "not" => in_fn(&nest("!", "x", "", n)),
        "neg-spaced" => in_fn(&nest("- ", "1", "", n)),
        "deref" => in_fn(&nest("*", "x", "", n)),
        "ref" => in_fn(&nest("&", "x", "", n)),
        // A call of a char literal whose char is not ASCII: `'é'('é'(..))`.
        "char-call" => in_fn(&nest("'é'(", "1", ")", n)),
        "char-call-comma" => in_fn(&nest("'é'(1, ", "1", ")", n)),
        "generic-comma" => format!("pub type T = {};\n", nest("HashMap<u8, ", "u8", ">", n)),
        "closure-comma" => in_fn(&nest("|a: u8, b: u8| ", "a", "", n)),
        "fn-type-comma" => format!("pub type T = {};\n", nest("fn(u8, u8) -> ", "u8", "", n)),
        "impl-fn-comma" => format!(
            "pub fn f() -> {} {{ todo() }}\n",
            nest("impl Fn(u8, u8) -> ", "u8", "", n)
        ),
        "dyn-fn-comma" => format!(
            "pub type T = {};\n",
            nest("Box<dyn Fn(u8, u8) -> ", "u8", ">", n)
        ),
        "closure-tuple-pat" => in_fn(&nest("|(a, b): (u8, u8)| ", "a", "", n)),
        "async-closure-comma" => in_fn(&nest("async move |a: u8, b: u8| ", "a", "", n)),
        "hrtb-fn-comma" => format!(
            "pub type T = {};\n",
            nest("for<'a> fn(&'a u8, u8) -> ", "u8", "", n)
        ),
        "where-fn-comma" => format!(
            "pub fn f<T>() where T: {} {{}}\n",
            nest("Fn(u8, u8) -> Box<dyn ", "Fn()", ">", n)
        ),
        "ascii-char-call" => in_fn(&nest("'a'(", "1", ")", n)),
        "else-if" => format!(
            "pub fn f(x: bool) {{ {}{{}} }}\n",
            "if x {} else ".repeat(n)
        ),
        "pat-ref-mut" => format!("pub fn f() {{ let {} = 1; }}\n", nest("&mut ", "x", "", n)),
        "pat-tuple" => format!("pub fn f() {{ let {} = 1; }}\n", nest("(", "x", ",)", n)),
        "mod" => nest("pub mod m { ", "pub fn f() {}", " }", n),
        "use-tree" => format!("use {};\n", nest("a::{", "b", "}", n)),
        "macro-tokens" => format!("m!{};\n", nest("(", "x", ")", n)),
        "attr" => format!("#[a{}]\npub fn f() {{}}\n", nest("(", "x", ")", n)),
        _ => return None,
    })
}

/// Long flat sequences: one construct repeated `n` times after the other.
fn long(kind: &str, n: usize) -> Option<String> {
    Some(match kind {
        "method-chain-stmt" => format!("pub fn f(x: u8) {{ x{}; }}\n", ".b()".repeat(n)),
        "binary-stmt" => format!("pub fn f() {{ 1{}; }}\n", " + 1".repeat(n)),
        "binary-return" => format!("pub fn f() -> u8 {{ 1{} }}\n", " + 1".repeat(n)),
        "binary-const" => format!("pub const C: u8 = 1{};\n", " + 1".repeat(n)),
        "binary-arg" => format!("pub fn f() {{ g(1{}); }}\n", " + 1".repeat(n)),
        "macro-rep" => format!(
            "macro_rules! id {{ ($($t:tt)*) => {{ $($t)* }}; }}\nid! {{ pub fn f() {{ {} }} }}\n",
            "g(); ".repeat(n)
        ),
        "macro-rep-items" => format!(
            "macro_rules! id {{ ($($t:tt)*) => {{ $($t)* }}; }}\nid! {{ {} }}\n",
            (0..n)
                .map(|i| format!("fn m{i}() {{}} "))
                .collect::<String>()
        ),
        "method-chain-args" => in_fn(&format!("x{}", ".b(1, 2)".repeat(n))),
        "binary-blocks" => in_fn(&format!("1{}", " + {1}".repeat(n))),
        "binary-calls" => in_fn(&format!("1{}", " + g(1, 2)".repeat(n))),
        "mods-missing" => (0..n).map(|i| format!("mod m{i};\n")).collect(),
        "glob-mods" => {
            let mods: String = (0..n)
                .map(|i| format!("pub mod m{i} {{ pub use super::*; }}\n"))
                .collect();
            mods + "pub fn f() { m0::Missing::x(); m1::m2::m3::gone(); }\n"
        }
        "method-chain" => in_fn(&format!("x{}", ".b()".repeat(n))),
        "field-chain" => in_fn(&format!("x{}", ".f".repeat(n))),
        "index-chain" => in_fn(&format!("x{}", "[0]".repeat(n))),
        "call-chain" => in_fn(&format!("x{}", "()".repeat(n))),
        "try-chain" => format!(
            "pub fn f(x: Option<u8>) -> Option<u8> {{ x{} }}\n",
            "?".repeat(n)
        ),
        "await-chain" => format!("pub async fn f(x: u8) {{ x{}; }}\n", ".await".repeat(n)),
        "cast-chain" => in_fn(&format!("x{}", " as u8".repeat(n))),
        "binary" => in_fn(&format!("1{}", " + 1".repeat(n))),
        "binary-mixed" => in_fn(&format!("1{}", " * 2 + 3 - 4 / 5".repeat(n / 4 + 1))),
        "comparison-and" => in_fn(&format!("true{}", " && x == 1".repeat(n))),
        "path" => in_fn(&format!("a{}", "::b".repeat(n))),
        "items" => (0..n).map(|i| format!("pub fn f{i}() {{}}\n")).collect(),
        "stmts" => format!("pub fn f() {{\n{}}}\n", "    g();\n".repeat(n)),
        "attrs" => format!("{}pub fn f() {{}}\n", "#[inline]\n".repeat(n)),
        "bounds" => format!(
            "pub fn f<T: {}>() {{}}\n",
            vec!["Clone"; n.max(1)].join(" + ")
        ),
        "args" => format!("pub fn f() {{ g({}); }}\n", vec!["1"; n.max(1)].join(", ")),
        "params" => format!(
            "pub fn f({}) {{}}\n",
            (0..n)
                .map(|i| format!("p{i}: u8"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        "match-arms" => format!(
            "pub fn f(x: u32) -> u32 {{ match x {{ {} _ => 0 }} }}\n",
            (0..n).map(|i| format!("{i} => g(),")).collect::<String>()
        ),
        "string" => format!("pub const S: &str = \"{}\";\n", "a".repeat(n)),
        "line" => format!("pub fn f() {{ {} }}\n", "g(); ".repeat(n)),
        "empty-lines" => format!("{}pub fn f() {{}}\n", "\n".repeat(n)),
        "comment" => format!("/*{}*/ pub fn f() {{}}\n", "/*".repeat(n) + &"*/".repeat(n)),
        "lets" => format!("pub fn f() {{\n{}}}\n", "    let x = x.b();\n".repeat(n)),
        "shadowed-drops" => format!(
            "pub struct G; impl Drop for G {{ fn drop(&mut self) {{}} }}\npub fn f() {{\n{}}}\n",
            "    let _g = G;\n".repeat(n)
        ),
        _ => return None,
    })
}

/// Call-graph shapes: chains, self calls, fan-in/fan-out, all under `#[no_sync]` roots.
fn graph(kind: &str, n: usize) -> Option<String> {
    let head = "use nosync::{no_sync, synchronizes};\n#[synchronizes] fn sink() {}\n";
    let n = n.max(1);
    Some(match kind {
        // root -> f0 -> f1 -> ... -> f(n-1) -> sink
        "chain" => {
            let mut s = format!("{head}#[no_sync] pub fn root() {{ f0(); }}\n");
            for i in 0..n - 1 {
                s += &format!("fn f{i}() {{ f{}(); }}\n", i + 1);
            }
            s + &format!("fn f{}() {{ sink(); }}\n", n - 1)
        }
        // every fn of the chain is a root: n findings, chains of every length
        "chain-all-roots" => {
            let mut s = head.to_owned();
            for i in 0..n - 1 {
                s += &format!("#[no_sync] fn f{i}() {{ f{}(); }}\n", i + 1);
            }
            s + &format!("#[no_sync] fn f{}() {{ sink(); }}\n", n - 1)
        }
        "self-call" => format!("{head}#[no_sync] pub fn root() {{ root(); root(); sink(); }}\n"),
        // a complete-ish graph: each fn calls the next 8 (mod n), one of them the sink
        "dense" => {
            let mut s = format!("{head}#[no_sync] pub fn root() {{ f0(); }}\n");
            for i in 0..n {
                let calls: String = (1..=8).map(|k| format!("f{}(); ", (i + k) % n)).collect();
                let tail = if i == n / 2 { "sink();" } else { "" };
                s += &format!("fn f{i}() {{ {calls}{tail} }}\n");
            }
            s
        }
        // many roots, each calling the same sink through one shared fn
        "fan-in" => {
            let mut s = format!("{head}fn shared() {{ sink(); }}\n");
            for i in 0..n {
                s += &format!("#[no_sync] fn r{i}() {{ shared(); }}\n");
            }
            s
        }
        // one root calling many name-only candidates
        "name-only" => {
            let mut s = head.to_owned();
            for i in 0..n {
                s += &format!(
                    "pub struct T{i}; impl T{i} {{ #[synchronizes] pub fn wait(&self) {{}} }}\n"
                );
            }
            s + "#[no_sync] pub fn root(x: Unknown) { x.wait(); }\n"
        }
        _ => return None,
    })
}

/// Cyclic structures: modules, imports, aliases, traits, macros.
fn cycle(kind: &str, n: usize) -> Option<Case> {
    let v = |s: &str| Some(Case::victim(s));
    match kind {
        // k = 4 modules whose globs refer to each other, and `n` distinct unresolvable names
        "glob-mesh-calls" => {
            let mut s = String::new();
            for i in 0..4 {
                s += &format!(
                    "pub mod m{i} {{ pub use super::*; pub use crate::victim::m{}::*; pub use m{}::*; use nowhere{i}::*; }}\n",
                    (i + 1) % 4,
                    (i + 2) % 4
                );
            }
            let calls: String = (0..n)
                .map(|i| format!("Missing{i}::f(); m0::missing{i}(); "))
                .collect();
            v(&(s + &format!("pub fn f() {{ {calls} }}\n")))
        }
        "glob-mesh" => {
            let k = if n == 0 { 8 } else { n };
            let mut s = String::new();
            for i in 0..k {
                s += &format!(
                    "pub mod m{i} {{ pub use super::*; pub use crate::victim::m{}::*; pub use m{}::*; use nowhere{i}::*; }}\n",
                    (i + 1) % k,
                    (i + 2) % k
                );
            }
            v(&(s + "pub fn f() { Missing::f(); missing(); m0::missing(); m3::Gone::new(); }\n"))
        }
        "mod-path-self" => v("#[path = \"victim.rs\"]\nmod again;\npub fn f() {}\n"),
        "mod-path-pair" => Some(Case::victim("#[path = \"b.rs\"]\nmod b;\n").with(
            "src/b.rs",
            "#[path = \"victim.rs\"]\nmod a;\npub fn g() {}\n",
        )),
        "mod-path-root" => v("#[path = \"lib.rs\"]\nmod root_again;\n"),
        "mod-path-dir" => v("#[path = \".\"]\nmod here;\n#[path = \"\"]\nmod empty;\n"),
        "glob-pair" => v(
            "pub mod a { pub use super::b::*; }\npub mod b { pub use super::a::*; }\n\
             use a::Missing;\npub fn f() { Missing::g(); a::h(); b::h(); }\n",
        ),
        "glob-self" => v("pub use self::*;\npub use crate::*;\npub use super::*;\n\
             pub fn f() { g(); }\n"),
        "use-self-name" => v("pub use self::x as x;\npub use y as z;\npub use z as y;\n\
             pub fn f() { x(); y(); z(); }\n"),
        "alias-self" => v(
            "pub type A = A;\npub type B = C;\npub type C = B;\npub type D = Vec<D>;\n\
             pub fn f(a: A, b: B, d: D) { a.m(); b.m(); d.m(); }\n",
        ),
        "trait-cycle" => v(
            "pub trait A: B { fn a(&self) {} }\npub trait B: A { fn b(&self) {} }\n\
             impl<T: A> B for T {}\nimpl<T: B> A for T {}\n\
             pub fn f<T: A>(t: T) { t.a(); t.b(); t.c(); }\n",
        ),
        "deref-cycle" => v("use std::ops::Deref;\npub struct P; pub struct Q;\n\
             impl Deref for P { type Target = Q; fn deref(&self) -> &Q { todo() } }\n\
             impl Deref for Q { type Target = P; fn deref(&self) -> &P { todo() } }\n\
             pub fn f(p: P) { p.nothing(); p.deref().deref().nothing(); }\n"),
        "field-cycle" => v(
            "pub struct A { pub a: Box<A>, pub b: Option<Box<B>> }\npub struct B { pub a: A }\n\
             pub fn f(x: A) { x.a.a.a.a.a.a.a.a.a.a.a.b.unwrap().a.a.m(); }\n",
        ),
        "return-cycle" => v(
            "pub struct S;\nimpl S { pub fn me(&self) -> Self { self.me() } pub fn it(&self) -> &Self { self } }\n\
             pub fn f(s: S) { s.me().it().me().it().me().x(); }\n",
        ),
        "macro-self" => v("macro_rules! m { () => { m!(); }; }\nm!();\n\
             macro_rules! grow { ($($t:tt)*) => { grow!($($t)* $($t)*); }; }\ngrow!(x);\n"),
        "macro-self-empty" => v("macro_rules! m { () => { m!(); }; }\nm!();\n"),
        "macro-self-fn" => v("macro_rules! m { () => { fn g() {} m!(); }; }\nm!();\n"),
        "macro-grow" => {
            v("macro_rules! grow { ($($t:tt)*) => { grow!($($t)* $($t)*); }; }\ngrow!(x);\n")
        }
        "alias-a" => v("pub type A = A;\npub fn f(a: A) { a.m(); }\n"),
        "alias-bc" => v("pub type B = C;\npub type C = B;\npub fn f(b: B) { b.m(); }\n"),
        "alias-vec" => v("pub type D = Vec<D>;\npub fn f(d: D) { d.m(); }\n"),
        "alias-a-unused" => v("pub type A = A;\n"),
        "macro-double" => v("macro_rules! d { ($x:tt) => { d!(($x)); d!(($x)); }; }\nd!(a);\n"),
        "macro-pair" => v("macro_rules! p { ($x:ident) => { q!($x); fn $x() {} }; }\n\
             macro_rules! q { ($x:ident) => { p!($x); }; }\np!(a);\n"),
        "macro-nest" => v("macro_rules! n { ($x:tt) => { n!(($x)); }; }\nn!(a);\n\
             macro_rules! w { ($x:tt) => { mod inner { w!($x); } }; }\nw!(a);\n"),
        "extern-self" => v(
            "extern crate self as me;\nextern crate self as me2;\npub use me::victim::f as g;\n\
             pub fn f() { me::victim::f(); crate::victim::g(); }\n",
        ),
        "impl-self-recursive" => v(
            "pub trait T { fn t(&self); }\nimpl<X: T> T for X { fn t(&self) { self.t() } }\n\
             impl<X> T for Vec<X> where Vec<X>: T { fn t(&self) { self.t() } }\n\
             pub fn f<X: T>(x: X) { x.t(); }\n",
        ),
        // `mod a;` through a directory symlink to itself: a new lexical path at every level
        "symlink-mod-loop" => {
            let mut c = Case::victim("mod a;\npub fn f() {}\n");
            c.symlinks
                .push(("src/victim/a.rs".into(), "../victim.rs".into()));
            c.symlinks.push(("src/victim/a".into(), ".".into()));
            Some(c)
        }
        "symlink-loop" => {
            let mut c = Case::victim("mod looped;\nmod sub;\n");
            c.symlinks
                .push(("src/victim/looped.rs".into(), "looped.rs".into()));
            c.symlinks.push(("src/victim/sub".into(), ".".into()));
            Some(c)
        }
        _ => None,
    }
}

/// Odd files: encodings, empties, missing files, the crate root itself hostile.
fn file(kind: &str, n: usize) -> Option<Case> {
    let v = |s: Vec<u8>| Some(Case::victim(s));
    match kind {
        "empty" => v(Vec::new()),
        "cfg-false" => v(b"#![cfg(FALSE)]\n".to_vec()),
        "cfg-false-only-attr" => v(b"#![cfg(any())]".to_vec()),
        "bom" => v(b"\xEF\xBB\xBFpub fn f() {}\n".to_vec()),
        "bom-only" => v(b"\xEF\xBB\xBF".to_vec()),
        "bom-shebang" => v(b"\xEF\xBB\xBF#!/usr/bin/env run\npub fn f() {}\n".to_vec()),
        "shebang-only" => v(b"#!".to_vec()),
        "crlf" => v(b"pub fn f() {\r\n    g();\r\n}\r\n\r\n".to_vec()),
        "cr-only" => v(b"pub fn f() {\r    g();\r}\r".to_vec()),
        "non-utf8" => v(b"pub fn f() { \xFF\xFE }\n".to_vec()),
        "nul" => v(b"pub fn f() {}\0\0\0".to_vec()),
        "binary" => {
            let mut rng = super::Rng::new(n as u64);
            v((0..4096).map(|_| rng.next() as u8).collect())
        }
        "unicode" => v("pub fn é() { ü(); }\npub fn 中文() { é(); }\n// \u{202E} rtl \u{FEFF} bom mid-file\n\
               pub const S: &str = \"🦀🦀🦀\"; fn 🦀() {}\n"
            .into()),
        "unterminated-string" => v(b"pub fn f() { let s = \"((((((( ; }\n".to_vec()),
        "unterminated-comment" => v(b"pub fn f() {} /* /* */\n".to_vec()),
        "unterminated-raw" => v(b"pub fn f() { r##\"abc\"# }\n".to_vec()),
        "missing-mod" => v(b"mod nowhere;\n#[path = \"/nonexistent/x.rs\"] mod abs;\npub fn f() {}\n".to_vec()),
        "dev-path" => v(b"#[path = \"/dev/zero\"] mod z;\n#[path = \"/dev/stdin\"] mod i;\n#[path = \"/proc/self/mem\"] mod m;\n".to_vec()),
        "huge-ident" => v(format!("pub fn {}() {{}}\n", "a".repeat(n.max(1))).into()),
        "lib-broken" => Some(Case {
            files: vec![("src/lib.rs".into(), b"fn (((( {".to_vec())],
            symlinks: Vec::new(),
            sentinel: false,
        }),
        "lib-missing" => Some(Case::default()),
        "lib-non-utf8" => Some(Case {
            files: vec![("src/lib.rs".into(), b"\xC3\x28 fn x() {}".to_vec())],
            symlinks: Vec::new(),
            sentinel: false,
        }),
        "lib-dir" => Some(Case {
            files: vec![("src/lib.rs/x".into(), b"".to_vec())],
            symlinks: Vec::new(),
            sentinel: false,
        }),
        _ => None,
    }
}

/// Odd but valid (or nearly valid) code around the things the engine resolves.
fn odd(kind: &str, n: usize) -> Option<String> {
    let head = "use nosync::{no_sync, synchronizes};\n#[synchronizes] fn sink() {}\n";
    let body = match kind {
        "weird-impls" => "pub trait Tr { type A; fn m(&self); }\n\
            impl dyn Fn() { pub fn m(&self) { sink() } }\nimpl [u8] { pub fn m(&self) {} }\n\
            impl<T> T { pub fn m(&self) {} }\nimpl (u8, u16) { pub fn m(&self) {} }\n\
            impl <u8 as Tr>::A { pub fn m(&self) {} }\nimpl<const N: usize> [u8; N] { pub fn m(&self) {} }\n\
            impl !Send for u8 {}\nimpl Tr for fn() { type A = Self; fn m(&self) { sink() } }\n\
            #[no_sync] pub fn r(a: &dyn Fn(), b: &[u8], c: (u8, u16), d: fn()) { a.m(); b.m(); c.m(); d.m(); 1u8.m(); }\n".to_owned(),
        "self-outside-impl" => "#[no_sync] pub fn r() { Self::g(); self.h(); <Self as Tr>::m(); Self { a: 1 }.z(); }\n\
            pub fn s(self) { self.t() }\n".to_owned(),
        "raw-idents" => "pub fn r#match() { sink() }\npub struct r#Type; impl r#Type { pub fn r#fn(&self) { r#match() } }\n\
            #[no_sync] pub fn r#r(t: r#Type) { t.r#fn(); r#match(); }\n".to_owned(),
        "attrs-everywhere" => "#[no_sync] pub trait T { #[no_sync] fn req(&self); #[synchronizes] fn s(&self); }\n\
            #[no_sync] pub struct S; #[no_sync] impl S { #[no_sync] pub fn m(&self) { sink() } }\n\
            #[no_sync] pub mod m {} #[synchronizes] pub const C: u8 = 0;\n\
            #[no_sync(bogus = 5, 6)] pub fn a() { sink() }\n#[synchronizes(reason = 5)] pub fn b() {}\n\
            #[synchronizes(reason = \"\\u{0}\\n\")] pub fn c() {}\n#[no_sync] #[no_sync] #[allow_sync] pub fn d() { b(); c(); }\n\
            pub fn e() { #[no_sync] fn inner() { sink() } let _c = #[no_sync] || sink(); inner(); }\n".to_owned(),
        "extern-blocks" => "unsafe extern \"C\" { fn ext(); pub static X: u8; }\n\
            #[no_sync] pub fn r() { unsafe { ext() }; let f: fn() = sink; f(); (sink)(); (|| sink())(); }\n".to_owned(),
        "super-beyond-root" => "use super::super::super::super::x;\nuse crate::crate::y;\nuse self::self::z;\n\
            #[no_sync] pub fn r() { super::super::super::sink(); crate::crate::sink(); ::sink(); ::std::sink(); }\n".to_owned(),
        "generic-soup" => "pub trait A<T: A<T>> { fn a(&self) -> T; }\npub struct W<T>(T);\n\
            impl<T: A<T> + Clone> A<T> for W<T> where W<T>: A<T> { fn a(&self) -> T { self.0.a().a().a() } }\n\
            #[no_sync] pub fn r<T: A<T>, U: Fn(T) -> T>(w: W<T>, u: U) { u(w.a()).a().a(); }\n".to_owned(),
        "closures-async" => "#[no_sync] pub async fn r() { let f = async || sink(); f().await; \
            let g = move |x: u8| -> u8 { sink(); x }; g(1); async { sink() }.await; \
            let h = || || || sink(); h()()(); }\n".to_owned(),
        "tabs-and-wide" => "#[no_sync]\tpub fn r() {\t\t/* 中文中文 */\tsink();\u{200D}\u{2028}}\n".to_owned(),
        "long-line-finding" => format!(
            "#[no_sync] pub fn r() {{ {}sink(); }}\n",
            "let _ = 1; ".repeat(n.max(1))
        ),
        "drop-soup" => "pub struct G; impl Drop for G { #[synchronizes] fn drop(&mut self) {} }\n\
            impl Drop for G { fn drop(&mut self) {} }\nimpl<T> Drop for Vec<T> { fn drop(&mut self) {} }\n\
            #[no_sync] pub fn r() { let _ = G; let _g = G; let (_a, _b) = (G, G); let _ = [G, G]; \
            let Some(_x) = Some(G) else { return }; std::mem::drop(G); drop(G); G; }\n".to_owned(),
        "shadowing" => "pub fn sink2() {}\n#[no_sync] pub fn r() { let sink = || (); sink(); \
            fn sink() {} sink(); { use super::victim::sink2 as sink; sink(); } }\n".to_owned(),
        "unsupported-syntax" => "#[no_sync] pub fn r() { let x = try { sink() }; let y = gen { yield 1 }; \
            become sink(); do yeet 1; k#raw; builtin # offset_of(S, a); }\n".to_owned(),
        "cfg-soup" => "#[cfg()] pub fn a() {}\n#[cfg(not())] pub fn b() {}\n#[cfg(all())] pub fn c() { sink() }\n\
            #[cfg(any())] pub fn d() {}\n#[cfg(feature)] pub fn e() {}\n#[cfg = \"x\"] pub fn f() {}\n\
            #[cfg(feature = 5)] pub fn g() {}\n#[cfg(feature = \"\\u{0}\")] pub fn h() {}\n\
            #[cfg(not(not(not(not(test)))))] pub fn i() {}\n#[cfg_attr(all(), path = \"nowhere.rs\")] mod j;\n\
            #[cfg_attr(any(), no_sync)] #[cfg_attr(all(), no_sync)] pub fn k() { c(); }\n\
            #[cfg(target_os = \"linux\", feature = \"x\")] pub fn l() {}\n#[cfg(unknown_pred(1, 2))] pub fn m() {}\n".to_owned(),
        // The fuzzer's two inputs that crashed the optimized build in `greedy_len` (SIGSEGV,
        // c97142e): `$name` not followed by `:`, so the fragment kind is whatever comes third.
        // They crash only an optimized lint: `cargo test --release --test robustness` shows it.
        "malformed-fragments" => "macro_rules!device_getter {($ox<n e)cn b()\n}\ndevice_getter!();\n\
            macro_rules! m { ($naBox<dyn me:) => { n }; }\nm!(ec);\n".to_owned(),
        _ => return None,
    };
    Some(format!("{head}{body}"))
}
