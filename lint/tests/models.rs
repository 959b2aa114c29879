//! The shipped library models (`lint/core/src/known/models.toml`) against their libraries' sources:
//! for every version a library's models were checked against (`[libraries.<name>] checked`),
//! the function each model names is in that version's source and its body contains the
//! model's evidence (`source.has`, whitespace aside), and a model whose `versions` leave a
//! checked version out names no function there, or one without the evidence (the split is
//! the source's, not a guess).
//! Each flag (`[[flag]]`) is a static of its library that is not `pub`, starts at its
//! `default`, and is written only by its setters, which nothing in the library calls. Each
//! derive (`[[derive]]`) is written by the function its `source` names in the macro's crate,
//! which contains the evidence. Each variant (`[[variant]]`) is a method of the impl its
//! `source` names, for the type the entry names, whose body returns that variant.
//!
//! The sources come from crates.io through cargo: a probe crate depends on each library
//! version (without default features) and `cargo metadata` downloads them, once; later runs
//! read cargo's cache (about a second).

use nosync_lint_core::known::models::{Derive, Flag, Model, Variant, shipped as shipped_models};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use syn::spanned::Spanned;

#[test]
fn models_match_their_sources() {
    let (models, errors) = shipped_models();
    assert!(errors.is_empty(), "models.toml: {errors:?}");
    let dirs = library_sources(models);
    let mut problems = Vec::new();
    let mut checked = 0;
    for lib in &models.libraries {
        for version in &lib.checked {
            let dir = &dirs[&(lib.name.clone(), version.to_string())];
            let Library { fns, statics } = read_library(dir);
            for flag in models
                .flags
                .iter()
                .filter(|f| package_of(f.krate()) == lib.name)
            {
                if flag.holds_for(Some(version)) {
                    checked += 1;
                    let at = format!("{} {version}: flag `{}`", lib.name, flag.path);
                    problems.extend(
                        flag_problems(flag, (&fns, &statics)).map(|p| format!("{at}: {p}")),
                    );
                }
            }
            for d in models
                .derives
                .iter()
                .filter(|d| derive_library(d) == lib.name)
            {
                checked += 1;
                let at = format!("{} {version}: derive `{}`", lib.name, d.path);
                problems.extend(derive_problems(d, &fns).map(|p| format!("{at} {p}")));
            }
            for v in (models.variants.iter())
                .filter(|v| package_of(v.krate()) == lib.name && v.holds_for(Some(version)))
            {
                checked += 1;
                let at = format!("{} {version}: variant `{}`", lib.name, v.path);
                problems.extend(variant_problems(v, &fns).map(|p| format!("{at} {p}")));
            }
            for m in models.models.iter().filter(|m| library_of(m) == lib.name) {
                let Some(source) = &m.source else { continue };
                let found: Vec<&Function> = fns.iter().filter(|f| locates(m, f)).collect();
                let at = format!("{} {version}: `{}`", lib.name, m.path);
                let has = |e: &String| found.iter().any(|f| f.body.contains(&squash(e)));
                if !m.holds_for(Some(version)) {
                    let split = models
                        .models
                        .iter()
                        .any(|o| o.path == m.path && o.holds_for(Some(version)));
                    // Left out where the function is there with its evidence: no split the
                    // source makes (one without the evidence waits otherwise, or not at all).
                    if !found.is_empty() && source.has.iter().all(has) && !split {
                        problems.push(format!("{at} is there, but its `versions` leave it out"));
                    }
                    continue;
                }
                checked += 1;
                match found.is_empty() {
                    true => problems.push(format!("{at} is not in the source")),
                    false => problems.extend(
                        source
                            .has
                            .iter()
                            .filter(|e| !has(e))
                            .map(|e| format!("{at} does not contain `{e}`")),
                    ),
                }
            }
        }
    }
    assert_eq!(problems, Vec::<String>::new());
    // Every model with a source, every flag and every derive was checked in at least one
    // version.
    let sourced = models.models.iter().filter(|m| m.source.is_some()).count();
    let facts = models.flags.len() + models.derives.len() + models.variants.len();
    assert!(checked >= sourced + facts);
}

