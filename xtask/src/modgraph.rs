//! `cargo run -p xtask -- modgraph`: which top-level module of the lint's crates uses which
//! (every `crate::…` path and path into another of its crates, `use` trees and macro tokens
//! included, and `super::` paths that climb out of a module), checked against the lint's
//! layers: a stage may use only the stages below it, and the core (config to analysis) may
//! not touch the file system. The crates enforce their order themselves (a crate cannot
//! name one that depends on it); the layers inside them are this check's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The lint's top-level modules, bottom first. A module may use the modules of its own
/// layer and of the layers before it, never a later one.
pub(crate) const LAYERS: &[&[&str]] = &[
    &["diagnostics", "paths"],
    // `levels` names codes and levels (`-D CODE`, config `levels`) over `diagnostics` only:
    // the config stage checks its `levels` with it. `crate_graph` is the crates to analyse,
    // as plain data.
    &["known", "panics", "levels", "crate_graph"],
    &["workspace"],
    &["source"],
    // What a run reuses of earlier runs: the stamp table and the caches, over `source`.
    &["incremental"],
    &["config"],
    &["parse"],
    &["resolve"],
    &["callgraph"],
    &["analysis"],
    // The stage sequence from parsing to the search, over given crates and a loader.
    &["pipeline"],
    &["baseline"],
    &["report"],
    // `--runtime-report`: the findings joined with a wait report of the runtime hook.
    &["runtime_report"],
    &["render"],
    &["engine"],
    &["cli"],
];

/// The modules that do no IO: they read files only through `source::Loader`...
pub(crate) const NO_IO: &[&str] = &[
    "source",
    "incremental",
    "config",
    "parse",
    "resolve",
    "callgraph",
    "analysis",
    "pipeline",
];

/// ... whose disk implementation is the one file of them that touches the file system.
const IO_EDGE: &[&str] = &["lint/core/src/source/loader.rs"];

/// One of the lint's crates.
#[derive(Debug)]
pub(crate) struct Crate {
    /// The package's directory, relative to the repository root.
    pub dir: &'static str,
    /// Its name in paths (`nosync_lint_core::parse`).
    pub extern_name: &'static str,
    /// The module the whole crate is (the workspace stage), or `None` when its top-level
    /// modules are modules of the graph.
    pub module: Option<&'static str>,
}

/// The lint's crates, bottom first. `cargo-nosync-lint` names the stages of the others as
/// its own modules (`use nosync_lint_core::parse;`), so `crate::parse` there is `parse`.
pub(crate) const CRATES: &[Crate] = &[
    Crate {
        dir: "lint/core",
        extern_name: "nosync_lint_core",
        module: None,
    },
    Crate {
        dir: "lint/workspace",
        extern_name: "nosync_lint_workspace",
        module: Some("workspace"),
    },
    Crate {
        dir: "lint",
        extern_name: "nosync_lint",
        module: None,
    },
];

/// Top-level modules left out of the graph: what the stages' unit tests share (the core
/// pipeline over in-memory crates, so it uses every stage).
const NOT_STAGES: &[&str] = &["test_support"];

/// A module of this name, at any depth, is a stage's unit tests: left out of the graph, as
/// they run the whole pipeline (`parse/tests` analyses crates from parsing to the search).
const TESTS: &str = "tests";

/// Module → the other top-level modules it uses, and where each module touches the disk.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    pub uses: BTreeMap<String, BTreeSet<String>>,
    /// (module, file relative to the repository root, what): a file-system call outside
    /// `#[cfg(test)]`.
    pub io: Vec<(String, PathBuf, String)>,
}

/// The graph of the lint's [`CRATES`] in the repository at `root`.
pub(crate) fn graph(root: &Path) -> Result<Graph, String> {
    let mut g = Graph::default();
    for krate in CRATES {
        let src = root.join(krate.dir).join("src");
        for file in rust_files(&src)? {
            let rel = file.strip_prefix(&src).map_err(|e| e.to_string())?;
            let Some(module) = module_path(krate, rel) else {
                continue;
            };
            if left_out(&module) {
                continue;
            }
            let text =
                std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let ast = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            let mut v = Uses {
                krate,
                module: &module,
                found: BTreeSet::new(),
                io: Vec::new(),
                in_test: 0,
            };
            v.visit_file(&ast);
            let top = &module[0];
            let entry = g.uses.entry(top.clone()).or_default();
            entry.extend(v.found.into_iter().filter(|m| m != top));
            let file = Path::new(krate.dir).join("src").join(rel);
            g.io.extend(v.io.into_iter().map(|w| (top.clone(), file.clone(), w)));
        }
    }
    // `crate::VERSION` and other items of the crate root are no module.
    let modules: BTreeSet<String> = g.uses.keys().cloned().collect();
    for uses in g.uses.values_mut() {
        uses.retain(|u| modules.contains(u) || NOT_STAGES.contains(&u.as_str()));
    }
    Ok(g)
}

