//! `modgraph`'s second half: the runtime crate (`runtime/src`, crate `nosync`). Its rooms are
//! the top-level modules, and the hook's sub-rooms (`hook::cupti`, `hook::interpose`, ...),
//! checked against [`LAYERS`]; and its files, which must form no circle: a file that names an
//! item of another in its code (through `crate::`, `super::`, `self::`, a child module or a
//! `use` alias; re-exports followed to the file that defines the item) depends on it. A `use`
//! line alone is no use.
//!
//! The crate root is left out, like the lint's: its `mod` and `pub use` lines are the crate's
//! table of contents, followed through, and the items it defines itself (`COMPILED_OUT`, the
//! seam's `Wired`, which the root sets to the hook or to no one) are no room and no file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

use crate::modgraph::{is_cfg_test, path_tokens, rust_files};

/// The runtime's rooms, bottom first. A room may use the rooms of its own layer and of the
/// layers before it, never a later one.
pub(crate) const LAYERS: &[&[&str]] = &[
    // Scopes, modes, the per-thread state, the check, `count_syncs`: it knows no layer above,
    // and hears of none but through its seam (`guard/seam.rs`).
    &["guard"],
    // The GPU operations over cudarc.
    &["gpu"],
    // The hook, one room a layer. Its check, shared by both backends: the table of calls, the
    // decision from a call's arguments, capture safety, device runners, frames, waits, the FFI
    // types. It calls up only through fn pointers the rooms above hand it (`check/demand.rs`,
    // `check/sink.rs`, the loaded driver in `check/callback.rs`).
    &["hook::check"],
    // The report of the waits the check timed (`NOSYNC_REPORT`): summary and trace.
    &["hook::report"],
    // What the backends and the front share: `HookError`, `Backend`, the subscription, the
    // coverage.
    &["hook::common"],
    // The backends, each its own layer (the interposer uses nothing of CUPTI's).
    &["hook::cupti"],
    &["hook::interpose"],
    // The front: `install`, `Hook`, `NOSYNC_HOOK`, the seam's observer.
    &["hook"],
    // What the attribute macros' expansions call.
    &["private"],
];

/// Sub-rooms: a module of this name directly under `hook` is a room of its own.
const HOOK_ROOMS: &[&str] = &["check", "common", "cupti", "interpose", "report"];

/// A module of one of these names is unit tests: left out.
fn is_tests(name: &str) -> bool {
    name == "tests" || name.ends_with("_tests")
}

/// The runtime's files and what each uses.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    /// Room → the other rooms it uses.
    pub rooms: BTreeMap<String, BTreeSet<String>>,
    /// File (module path, `::`-joined; the root is "") → the other files it uses.
    pub files: BTreeMap<String, BTreeSet<String>>,
}

/// One parsed file: its module path, its `use` aliases, the paths it names.
struct File {
    module: Vec<String>,
    aliases: BTreeMap<String, Vec<String>>,
    paths: Vec<Vec<String>>,
}

/// The graph of `runtime/src` in the repository at `root`.
pub(crate) fn graph(root: &Path) -> Result<Graph, String> {
    let src = root.join("runtime/src");
    let mut files = Vec::new();
    for path in rust_files(&src)? {
        let rel = path.strip_prefix(&src).map_err(|e| e.to_string())?;
        let module = module_path(rel);
        if module.iter().any(|m| is_tests(m)) {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let ast = syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        files.push(read(module, &ast));
    }
    Ok(link(&files))
}

/// `guard/scope.rs` is `[guard, scope]`, `hook/mod.rs` `[hook]`, `lib.rs` `[]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && stem == "lib")) {
        parts.push(stem.to_owned());
    }
    parts
}

fn read(module: Vec<String>, ast: &syn::File) -> File {
    let mut v = Paths::default();
    v.visit_file(ast);
    let mut aliases = BTreeMap::new();
    for item in &ast.items {
        if let syn::Item::Use(u) = item
            && !is_cfg_test(&u.attrs)
        {
            collect_aliases(&mut Vec::new(), &u.tree, &mut aliases);
        }
    }
    File {
        module,
        aliases,
        paths: v.paths,
    }
}