/// What is wrong with variant fact `v` in its library's source: the impl its `source` names
/// (which must be for `v.for_ty`, behind `&` as `for_ref` says) lacks the function, or the
/// function's body lacks the evidence of the variant it returns.
fn variant_problems<'a>(v: &'a Variant, fns: &'a [Function]) -> impl Iterator<Item = String> + 'a {
    let source = v.source.clone().unwrap_or_default();
    let ty = v.for_ty.rsplit("::").next().unwrap_or_default();
    let amp = if v.for_ref { "&" } else { "" };
    let trait_ = v.path.rsplit("::").nth(1).unwrap_or_default();
    let wrong_impl = (source.impl_.as_deref() != Some(&format!("{trait_} for {amp}{ty}")))
        .then(|| format!("has a `source.impl` that is not `{trait_} for {amp}{ty}`"));
    let variant = v.returns.rsplit("::").take(2).collect::<Vec<_>>();
    let returns = format!("{}::{}(", variant[1], variant[0]);
    let lacking = (!source.has.iter().any(|e| e.contains(&returns)))
        .then(|| format!("has no `source.has` evidence that it returns `{returns}..)`"));
    let derive = Derive {
        path: v.path.clone(),
        constructor: String::new(),
        defaults: None,
        reason: v.reason.clone(),
        source: Some(source),
        span: v.span.clone(),
    };
    let found: Vec<String> = derive_problems(&derive, fns).collect();
    wrong_impl.into_iter().chain(lacking).chain(found)
}

/// The package of a derive's macro (its `source.library`).
fn derive_library(d: &Derive) -> String {
    let lib = d.source.as_ref().and_then(|s| s.library.clone());
    lib.unwrap_or_else(|| package_of(d.path.split("::").next().unwrap_or_default()))
}

/// What is wrong with derive `d` in its macro's source: the function its `source` names
/// (in the impl it names, else outside any impl) is missing, or lacks the evidence.
fn derive_problems<'a>(d: &'a Derive, fns: &'a [Function]) -> impl Iterator<Item = String> + 'a {
    let source = d.source.as_ref();
    let name = source.and_then(|s| s.fn_.as_deref()).unwrap_or_default();
    let imp = source.and_then(|s| s.impl_.as_deref());
    let found: Vec<&Function> = (fns.iter())
        .filter(|f| f.name == name)
        .filter(
            |f| match imp.map(|i| i.split_once(" for ").unwrap_or(("", i))) {
                Some(("", ty)) => f.trait_.is_none() && f.self_ty.as_deref() == Some(ty),
                Some((tr, ty)) => {
                    f.trait_.as_deref() == Some(tr) && f.self_ty.as_deref() == Some(ty)
                }
                None => f.self_ty.is_none(),
            },
        )
        .collect();
    let missing = found
        .is_empty()
        .then(|| format!("has no `{name}` in the source"));
    let has = source.map(|s| s.has.as_slice()).unwrap_or_default();
    let lacking = has
        .iter()
        .filter(move |e| !found.iter().any(|f| f.body.contains(&squash(e))))
        .map(move |e| format!("`{name}` does not contain `{e}`"));
    missing.into_iter().chain(lacking)
}

/// The package whose source holds a model's evidence (`candle_core` → `candle-core`).
fn library_of(m: &Model) -> String {
    let krate = m.source.as_ref().and_then(|s| s.library.clone());
    krate.unwrap_or_else(|| package_of(m.path.split("::").next().unwrap_or_default()))
}

fn package_of(krate: &str) -> String {
    krate.replace('_', "-")
}