/// Whether the module `path` is left out of the graph: a stage's unit tests, or what
/// they share ([`NOT_STAGES`], [`TESTS`]).
fn left_out(path: &[String]) -> bool {
    NOT_STAGES.contains(&path[0].as_str()) || path.iter().any(|m| m == TESTS)
}

/// The `.rs` files under `dir`, sorted (another crate's directory inside it left out).
pub(crate) fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && !p.join("Cargo.toml").exists() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The module path of the file `rel` (relative to `krate`'s `src`): `parse/lower.rs` is
/// `[parse, lower]`, `parse/mod.rs` is `[parse]`; `None` for the crate root and `bin/`,
/// but for a crate that is one module, whose root is that module (`[workspace]`) and
/// whose `cache.rs` is `[workspace, cache]`.
fn module_path(krate: &Crate, rel: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = krate.module.iter().map(|m| (*m).to_owned()).collect();
    parts.extend(rel.iter().map(|c| c.to_string_lossy().into_owned()));
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    let root = parts.len() == usize::from(krate.module.is_some());
    if stem != "mod" && !(root && stem == "lib") {
        parts.push(stem.to_owned());
    }
    match parts.first().map(String::as_str) {
        None | Some("lib" | "main" | "bin") => None,
        Some(_) => Some(parts),
    }
}

/// Collects the top-level modules a file's paths name.
struct Uses<'m> {
    krate: &'m Crate,
    module: &'m [String],
    found: BTreeSet<String>,
    io: Vec<String>,
    /// Depth of `#[cfg(test)]` items around the visitor.
    in_test: usize,
}

impl Uses<'_> {
    /// A path given by its segments: records the top-level module it names, if any.
    fn segments(&mut self, segs: &[String]) {
        if let Some(top) = top_module(self.krate, self.module, segs) {
            self.found.insert(top);
        }
        let fs = segs.windows(2).any(|w| w[0] == "std" && w[1] == "fs");
        let normalize = segs.ends_with(&["paths".to_owned(), "normalize".to_owned()]);
        if self.in_test == 0 && (fs || normalize) {
            self.io.push(segs.join("::"));
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.leaf(prefix, &n.ident),
            syn::UseTree::Rename(r) => self.leaf(prefix, &r.ident),
            syn::UseTree::Glob(_) => self.segments(prefix),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn leaf(&mut self, prefix: &mut Vec<String>, ident: &syn::Ident) {
        prefix.push(ident.to_string());
        self.segments(prefix);
        prefix.pop();
    }

    /// `crate :: a` sequences in macro tokens (`format!`, `matches!`, ...), which syn
    /// does not parse as paths.
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let trees: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            match t {
                proc_macro2::TokenTree::Group(g) => self.tokens(g.stream()),
                proc_macro2::TokenTree::Ident(id)
                    if id == "crate"
                        || id == "std"
                        || CRATES.iter().any(|c| id == c.extern_name) =>
                {
                    let segs = path_tokens(&trees[i..]);
                    self.segments(&segs);
                }
                _ => {}
            }
        }
    }
}

/// The segments of the path `a :: b :: c` at the start of `trees`.
pub(crate) fn path_tokens(trees: &[proc_macro2::TokenTree]) -> Vec<String> {
    use proc_macro2::TokenTree::{Ident, Punct};
    let mut segs = Vec::new();
    let mut i = 0;
    while let Some(Ident(id)) = trees.get(i) {
        segs.push(id.to_string());
        match (trees.get(i + 1), trees.get(i + 2)) {
            (Some(Punct(a)), Some(Punct(b))) if a.as_char() == ':' && b.as_char() == ':' => i += 3,
            _ => break,
        }
    }
    segs
}

