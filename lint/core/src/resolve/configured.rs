//! Resolving the configuration's `roots`, `sinks` and `allow` paths to fns.
//!
//! The paths were checked and split into segments when the configuration was read
//! (`config::path`); here they are only looked up. Paths start with a crate name
//! (`candle_core::Tensor::to_vec1`) or are qualified
//! (`<candle_core::Tensor as candle_core::Module>::forward`). A cudarc path that is not
//! in the built-in table becomes a new sink. A path matching nothing is a `config-error`
//! at the path, with the closest analysed fn as a "did you mean". Configured roots are checked whatever `-p`/`--exclude` select: they
//! are explicit, and typically name code in dependencies that no member selection covers.

use super::*;
use crate::config::{Config, Entry, PathKind, error};
use crate::diagnostics::Diagnostic;
use crate::known::canonical;
use crate::source::SourceMap;

/// Marks configured roots, sinks and escapes; returns every root (attribute or config).
pub fn apply(
    map: &mut DefMap<'_>,
    cfg: &Config,
    sources: &SourceMap,
) -> (Vec<FnId>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut failed = Failed::new();
    let mut cx = (&mut diags, &mut failed);
    for e in &cfg.roots {
        for f in lookup(map, e, false, sources, &mut cx) {
            let marks = &mut map.fns[f as usize].marks;
            marks.configured_root |= !marks.root;
            marks.root = true;
        }
    }
    for e in &cfg.sinks {
        for f in lookup(map, e, true, sources, &mut cx) {
            let reason = e
                .reason
                .clone()
                .unwrap_or_else(|| "it is listed in the configuration's `sinks`".to_owned());
            map.fns[f as usize].marks.sink = Some(reason);
        }
    }
    for e in &cfg.allow {
        for f in lookup(map, e, false, sources, &mut cx) {
            map.fns[f as usize].marks.allow = true;
        }
    }
    for ((path, _), (at, times)) in failed {
        if times > 1 {
            diags[at].notes.push(crate::diagnostics::Note {
                message: format!("`{path}` is listed {times} times; only the first is reported"),
                span: None,
            });
        }
    }
    super::marks::inherit_sinks(map);
    let roots = map.fn_ids().filter(|&f| map.func(f).marks.root).collect();
    (roots, diags)
}

/// Paths that matched nothing: (path, sink) → (their diagnostic, times listed). A
/// path listed many times is reported once (2 000 copies on one line made 2 000
/// diagnostics, each rendering the whole line).
type Failed = HashMap<(String, bool), (usize, usize)>;

fn lookup(
    map: &mut DefMap<'_>,
    e: &Entry,
    sink: bool,
    sources: &SourceMap,
    (diags, failed): &mut (&mut Vec<Diagnostic>, &mut Failed),
) -> Vec<FnId> {
    let text = &e.path.text;
    if let Some((_, times)) = failed.get_mut(&(text.clone(), sink)) {
        *times += 1;
        return Vec::new();
    }
    let resolved = crate::panics::catch(|| resolve_entry(map, &e.path.kind, sink));
    match resolved {
        Ok(Ok(f)) => f,
        Err(caught) => {
            let subject = format!("the configured path `{text}`");
            let at = sources.span(e.span);
            diags.push(caught.diagnostic("matching", &subject, "it is not applied", at));
            Vec::new()
        }
        Ok(Err(why)) => {
            let mut d = error(sources, e.span, format!("`{text}` {why}"));
            // Suggestions for the first few failures only: each compares every fn's path.
            if failed.len() < MAX_SUGGESTED
                && let Some(near) = nearest_fn(map, text)
            {
                d = d.with_help(format_args!("did you mean `{near}`?"));
            }
            failed.insert((text.clone(), sink), (diags.len(), 1));
            diags.push(d);
            Vec::new()
        }
    }
}

/// Most failing configured paths that get a "did you mean".
const MAX_SUGGESTED: usize = 32;

