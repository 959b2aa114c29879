//! Every public operation of `nosync::gpu` either checks the flag (through the choke point) or
//! is listed as non-blocking in the registry `OPS` (`runtime/src/gpu/ops.rs`); blocking cudarc
//! calls are made only in `choke.rs`; `docs/gpu.md` has a row for every operation. Runs without a GPU.
#![cfg(feature = "cuda")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use nosync::gpu::__private::{Check, OPS};

/// A public function found in the source: its name (`Type::method`) and its body's text.
struct PubFn {
    name: String,
    file: String,
    body: String,
}

fn gpu_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu")
}

fn sources() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(gpu_dir())
        .expect("runtime/src/gpu exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("readable source"))
        })
        .collect();
    files.sort();
    files
}

/// Source text without comments (line comments and doc comments), so that examples in docs
/// are not taken for code.
fn strip_comments(src: &str) -> String {
    src.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text from `open` (an index of `{`) to its matching `}`.
fn block(src: &str, open: usize) -> &str {
    let mut depth = 0usize;
    for (i, c) in src[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &src[open..open + i + 1];
                }
            }
            _ => {}
        }
    }
    &src[open..]
}

/// The type an `impl` header is for: `impl<T: X> Foo<T> {` → `Foo`; `impl Drop for Foo<T>` →
/// `Foo` (with `is_drop`); other trait impls → `None` (their methods are the trait's).
fn impl_target(header: &str) -> Option<(String, bool)> {
    let header = header.trim_start_matches("impl").trim();
    let header = if header.starts_with('<') {
        let mut depth = 0;
        let end = header
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '<' => 1,
                    '>' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map_or(0, |(i, _)| i + 1);
        header[end..].trim()
    } else {
        header
    };
    let ident = |s: &str| -> String {
        s.trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    match header.split_once(" for ") {
        Some((tr, ty)) if ident(tr) == "Drop" => Some((ident(ty), true)),
        Some(_) => None,
        None => Some((ident(header), false)),
    }
}

/// An `impl` block: where its body opens and ends, and its target (see `impl_target`).
type ImplSpan = (usize, usize, Option<(String, bool)>);

fn pub_fns() -> Vec<PubFn> {
    let mut out = Vec::new();
    for (file, raw) in sources() {
        let src = strip_comments(&raw);
        let mut impls: Vec<ImplSpan> = Vec::new();
        for (at, _) in src.match_indices("\nimpl") {
            let open = at + src[at..].find('{').expect("impl has a body");
            let end = open + block(&src, open).len();
            impls.push((open, end, impl_target(&src[at + 1..open])));
        }
        for (at, pattern) in src
            .match_indices("pub fn ")
            .chain(src.match_indices("pub unsafe fn "))
            .chain(src.match_indices("pub const fn "))
            .chain(src.match_indices("    fn drop(&mut self)"))
        {
            let is_drop = pattern.contains("drop");
            let name_start = at + pattern.len();
            let fname: String = if is_drop {
                "drop".to_owned()
            } else {
                src[name_start..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            };
            let owner = impls.iter().find(|(o, e, _)| *o < at && at < *e);
            let name = match owner {
                Some((_, _, Some((ty, drop_impl)))) if *drop_impl == is_drop => {
                    format!("{ty}::{fname}")
                }
                Some(_) => continue, // a trait's method, or `drop` outside a Drop impl
                None if is_drop => continue,
                None => fname,
            };
            let open = at + src[at..].find('{').expect("fn has a body");
            out.push(PubFn {
                name,
                file: file.clone(),
                body: block(&src, open).to_owned(),
            });
        }
    }
    out
}

/// `NAME = "Api::name"` pairs of the `ops!` table: the static behind each checked op.
fn op_statics() -> BTreeMap<String, String> {
    let src = std::fs::read_to_string(gpu_dir().join("ops.rs")).expect("ops.rs");
    let mut map = BTreeMap::new();
    for line in src.lines() {
        let line = line.trim();
        let Some((id, rest)) = line.split_once(" = \"") else {
            continue;
        };
        if !id.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
            continue;
        }
        if let Some(api) = rest.split('"').next() {
            map.insert(api.to_owned(), id.to_owned());
        }
    }
    map
}

#[test]
fn every_public_op_is_in_the_registry_and_nothing_else_is() {
    let found: BTreeSet<String> = pub_fns().into_iter().map(|f| f.name).collect();
    let listed: BTreeSet<String> = OPS.iter().map(|e| e.name.to_owned()).collect();
    assert!(found.len() > 40, "the scan found too little: {found:?}");
    let unlisted: Vec<_> = found.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&found).collect();
    assert!(
        unlisted.is_empty(),
        "public GPU ops with no row in OPS, runtime/src/gpu/ops.rs (add one: Checked or NonBlocking): {unlisted:?}"
    );
    assert!(
        stale.is_empty(),
        "rows in OPS for ops that do not exist: {stale:?}"
    );
    assert_eq!(listed.len(), OPS.len(), "OPS lists an op twice");
}