/// The top-level module that `segs`, written in module `module` of `krate`, names:
/// `crate::x::..`, a path into another of the lint's crates, or `super::..` climbing to
/// the crate root.
fn top_module(krate: &Crate, module: &[String], segs: &[String]) -> Option<String> {
    let first = segs.first().map(String::as_str);
    let other = CRATES.iter().find(|c| Some(c.extern_name) == first);
    match (first, other) {
        (Some("crate"), _) => krate.module.map(str::to_owned).or(segs.get(1).cloned()),
        (_, Some(c)) => c.module.map(str::to_owned).or(segs.get(1).cloned()),
        (Some("super"), _) => {
            let ups = segs.iter().take_while(|s| *s == "super").count();
            match module.len().checked_sub(ups) {
                Some(0) => segs.get(ups).cloned(),
                Some(_) => Some(module[0].clone()),
                None => None,
            }
        }
        _ => None,
    }
}

pub(crate) fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.segments(&segs);
        syn::visit::visit_path(self, p);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // An inline `mod tests` is a stage's unit tests, left out like a `tests` file.
        if m.ident == TESTS && m.content.is_some() {
            return;
        }
        let test = is_cfg_test(&m.attrs);
        self.in_test += usize::from(test);
        syn::visit::visit_item_mod(self, m);
        self.in_test -= usize::from(test);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let test = is_cfg_test(&f.attrs);
        self.in_test += usize::from(test);
        syn::visit::visit_item_fn(self, f);
        self.in_test -= usize::from(test);
    }

    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        const FS_METHODS: &[&str] = &[
            "is_file",
            "is_dir",
            "exists",
            "try_exists",
            "canonicalize",
            "read_dir",
            "read_link",
            "symlink_metadata",
        ];
        let name = c.method.to_string();
        if self.in_test == 0 && FS_METHODS.contains(&name.as_str()) {
            self.io.push(format!(".{name}()"));
        }
        syn::visit::visit_expr_method_call(self, c);
    }
}

/// The layer of each module named in [`LAYERS`].
fn ranks() -> BTreeMap<&'static str, usize> {
    layer_ranks(LAYERS)
}

/// The index of each name's layer in `layers` (the lint's or the runtime's).
pub(crate) fn layer_ranks(layers: &[&[&'static str]]) -> BTreeMap<&'static str, usize> {
    (layers.iter().enumerate())
        .flat_map(|(i, layer)| layer.iter().map(move |m| (*m, i)))
        .collect()
}

/// Every way `g` breaks the layers: a module with no layer, a use of a later layer, a
/// file-system call in a module of [`NO_IO`].
pub(crate) fn violations(g: &Graph) -> Vec<String> {
    let ranks = ranks();
    let mut out = Vec::new();
    for (m, uses) in &g.uses {
        let Some(&rank) = ranks.get(m.as_str()) else {
            out.push(format!(
                "`{m}` has no layer: add it to xtask/src/modgraph.rs LAYERS"
            ));
            continue;
        };
        for u in uses {
            match ranks.get(u.as_str()) {
                Some(&r) if r > rank => out.push(format!("`{m}` uses `{u}`, a later stage")),
                _ => {}
            }
        }
    }
    for (m, file, what) in &g.io {
        let edge = IO_EDGE.iter().any(|f| file == Path::new(f));
        if NO_IO.contains(&m.as_str()) && !edge {
            out.push(format!("`{m}` does IO (`{what}` in {})", file.display()));
        }
    }
    out
}

/// The graph as text, bottom layer first: `module -> used, ...`.
pub(crate) fn render(g: &Graph) -> String {
    let ranks = ranks();
    let mut mods: Vec<&String> = g.uses.keys().collect();
    mods.sort_by_key(|m| {
        (
            ranks.get(m.as_str()).copied().unwrap_or(usize::MAX),
            m.as_str(),
        )
    });
    let mut out = String::new();
    for m in mods {
        let mut uses: Vec<&String> = g.uses[m].iter().collect();
        uses.sort_by_key(|u| {
            (
                ranks.get(u.as_str()).copied().unwrap_or(usize::MAX),
                u.as_str(),
            )
        });
        let list: Vec<&str> = uses.iter().map(|u| u.as_str()).collect();
        match list.is_empty() {
            true => out += &format!("{m}\n"),
            false => out += &format!("{m} -> {}\n", list.join(", ")),
        }
    }
    out
}

/// `modgraph [ROOT]`: prints the graph of the lint's crates in the repository at `ROOT`
/// (default: this one) and its violations; exit status 1 when there are any.
pub(crate) fn main(args: &[String], root: &Path) -> i32 {
    let root = args
        .first()
        .map_or_else(|| root.to_path_buf(), PathBuf::from);
    match graph(&root) {
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

#[cfg(test)]
mod tests;