/// What is wrong with `flag` in a library's source: its static (where, visibility, initial
/// value), its setters (there, each writing it), the writes elsewhere and the calls of a
/// setter inside the library.
fn flag_problems(
    flag: &Flag,
    (fns, statics): (&[Function], &[Static]),
) -> impl Iterator<Item = String> {
    let segs: Vec<&str> = flag.path.split("::").collect();
    let (name, module) = (segs[segs.len() - 1], &segs[1..segs.len() - 1]);
    let mut problems = Vec::new();
    let in_module = |m: &[String]| m.iter().map(String::as_str).eq(module.iter().copied());
    match statics
        .iter()
        .find(|s| s.name == name && in_module(&s.module))
    {
        None => problems.push("the static is not in the source".to_owned()),
        Some(s) if s.public => {
            problems.push("the static is `pub`: other crates can write it".to_owned())
        }
        Some(s) if !s.init.ends_with(&format!("new({})", flag.default)) => problems.push(format!(
            "the static does not start at {}: `{}`",
            flag.default, s.init
        )),
        Some(_) => {}
    }
    let setter = |f: &Function| {
        flag.set_by.iter().any(|p| {
            let segs: Vec<&str> = p.split("::").collect();
            let module = &segs[1..segs.len() - 1];
            f.self_ty.is_none()
                && f.name == segs[segs.len() - 1]
                && f.module
                    .iter()
                    .map(String::as_str)
                    .eq(module.iter().copied())
        })
    };
    for p in &flag.set_by {
        let last = p.rsplit("::").next().unwrap_or_default();
        match fns.iter().find(|f| setter(f) && f.name == last) {
            None => problems.push(format!("the setter `{p}` is not in the source")),
            Some(f) if !f.body.contains(&format!("{name}.store(")) => {
                problems.push(format!("the setter `{p}` does not store the flag"))
            }
            Some(_) => {}
        }
    }
    let writes = ["store(", "swap(", "fetch_", "compare_exchange"].map(|w| format!("{name}.{w}"));
    for f in fns.iter().filter(|f| !setter(f)) {
        if writes.iter().any(|w| f.body.contains(w)) {
            problems.push(format!("`{}` writes the flag and is no setter", f.name));
        }
        if flag.setter_names().any(|n| calls(&f.body, n)) {
            problems.push(format!("`{}` calls a setter inside the library", f.name));
        }
    }
    problems.into_iter()
}

/// Whether a squashed body calls `name` (not a longer name ending in it).
fn calls(body: &str, name: &str) -> bool {
    let ident = |c: char| c == '_' || c.is_alphanumeric();
    body.match_indices(&format!("{name}("))
        .any(|(i, _)| !body[..i].ends_with(ident))
}

/// Each checked library version's source directory, by (package, version).
fn library_sources(
    models: &nosync_lint_core::known::models::Models,
) -> BTreeMap<(String, String), PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("models-probe");
    std::fs::create_dir_all(dir.join("src")).expect("probe dir");
    let mut deps = String::new();
    for lib in &models.libraries {
        for v in &lib.checked {
            let alias = format!("{}_{}", lib.name, v).replace(['-', '.'], "_");
            let name = &lib.name;
            deps += &format!(
                "{alias} = {{ package = \"{name}\", version = \"={v}\", default-features = false }}\n"
            );
        }
    }
    let manifest = format!(
        "[package]\nname = \"models-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\n{deps}\n[workspace]\n"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("probe manifest");
    std::fs::write(dir.join("src/lib.rs"), "").expect("probe lib");
    // Offline first (cargo's cache, no index update), then online for what is missing.
    let metadata = |offline: bool| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["metadata", "--format-version", "1", "--manifest-path"]);
        cmd.arg(dir.join("Cargo.toml"));
        if offline {
            cmd.arg("--offline");
        }
        cmd.output().expect("cargo metadata runs")
    };
    let out = Some(metadata(true))
        .filter(|o| o.status.success())
        .unwrap_or_else(|| metadata(false));
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let mut dirs = BTreeMap::new();
    for p in meta["packages"].as_array().into_iter().flatten() {
        let key = (
            p["name"].as_str().unwrap_or_default().to_owned(),
            p["version"].as_str().unwrap_or_default().to_owned(),
        );
        let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap_or_default());
        if let Some(root) = manifest.parent() {
            dirs.insert(key, root.to_path_buf());
        }
    }
    dirs
}

/// A function of a library's source: where it is and its body's text without whitespace.
#[derive(Debug)]
struct Function {
    /// Modules from the crate root (`driver::result::ctx`), `safe` left out (cudarc
    /// re-exports its safe layer from the module above).
    module: Vec<String>,
    /// The impl block's self type (`&Tensor` for a reference) and trait, by their last
    /// segments.
    self_ty: Option<String>,
    trait_: Option<String>,
    name: String,
    body: String,
}

/// A `static` of a library's source.
#[derive(Debug)]
struct Static {
    module: Vec<String>,
    name: String,
    /// Declared plain `pub` (not `pub(crate)`): other crates can name it.
    public: bool,
    /// Its initializer without whitespace.
    init: String,
}

