//! Lowering of `mod` items: where a module's file is, as rustc looks for it.

use super::cfg::CfgCtx;
use super::ir::{Item, ModKind};
use super::lower::Lower;
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
            is_pub: !matches!(m.vis, syn::Visibility::Inherited),
        }
    }
}

/// The file of `mod name;` in `dir`: the first of the `#[path]`s that exists, else
/// `name.rs` or `name/mod.rs`.
fn file_module(dir: &Path, name: &str, paths: Vec<PathBuf>) -> ModKind {
    let has_attr = !paths.is_empty();
    let candidates = if has_attr {
        paths
    } else {
        vec![
            dir.join(format!("{name}.rs")),
            dir.join(name).join("mod.rs"),
        ]
    };
    // One name per file, however it is reached (`#[path = "../x.rs"]`).
    match candidates.iter().find(|c| c.is_file()) {
        Some(found) => ModKind::File {
            owns_dir: has_attr || found.ends_with("mod.rs"),
            path: crate::source::normalize(found),
        },
        None => ModKind::Missing(
            candidates
                .iter()
                .map(|c| crate::source::lexical(c))
                .collect(),
        ),
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