/// `use a::b::{c, d as e}` → `c: a::b::c`, `e: a::b::d` (globs name no alias).
fn collect_aliases(
    prefix: &mut Vec<String>,
    tree: &syn::UseTree,
    out: &mut BTreeMap<String, Vec<String>>,
) {
    let mut full = |name: &syn::Ident, alias: &syn::Ident| {
        let mut p = prefix.clone();
        if name != "self" {
            p.push(name.to_string());
        }
        let key = match alias == "self" {
            true => p.last().cloned().unwrap_or_default(),
            false => alias.to_string(),
        };
        out.insert(key, p);
    };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            collect_aliases(prefix, &p.tree, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => full(&n.ident, &n.ident),
        syn::UseTree::Rename(r) => full(&r.ident, &r.rename),
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_aliases(prefix, t, out);
            }
        }
    }
}

/// Every path a file names outside its unit tests: `use` trees, paths, macro tokens.
#[derive(Default)]
struct Paths {
    paths: Vec<Vec<String>>,
}

impl Paths {
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let trees: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            match t {
                // `pub(in crate::hook)` in a macro names where an item is seen, as outside one.
                proc_macro2::TokenTree::Group(_) if i > 0 && is_pub(&trees[i - 1]) => {}
                proc_macro2::TokenTree::Group(g) => self.tokens(g.stream()),
                proc_macro2::TokenTree::Ident(_) => {
                    let segs = path_tokens(&trees[i..]);
                    if segs.len() > 1 {
                        self.paths.push(segs);
                    }
                }
                _ => {}
            }
        }
    }
}

fn is_pub(t: &proc_macro2::TokenTree) -> bool {
    matches!(t, proc_macro2::TokenTree::Ident(i) if i == "pub")
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.paths
            .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }

    /// `pub(in crate::hook)` names where an item is seen, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    /// A `use` is no use by itself: it names an alias, followed where a path takes it.
    fn visit_item_use(&mut self, _: &'ast syn::ItemUse) {}

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_tests(&m.ident.to_string()) && !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_cfg_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
}

/// Resolves every file's paths to the files that define what they name.
fn link(files: &[File]) -> Graph {
    let by_module: BTreeMap<&[String], &File> =
        files.iter().map(|f| (f.module.as_slice(), f)).collect();
    let mut g = Graph::default();
    for f in files.iter().filter(|f| !f.module.is_empty()) {
        let me = f.module.join("::");
        let mut used = BTreeSet::new();
        for p in &f.paths {
            let Some(abs) = absolute(&by_module, f, p) else {
                continue;
            };
            if let Some(target) = resolve(&by_module, abs, 0)
                && !target.module.is_empty()
                && target.module != f.module
            {
                used.insert(target.module.join("::"));
            }
        }
        let room = room(&f.module);
        let rooms = g.rooms.entry(room.clone()).or_default();
        rooms.extend(used.iter().map(|m| room_of(m)).filter(|r| *r != room));
        g.files.entry(me).or_default().extend(used);
    }
    g
}

fn room_of(module: &str) -> String {
    room(&module.split("::").map(str::to_owned).collect::<Vec<_>>())
}

/// A module's room: its top-level module, or `hook::x` for a sub-room of the hook.
fn room(module: &[String]) -> String {
    match module {
        [hook, sub, ..] if hook == "hook" && HOOK_ROOMS.contains(&sub.as_str()) => {
            format!("hook::{sub}")
        }
        [top, ..] => top.clone(),
        [] => String::new(),
    }
}

/// The absolute module path `p`, written in `f`, names; `None` for a path outside the crate.
fn absolute(by_module: &BTreeMap<&[String], &File>, f: &File, p: &[String]) -> Option<Vec<String>> {
    let (first, rest) = p.split_first()?;
    let mut child = f.module.clone();
    child.push(first.clone());
    match first.as_str() {
        "crate" => Some(rest.to_vec()),
        "self" => Some([f.module.as_slice(), rest].concat()),
        "super" => {
            let ups = p.iter().take_while(|s| *s == "super").count();
            let base = f.module.len().checked_sub(ups)?;
            Some([&f.module[..base], &p[ups..]].concat())
        }
        _ if by_module.contains_key(child.as_slice()) => Some([f.module.as_slice(), p].concat()),
        _ => {
            let alias = f.aliases.get(first).filter(|a| a.first() != Some(first))?;
            let target = absolute(by_module, f, alias)?;
            Some([target.as_slice(), rest].concat())
        }
    }
}