/// What a library's source holds that the checks read.
#[derive(Debug, Default)]
struct Library {
    fns: Vec<Function>,
    statics: Vec<Static>,
}

/// Every function and static of the crate at `dir` (all `.rs` files under `src/`, every
/// `#[cfg]`).
fn read_library(dir: &Path) -> Library {
    let mut out = Library::default();
    let mut stack = vec![dir.join("src")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("source dir").flatten() {
            let path = entry.path();
            // The FFI bindings (`sys`: generated, megabytes per CUDA version) hold no model.
            if path.is_dir() && !path.ends_with("sys") {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("source file");
                let Ok(file) = syn::parse_file(&text) else {
                    continue;
                };
                let module = file_module(&dir.join("src"), &path);
                items(&file.items, &module, &text, &mut out);
            }
        }
    }
    out
}

/// The module path of a source file (`src/driver/result.rs` → `driver::result`).
fn file_module(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if segs.last().is_some_and(|s| s == "mod" || s == "lib") {
        segs.pop();
    }
    segs.retain(|s| s != "safe");
    segs
}

fn items(list: &[syn::Item], module: &[String], text: &str, out: &mut Library) {
    let body = |b: &syn::Block| squash(text.get(b.span().byte_range()).unwrap_or_default());
    let last = |p: &syn::Path| p.segments.last().map(|s| s.ident.to_string());
    for item in list {
        match item {
            syn::Item::Static(st) => out.statics.push(Static {
                module: module.to_vec(),
                name: st.ident.to_string(),
                public: matches!(st.vis, syn::Visibility::Public(_)),
                init: squash(text.get(st.expr.span().byte_range()).unwrap_or_default()),
            }),
            syn::Item::Fn(f) => out.fns.push(Function {
                module: module.to_vec(),
                self_ty: None,
                trait_: None,
                name: f.sig.ident.to_string(),
                body: body(&f.block),
            }),
            syn::Item::Impl(imp) => {
                let self_ty = match &*imp.self_ty {
                    syn::Type::Path(p) => last(&p.path),
                    syn::Type::Reference(r) => match &*r.elem {
                        syn::Type::Path(p) => last(&p.path).map(|t| format!("&{t}")),
                        _ => None,
                    },
                    _ => None,
                };
                let trait_ = imp.trait_.as_ref().and_then(|(_, p, _)| last(p));
                for i in &imp.items {
                    if let syn::ImplItem::Fn(f) = i {
                        out.fns.push(Function {
                            module: module.to_vec(),
                            self_ty: self_ty.clone(),
                            trait_: trait_.clone(),
                            name: f.sig.ident.to_string(),
                            body: body(&f.block),
                        });
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    let mut module = module.to_vec();
                    module.push(m.ident.to_string());
                    items(inner, &module, text, out);
                }
            }
            _ => {}
        }
    }
}

/// Whether `f` is the function model `m` names (or, with `source.impl`, points at).
fn locates(m: &Model, f: &Function) -> bool {
    let segs: Vec<&str> = m.path.split("::").collect();
    let source = m.source.as_ref();
    let name = source
        .and_then(|s| s.fn_.as_deref())
        .unwrap_or(segs[segs.len() - 1]);
    if f.name != name {
        return false;
    }
    if let Some(imp) = source.and_then(|s| s.impl_.as_deref()) {
        let (tr, ty) = imp.split_once(" for ").unwrap_or(("", imp));
        return f.trait_.as_deref() == Some(tr) && f.self_ty.as_deref() == Some(ty);
    }
    let owner = segs[segs.len() - 2];
    if owner.starts_with(|c: char| c.is_ascii_uppercase()) {
        let want_trait = m.on_drop.then_some("Drop");
        return f.self_ty.as_deref() == Some(owner)
            && (want_trait.is_none() || f.trait_.as_deref() == want_trait);
    }
    let module: Vec<&str> = segs[1..segs.len() - 1]
        .iter()
        .copied()
        .filter(|s| *s != "safe")
        .collect();
    f.self_ty.is_none() && f.module.iter().map(String::as_str).eq(module)
}

/// `s` without whitespace.
fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}