#[test]
fn checked_ops_reach_the_choke_point_and_non_blocking_ones_do_not() {
    let statics = op_statics();
    let fns: BTreeMap<String, PubFn> = pub_fns().into_iter().map(|f| (f.name.clone(), f)).collect();
    let mut problems = Vec::new();
    for entry in OPS {
        let Some(f) = fns.get(entry.name) else {
            continue;
        };
        let via_choke = f.body.contains("choke::");
        match entry.check {
            Check::Checked(op) => {
                assert_eq!(op.name(), entry.name, "row and op disagree");
                let id = statics.get(entry.name).map(String::as_str).unwrap_or("?");
                let names_op = f.body.contains(&format!("ops::{id}"));
                if !via_choke && !names_op {
                    problems.push(format!(
                        "{} ({}) is listed as checked but never reaches choke::",
                        f.name, f.file
                    ));
                }
            }
            Check::NonBlocking(_) if via_choke => {
                problems.push(format!(
                    "{} ({}) calls the choke point but is listed as non-blocking",
                    f.name, f.file
                ));
            }
            Check::NonBlocking(_) => {}
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// cudarc calls that can make the host wait (from the cudarc 0.19.10 source).
const BLOCKING_CUDARC_CALLS: &[&str] = &[
    ".synchronize()",
    ".clone_dtoh(",
    ".memcpy_dtoh(",
    ".clone_htod(",
    ".memcpy_htod(",
    ".clone_dtod(",
    ".alloc_zeros(",
    ".alloc(",
    ".load_module(",
    ".new_stream(",
    "malloc_host(",
    "free_host(",
    ".elapsed_ms(",
    "CudaContext::new(",
    "compile_ptx",
    ".as_slice()",
    "alloc_pinned",
];

#[test]
fn blocking_cudarc_calls_are_made_only_in_the_choke_point() {
    let mut outside = Vec::new();
    let mut inside = 0;
    for (file, raw) in sources() {
        let src = strip_comments(&raw);
        for call in BLOCKING_CUDARC_CALLS {
            let hits = src.matches(call).count();
            if file == "choke.rs" {
                inside += hits;
            } else if hits > 0 {
                outside.push(format!("{file}: {call}"));
            }
        }
    }
    assert!(
        inside >= 12,
        "the scan found only {inside} blocking calls in choke.rs"
    );
    assert!(
        outside.is_empty(),
        "blocking cudarc calls outside choke.rs: {outside:?}"
    );
}

#[test]
fn docs_table_has_a_row_for_every_op_and_agrees_on_blocking() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/gpu.md");
    let doc = std::fs::read_to_string(&doc_path).expect("docs/gpu.md exists");
    let mut rows = BTreeMap::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        rows.insert(cells[1].trim_matches('`').to_owned(), cells[2].to_owned());
    }
    let mut problems = Vec::new();
    for entry in OPS {
        match (rows.get(entry.name), entry.check) {
            (None, _) => problems.push(format!("no row for `{}`", entry.name)),
            (Some(b), Check::NonBlocking(_)) if b != "no" => problems.push(format!(
                "`{}` is non-blocking but the table says `{b}`",
                entry.name
            )),
            (Some(b), Check::Checked(_)) if b == "no" => problems.push(format!(
                "`{}` is checked but the table says `no`",
                entry.name
            )),
            _ => {}
        }
    }
    assert!(
        problems.is_empty(),
        "docs/gpu.md is out of date: {problems:#?}"
    );
}

#[test]
fn the_registry_sites_are_consistent() {
    for entry in OPS {
        if let Check::Checked(op) = entry.check {
            assert_eq!(op.may.kind, nosync::SyncKind::May, "{}", entry.name);
            assert_eq!(op.does.kind, nosync::SyncKind::Does, "{}", entry.name);
            assert_eq!(op.may.api, op.does.api);
            assert!(!op.when.is_empty() && !op.may.reason.is_empty());
        }
    }
}
