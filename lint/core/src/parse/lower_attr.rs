//! Lowering of attributes: nosync's (with their arguments and the module's renames),
//! `#[cfg_attr]`, derives, and the fields' `default = ..` values.

use super::ir::*;
use super::lower::{Lower, lower_path, path_names};

pub(super) fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        _ => &[],
    }
}

impl Lower<'_> {
    /// Attributes, nosync's with their parsed arguments; `#[cfg_attr(pred, a, b)]`
    /// contributes `a` and `b` when `pred` holds.
    pub(super) fn attrs(&self, attrs: &[syn::Attribute]) -> Vec<AttrIr> {
        let mut out = Vec::new();
        for a in attrs {
            if a.path().is_ident("cfg_attr") {
                self.cfg_attr(&a.meta, &mut out, 0);
            } else {
                out.push(self.attr(&a.meta));
            }
        }
        out
    }

    fn attr(&self, meta: &syn::Meta) -> AttrIr {
        let path = path_names(meta.path());
        let nosync = self.nosync_name(&path).map(|name| {
            let args = nosync_syntax::parse_meta(name, meta).map_err(|errors| {
                let located = errors
                    .into_iter()
                    .map(|e| (e.to_string(), self.sp(e.span())));
                located.collect()
            });
            (name, args.map(Args::values))
        });
        AttrIr { path, nosync }
    }

    /// The nosync attribute `path` would be, if it is one: a rename from this module's `use`s,
    /// else its last segment.
    fn nosync_name(&self, path: &[String]) -> Option<AttrName> {
        if let [one] = path
            && let Some((_, name)) = self.attr_renames.iter().find(|(alias, _)| alias == one)
        {
            return Some(*name);
        }
        AttrName::from_name(path.last()?)
    }

    /// The paths an item's `#[derive(..)]`s name, those inside a `#[cfg_attr]` whose
    /// predicate holds among them.
    pub(super) fn derives(&self, attrs: &[syn::Attribute]) -> Vec<PathIr> {
        let mut out = Vec::new();
        for a in attrs {
            self.derives_in(&a.meta, &mut out, 0);
        }
        out
    }

    fn derives_in(&self, meta: &syn::Meta, out: &mut Vec<PathIr>, depth: usize) {
        let syn::Meta::List(list) = meta else { return };
        let metas = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
        if list.path.is_ident("derive") {
            let paths = syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated;
            if let Ok(paths) = list.parse_args_with(paths) {
                out.extend(paths.iter().map(lower_path));
            }
        } else if list.path.is_ident("cfg_attr")
            && depth <= 16
            && let Ok(args) = list.parse_args_with(metas)
        {
            let mut it = args.iter();
            if it.next().is_some_and(|pred| self.cfg.holds(pred)) {
                it.for_each(|m| self.derives_in(m, out, depth + 1));
            }
        }
    }

    fn cfg_attr(&self, meta: &syn::Meta, out: &mut Vec<AttrIr>, depth: usize) {
        let syn::Meta::List(list) = meta else { return };
        let parser = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
        let Ok(args) = list.parse_args_with(parser) else {
            return;
        };
        let mut it = args.iter();
        if depth > 16 || !it.next().is_some_and(|pred| self.cfg.holds(pred)) {
            return;
        }
        for m in it {
            if m.path().is_ident("cfg_attr") {
                self.cfg_attr(m, out, depth + 1);
            } else {
                out.push(self.attr(m));
            }
        }
    }
}

/// `use nosync::synchronizes as blocking` (any path ending in one of nosync's attribute
/// names, renamed) among `items`: the names attributes may be written under in this module.
pub(super) fn attr_renames(items: &[syn::Item]) -> Vec<(String, AttrName)> {
    let mut out = Vec::new();
    for item in items {
        let syn::Item::Use(u) = item else { continue };
        flatten_use(&u.tree, Vec::new(), false, &mut |path, alias, _| {
            let name = path.last().and_then(|last| AttrName::from_name(last));
            if let (Some(name), Some(alias)) = (name, alias)
                && path.last() != Some(&alias)
            {
                out.push((alias, name));
            }
        });
    }
    out
}

pub(super) fn flatten_use(
    tree: &syn::UseTree,
    prefix: Vec<String>,
    global: bool,
    emit: &mut dyn FnMut(Vec<String>, Option<String>, bool),
) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix;
            next.push(p.ident.to_string());
            flatten_use(&p.tree, next, global, emit);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut path = prefix;
            if name == "self" {
                let alias = path.last().cloned();
                emit(path, alias, global);
            } else {
                path.push(name.clone());
                emit(path, Some(name), global);
            }
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            emit(path, Some(r.rename.to_string()), global);
        }
        syn::UseTree::Glob(_) => emit(prefix, None, global),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix.clone(), global, emit);
            }
        }
    }
}

/// The fields' `#[<attr>(default = <value>)]` with a value the lint can follow.
pub(super) fn field_defaults(fields: &syn::Fields) -> Vec<FieldDefault> {
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let field = f
            .ident
            .as_ref()
            .map_or_else(|| i.to_string(), |id| id.to_string());
        for a in &f.attrs {
            let (syn::Meta::List(list), Some(attr)) = (&a.meta, a.path().get_ident()) else {
                continue;
            };
            let metas = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
            let Ok(args) = list.parse_args_with(metas) else {
                continue;
            };
            let value = args.iter().find_map(|m| match m {
                syn::Meta::NameValue(nv) if nv.path.is_ident("default") => default_value(&nv.value),
                _ => None,
            });
            if let Some(value) = value {
                let (field, attr) = (field.clone(), attr.to_string());
                out.push(FieldDefault { field, attr, value });
            }
        }
    }
    out
}

/// A default written as `true`/`false`, a path, or either in a string.
fn default_value(e: &syn::Expr) -> Option<DefaultValue> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Some(DefaultValue::Bool(b.value)),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => default_value(&s.parse::<syn::Expr>().ok()?),
        syn::Expr::Path(p) if p.qself.is_none() => Some(DefaultValue::Path(lower_path(&p.path))),
        _ => None,
    }
}