/// The item's real path, where `path` names an item by a path it does not have (a trait
/// `pub(crate)` in a submodule, named where it is used: [`same_item`]); else the analysed fn
/// (or built-in cudarc sink) whose path is closest to `path`. Either as a user can write
/// it: through the public re-export where the fn is in a private module
/// ([`DefMap::writable_path`]).
fn nearest_fn(map: &DefMap<'_>, path: &str) -> Option<String> {
    let near = same_item(map, path).or_else(|| {
        let paths = map.fns.iter().map(|f| f.path.as_str());
        let best = crate::diagnostics::suggest::closest(path, paths)?;
        map.fns
            .iter()
            .position(|f| f.path == best)
            .map(|f| f as FnId)
    })?;
    Some(map.writable_path(near)).filter(|p| p != path)
}

/// The fn of `path`'s crate whose last two segments are `path`'s
/// (`BinaryKernel::forward`, `<T as BinaryKernel>::forward` reading as that): a trait's
/// declaration first, then the shortest path; `None` when no fn or a crate's several
/// same-named items of that name leave it open.
fn same_item(map: &DefMap<'_>, path: &str) -> Option<FnId> {
    let plain = match path.rsplit_once(">::") {
        Some((head, method)) => format!("{}::{method}", head.rsplit(" as ").next()?),
        None => path.to_owned(),
    };
    let segs: Vec<&str> = plain.trim_start_matches('<').split("::").collect();
    let [krate, .., owner, name] = segs[..] else {
        return None;
    };
    let tail = format!("::{owner}::{name}");
    let in_crate = |p: &str| {
        let first = p.split("::").next().unwrap_or_default();
        first.split('@').next() == Some(krate)
    };
    let mut found: Vec<(FnId, &FnData<'_>)> = (map.fns.iter().enumerate())
        .filter(|(_, f)| f.ir.is_some() && f.path.ends_with(&tail) && in_crate(&f.path))
        .map(|(id, f)| (id as FnId, f))
        .collect();
    found.sort_by_key(|(_, f)| (!f.is_trait_decl, f.path.len(), f.path.as_str()));
    found.dedup_by(|(_, a), (_, b)| a.path == b.path);
    let &(id, first) = found.first()?;
    let tie = found.get(1).is_some_and(|(_, f)| {
        (f.is_trait_decl, f.path.len()) == (first.is_trait_decl, first.path.len())
    });
    (!tie && first.path != path).then_some(id)
}

fn resolve_entry(map: &mut DefMap<'_>, path: &PathKind, sink: bool) -> Result<Vec<FnId>, String> {
    let segs = match path {
        PathKind::Plain(segs) => segs,
        PathKind::Qualified {
            self_ty,
            self_ref,
            trait_path,
            method,
        } => return qualified(map, (self_ty, *self_ref), trait_path, method),
    };
    let first = segs.first().ok_or("is empty")?;
    if first.split('@').next() == Some("cudarc") {
        if first.contains('@') {
            return Err(
                "pins cudarc: cudarc is not analysed, its models hold for each version \
                 they name"
                    .to_owned(),
            );
        }
        return cudarc_fn(map, segs, sink);
    }
    let mut refs: Vec<&str> = segs.iter().map(String::as_str).collect();
    refs[0] = "crate";
    let mut fns = Vec::new();
    let mut other = None;
    for package in packages_named(map, first)? {
        // A package's lib and bins may share a crate name: the path is looked up in each.
        let found: Vec<Def> = (package.iter())
            .filter_map(|&k| map.resolve_path(map.crates[k].root, &refs, false))
            .collect();
        match found.iter().find_map(|d| match d {
            Def::Fn(f) => Some(*f),
            _ => None,
        }) {
            Some(f) => fns.push(f),
            None => other = other.or(found.into_iter().next()),
        }
    }
    if !fns.is_empty() {
        return Ok(fns);
    }
    match other {
        Some(Def::Type(_) | Def::Trait(_)) => Err("names a type, not a function".to_owned()),
        Some(Def::Mod(_) | Def::Crate(_)) => Err("names a module, not a function".to_owned()),
        _ => Err("matches no function of the analysed crates".to_owned()),
    }
}

/// The analysed packages a path's first segment names, each as its crates (a lib and the
/// bins of its package share a name). `krate@0.6.0` is that version. A plain `krate`, where
/// the graph holds several versions, is the one the checked crates (the members) are or
/// depend on; where they are or depend on none or several, it is every version: a path never
/// silently picks one.
fn packages_named(map: &DefMap<'_>, first: &str) -> Result<Vec<Vec<usize>>, String> {
    let (name, pin) = match first.split_once('@') {
        Some((name, version)) => (name, Some(version)),
        None => (first, None),
    };
    let mut packages: Vec<Vec<usize>> = Vec::new();
    for k in (0..map.crates.len()).filter(|&k| map.crates[k].name == name) {
        let path_name = &map.crates[k].path_name;
        match packages
            .iter_mut()
            .find(|p| map.crates[p[0]].path_name == *path_name)
        {
            Some(p) => p.push(k),
            None => packages.push(vec![k]),
        }
    }
    if packages.is_empty() {
        return Err(format!(
            "matches nothing: no analysed crate is named `{name}` (paths start with a crate name)"
        ));
    }
    let version = |p: &[usize]| {
        map.crates[p[0]]
            .versions
            .own
            .as_ref()
            .map(|v| v.to_string())
    };
    if let Some(pin) = pin {
        let versions: Vec<String> = packages.iter().filter_map(|p| version(p)).collect();
        packages.retain(|p| version(p).as_deref() == Some(pin));
        if packages.is_empty() {
            return Err(format!(
                "matches nothing: the analysed `{name}` is at {}, not {pin}",
                or_list(&versions)
            ));
        }
        return Ok(packages);
    }
    let direct: Vec<usize> = (0..packages.len())
        .filter(|&i| packages[i].iter().any(|&k| used_by_members(map, k)))
        .collect();
    if let [only] = direct[..] {
        return Ok(vec![packages.swap_remove(only)]);
    }
    Ok(packages)
}

/// Whether crate `k` is a checked crate (a member) or a dependency of one.
fn used_by_members(map: &DefMap<'_>, k: usize) -> bool {
    map.crates[k].check_roots
        || (map.crates.iter().filter(|c| c.check_roots))
            .any(|c| c.deps.values().any(|d| *d == DepTarget::Analysed(k)))
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => "no known version".to_owned(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `<Type as Trait>::method`: the method of that impl, or the trait's provided method
/// specialised to `Type` when the impl does not override it. The trait may be in std
/// (by any of its paths) or in a crate that is not analysed (see [`DefMap::impl_methods`]).
/// Where the graph holds several versions of the type's crate, each version's (with the
/// trait of the same version, where it is in that crate). `<&Type as Trait>` is the impl for
/// `&Type`; `<Type as Trait>` the one for `Type`, or for `&Type` where that is the only one.
fn qualified(
    map: &mut DefMap<'_>,
    (self_ty, self_ref): (&[String], bool),
    trait_path: &[String],
    method: &str,
) -> Result<Vec<FnId>, String> {
    let mut hits = Vec::new();
    let mut why = None;
    for (t, tr) in find_pairs(map, self_ty, trait_path)? {
        let mut found = map.impl_methods(&t, &tr, method);
        let for_ref = |f: &FnId| matches!(map.func(*f).self_ty, Some(TypeRef::Ref(_)));
        if self_ref || found.iter().any(|f| !for_ref(f)) {
            found.retain(|f| for_ref(f) == self_ref);
        }
        if !found.is_empty() {
            hits.extend(found);
        } else if let Some(f) = map.provided_method_node(&t, &tr, method) {
            hits.push(f);
        } else {
            let amp = if self_ref { "&" } else { "" };
            why = why.or(Some(format!(
                "matches nothing: no `impl {tr} for {amp}{t}` with a method `{method}`"
            )));
        }
    }
    match why {
        Some(why) if hits.is_empty() => Err(why),
        _ => Ok(hits),
    }
}

/// The (type, trait) canonical paths a qualified path names: one pair per version of the
/// type's crate ([`packages_named`]), its trait in the same version where both are in one
/// crate. A type outside the analysed crates (a primitive, `f32`; a std type) is its canonical
/// path, as its impls' self types are; an alias is the type it stands for.
fn find_pairs(
    map: &DefMap<'_>,
    self_ty: &[String],
    trait_path: &[String],
) -> Result<Vec<(String, String)>, String> {
    let nothing = || "matches nothing: the type or the trait is not in the analysed crates";
    let name = |p: &[String]| {
        p.first()
            .map(|f| f.split('@').next().unwrap_or_default().to_owned())
    };
    // The trait is looked up in the type's version where both are in one crate and the
    // trait does not pin another.
    let same_crate = name(self_ty) == name(trait_path)
        && trait_path
            .first()
            .is_some_and(|f| !f.contains('@') || self_ty.first() == Some(f));
    let mut pairs = Vec::new();
    for package in find_packages(map, self_ty)? {
        let t = match find(map, self_ty, package.as_deref()) {
            Some(Def::Type(t)) => map.resolve_alias(&t, &[], 0).canon().map(str::to_owned),
            Some(Def::Trait(t)) if package.is_none() => Some(t),
            _ => None,
        };
        let trait_package = if same_crate { package.as_deref() } else { None };
        let tr = match trait_package {
            Some(_) => find(map, trait_path, trait_package),
            None => find_packages(map, trait_path)?
                .iter()
                .find_map(|p| find(map, trait_path, p.as_deref())),
        };
        if let (Some(t), Some(Def::Trait(tr))) = (t, tr) {
            pairs.push((t, tr));
        }
    }
    if pairs.is_empty() {
        return Err(nothing().to_owned());
    }
    Ok(pairs)
}

/// The packages a type or trait path of a config entry may be in ([`packages_named`]), or
/// `[None]` for a path outside the analysed crates.
fn find_packages(map: &DefMap<'_>, p: &[String]) -> Result<Vec<Option<Vec<usize>>>, String> {
    let first = p.first().ok_or("is empty")?;
    let name = first.split('@').next().unwrap_or_default();
    if !map.crates.iter().any(|c| c.name == name) {
        return Ok(vec![None]);
    }
    Ok(packages_named(map, first)?.into_iter().map(Some).collect())
}

/// A type or trait path of a config entry, in the crates of `package`. A path outside the
/// analysed crates (`package` is `None`: std by any of its paths, `core::ops::Drop`, or by
/// its prelude name, `TryFrom`; a primitive; any other crate, `safetensors::View`) is its
/// canonical path, as a `Def::Trait`.
fn find(map: &DefMap<'_>, p: &[String], package: Option<&[usize]>) -> Option<Def> {
    let Some(package) = package else {
        // A prelude name (`TryFrom`, `Vec`) is std's.
        if let [name] = p
            && crate::known::std::PRELUDE.contains(&name.as_str())
        {
            return Some(Def::Trait(format!("std::{name}")));
        }
        return Some(Def::Trait(crate::known::canonical_name(p)));
    };
    let mut refs: Vec<&str> = p.iter().map(String::as_str).collect();
    refs[0] = "crate";
    (package.iter()).find_map(|&k| map.resolve_path(map.crates[k].root, &refs, false))
}

/// A cudarc fn: from the built-in table (a node per version range of its model), or (for
/// `sinks`) a new external sink.
fn cudarc_fn(map: &mut DefMap<'_>, segs: &[String], sink: bool) -> Result<Vec<FnId>, String> {
    let canon = canonical(segs).join("::");
    if let Some(ids) = map.builtin.get(&canon) {
        return Ok(ids.clone());
    }
    if !sink {
        return Err("is a cudarc function: only `sinks` may name one".to_owned());
    }
    let segs: Vec<&str> = canon.split("::").collect();
    let name = segs.last().copied().unwrap_or_default().to_owned();
    let owner = segs[..segs.len() - 1].join("::");
    let id = map.fns.len() as FnId;
    map.fns.push(FnData {
        name: name.clone(),
        path: canon.clone(),
        module: 0,
        span: None,
        ir: None,
        self_ty: None,
        self_canon: Some(owner.clone()),
        impl_generics: &[],
        impl_trait_args: &[],
        trait_: None,
        is_trait_decl: false,
        marks: Marks::default(),
        self_override: None,
    });
    map.methods
        .entry(owner)
        .or_default()
        .entry(name)
        .or_default()
        .push(id);
    map.builtin.entry(canon).or_default().push(id);
    Ok(vec![id])
}