/// The file that defines what the absolute path `abs` names: the deepest file module on the
/// path, through its `use` aliases when the next segment is one.
fn resolve<'f>(
    by_module: &BTreeMap<&[String], &'f File>,
    abs: Vec<String>,
    depth: usize,
) -> Option<&'f File> {
    let n = (0..=abs.len())
        .rev()
        .find(|n| by_module.contains_key(&abs[..*n]))?;
    let file = by_module[&abs[..n]];
    let next = abs.get(n);
    match next.and_then(|s| file.aliases.get(s)) {
        Some(alias) if depth < 16 => {
            let target = absolute(by_module, file, alias)?;
            resolve(
                by_module,
                [target.as_slice(), &abs[n + 1..]].concat(),
                depth + 1,
            )
            .or(Some(file))
        }
        _ => Some(file),
    }
}

/// The layer of each room named in [`LAYERS`].
fn ranks() -> BTreeMap<&'static str, usize> {
    crate::modgraph::layer_ranks(LAYERS)
}

/// Every way `g` breaks the runtime's layers (a room with no layer, a use of a later layer)
/// and every circle of files.
pub(crate) fn violations(g: &Graph) -> Vec<String> {
    let ranks = ranks();
    let mut out = Vec::new();
    for (m, uses) in &g.rooms {
        let Some(&rank) = ranks.get(m.as_str()) else {
            out.push(format!(
                "runtime: `{m}` has no layer: add it to xtask/src/runtime_graph.rs LAYERS"
            ));
            continue;
        };
        for u in uses {
            if ranks.get(u.as_str()).is_some_and(|&r| r > rank) {
                out.push(format!("runtime: `{m}` uses `{u}`, a later layer"));
            }
        }
    }
    for circle in circles(&g.files) {
        out.push(format!(
            "runtime: a circle of files: {}",
            circle.join(" -> ")
        ));
    }
    out
}

/// The circles of `edges`: each strongly connected component of more than one file, as one
/// path around it that starts and ends at its first file.
pub(crate) fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    for start in edges.keys() {
        if done.contains(start) {
            continue;
        }
        let component: BTreeSet<&String> = edges
            .keys()
            .filter(|n| reaches(edges, start, n) && reaches(edges, n, start))
            .collect();
        done.extend(component.iter().map(|n| (*n).clone()));
        if component.len() > 1
            && let Some(path) = cycle_through(edges, start, &component)
        {
            out.push(path);
        }
    }
    out
}

fn reaches(edges: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from];
    while let Some(n) = stack.pop() {
        if n == to {
            return true;
        }
        if seen.insert(n) {
            stack.extend(edges.get(n).into_iter().flatten().map(String::as_str));
        }
    }
    false
}

/// A shortest path from `start` back to itself inside `component` (breadth first).
fn cycle_through(
    edges: &BTreeMap<String, BTreeSet<String>>,
    start: &String,
    component: &BTreeSet<&String>,
) -> Option<Vec<String>> {
    let mut from: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for m in edges.get(n).into_iter().flatten() {
            if !component.contains(m) || from.contains_key(m) {
                continue;
            }
            from.insert(m, n);
            if m == start {
                let mut path = vec![start.clone()];
                let mut at = from[start];
                while at != start {
                    path.push(at.clone());
                    at = from[at];
                }
                path.push(start.clone());
                path.reverse();
                return Some(path);
            }
            queue.push_back(m);
        }
    }
    None
}

/// The rooms as text, bottom layer first: `room -> used, ...`.
pub(crate) fn render(g: &Graph) -> String {
    let ranks = ranks();
    let key = |m: &String| {
        (
            ranks.get(m.as_str()).copied().unwrap_or(usize::MAX),
            m.clone(),
        )
    };
    let mut rooms: Vec<&String> = g.rooms.keys().collect();
    rooms.sort_by_key(|m| key(m));
    let mut out = String::new();
    for m in rooms {
        let mut uses: Vec<&String> = g.rooms[m].iter().collect();
        uses.sort_by_key(|u| key(u));
        let list: Vec<&str> = uses.iter().map(|u| u.as_str()).collect();
        match list.is_empty() {
            true => out += &format!("{m}\n"),
            false => out += &format!("{m} -> {}\n", list.join(", ")),
        }
    }
    out
}

/// Prints the runtime's graph and its violations; exit status 1 when there are any.
pub(crate) fn main(root: &Path) -> i32 {
    match graph(root) {
        Ok(g) => {
            print!("{}", render(&g));
            let bad = violations(&g);
            for v in &bad {
                println!("violation: {v}");
            }
            i32::from(!bad.is_empty())
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// The repository root given on the command line, or this one.
pub(crate) fn root_arg(args: &[String], root: &Path) -> PathBuf {
    args.first()
        .map_or_else(|| root.to_path_buf(), PathBuf::from)
}

#[cfg(test)]
mod tests;
