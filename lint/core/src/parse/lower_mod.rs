//! Lowering of `mod` items: where a module's file is, as rustc looks for it.

use super::cfg::CfgCtx;
use super::ir::{Item, ModKind};
use super::lower::Lower;
use crate::paths;
use crate::source::Loader;
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;

impl Lower<'_> {
    /// What a `#[path]` on a `mod` is relative to: the file's directory at its top level,
    /// else the directory of the enclosing inline module.
    pub(super) fn path_base<'d>(&'d self, dir: &'d Path, top: bool) -> &'d Path {
        if top { &self.file_dir } else { dir }
    }

    /// A `mod` item; `dir` is where its file is looked for (`top`: at the file's top level).
    pub(super) fn module(&mut self, m: &syn::ItemMod, dir: &Path, top: bool) -> Item {
        let name = m.ident.to_string();
        // `mod r#type;` is the file `type.rs` (naga).
        let file_name = syn::ext::IdentExt::unraw(&m.ident).to_string();
        let base = self.path_base(dir, top).to_path_buf();
        let paths: Vec<PathBuf> = path_attrs(&m.attrs, self.cfg)
            .iter()
            .map(|p| base.join(p))
            .collect();
        let kind = match &m.content {
            Some((_, items)) => {
                let sub = paths
                    .first()
                    .cloned()
                    .unwrap_or_else(|| dir.join(&file_name));
                ModKind::Inline(self.items(items, &sub, false))
            }
            None => file_module(dir, &file_name, paths),
        };
        Item::Mod {
            name,
            span: self.sp(m.span()),
            kind,
            is_pub: matches!(m.vis, syn::Visibility::Public(_)),
        }
    }
}

/// `mod name;` in `dir`, not looked for yet: the `#[path]`s, else `name.rs` and
/// `name/mod.rs`.
fn file_module(dir: &Path, name: &str, paths: Vec<PathBuf>) -> ModKind {
    let path_attr = !paths.is_empty();
    let candidates = if path_attr {
        paths
    } else {
        vec![
            dir.join(format!("{name}.rs")),
            dir.join(name).join("mod.rs"),
        ]
    };
    ModKind::Declared {
        candidates,
        path_attr,
    }
}

/// Looks for the file of every `mod x;` among `items` (inline modules, fn bodies, impl
/// and trait methods included) through `files`: the first candidate that is a file, by
/// its one name (`#[path = "../x.rs"]` and `x.rs` are one file), else `Missing`.
pub fn locate(items: &mut [Item], files: &dyn Loader) {
    let mut stack: Vec<&mut [Item]> = vec![items];
    while let Some(items) = stack.pop() {
        for item in items.iter_mut() {
            match item {
                Item::Mod { kind, .. } => match kind {
                    ModKind::Inline(inner) => stack.push(inner),
                    ModKind::Declared {
                        candidates,
                        path_attr,
                    } => {
                        let candidates = std::mem::take(candidates);
                        *kind = located(candidates, *path_attr, files);
                    }
                    ModKind::File { .. } | ModKind::Missing(_) => {}
                },
                Item::Fn(f) => stack.push(&mut f.nested),
                Item::Impl(imp) => stack.extend(imp.fns.iter_mut().map(|f| &mut f.nested[..])),
                Item::Trait { fns, .. } => stack.extend(fns.iter_mut().map(|f| &mut f.nested[..])),
                _ => {}
            }
        }
    }
}

fn located(candidates: Vec<PathBuf>, path_attr: bool, files: &dyn Loader) -> ModKind {
    match candidates.iter().find_map(|c| files.file(c)) {
        Some(found) => ModKind::File {
            owns_dir: path_attr || found.ends_with("mod.rs"),
            path: found,
        },
        None => ModKind::Missing(candidates.iter().map(|c| paths::lexical(c)).collect()),
    }
}

/// The `#[path = ".."]` values among `attrs`, also inside `#[cfg_attr(pred, path = "..")]`
/// whose predicate holds (rustix, socket2, tempfile choose a module's file per platform
/// this way). Unknown predicates hold, so several may: the first whose file exists wins.
fn path_attrs(attrs: &[syn::Attribute], cfg: &CfgCtx) -> Vec<String> {
    let mut out = Vec::new();
    for a in attrs {
        path_value(&a.meta, cfg, &mut out, 0);
    }
    out
}

fn path_value(meta: &syn::Meta, cfg: &CfgCtx, out: &mut Vec<String>, depth: usize) {
    match meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                out.push(s.value());
            }
        }
        syn::Meta::List(list) if list.path.is_ident("cfg_attr") && depth < 16 => {
            let parser = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
            let Ok(args) = list.parse_args_with(parser) else {
                return;
            };
            let mut it = args.iter();
            if it.next().is_some_and(|pred| cfg.holds(pred)) {
                for m in it {
                    path_value(m, cfg, out, depth + 1);
                }
            }
        }
        _ => {}
    }
}
