//! Every public operation of `nosync::gpu` either checks the flag (through the choke point) or
//! is listed as non-blocking in the registry `OPS` (`runtime/src/gpu/ops.rs`); blocking cudarc
//! calls are made only in `choke.rs`; `docs/gpu.md` has a row for every operation. Runs without a GPU.
#![cfg(feature = "cuda")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use nosync::gpu::__private::{Check, OPS};
use quote::ToTokens;
use syn::visit::Visit;

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

/// The public fns of the GPU module's sources and the `drop`s of its `Drop` impls, read with
/// syn: a fn of an inherent impl is `Type::method`, a free one its name; the methods of other
/// trait impls are the trait's and not listed.
fn pub_fns() -> Vec<PubFn> {
    let mut out = Vec::new();
    for (file, raw) in sources() {
        let ast = syn::parse_file(&raw).unwrap_or_else(|e| panic!("{file} does not parse: {e}"));
        PubFns {
            file: &file,
            out: &mut out,
        }
        .visit_file(&ast);
    }
    out
}

struct PubFns<'a> {
    file: &'a str,
    out: &'a mut Vec<PubFn>,
}

impl PubFns<'_> {
    /// The body as its tokens without whitespace (`choke::gate(`, `ops::STREAM_SYNC`):
    /// comments are gone, macro arguments are kept.
    fn push(&mut self, name: String, body: &syn::Block) {
        let body = body.to_token_stream().to_string().replace(' ', "");
        self.out.push(PubFn {
            name,
            file: self.file.to_owned(),
            body,
        });
    }
}

impl<'ast> Visit<'ast> for PubFns<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if matches!(f.vis, syn::Visibility::Public(_)) {
            self.push(f.sig.ident.to_string(), &f.block);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let syn::Type::Path(ty) = &*i.self_ty else {
            return;
        };
        let Some(ty) = ty.path.segments.last().map(|s| s.ident.to_string()) else {
            return;
        };
        let trait_ = i.trait_.as_ref().and_then(|(_, p, _)| p.segments.last());
        let is_drop = trait_.is_some_and(|s| s.ident == "Drop");
        if trait_.is_some() && !is_drop {
            return;
        }
        for item in &i.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            let name = f.sig.ident.to_string();
            let listed = match is_drop {
                true => name == "drop",
                false => matches!(f.vis, syn::Visibility::Public(_)),
            };
            if listed {
                self.push(format!("{ty}::{name}"), &f.block);
            }
        }
    }
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
