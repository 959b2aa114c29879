//! Lowering of syn items, types and paths into the [`ir`](super::ir).

use super::cfg::CfgCtx;
use super::ir::*;
use super::lower_attr::{attr_renames, field_defaults, flatten_use, item_attrs};
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;

/// Per-file lowering state.
pub(crate) struct Lower<'a> {
    pub file: FileId,
    /// Bytes stripped before parsing (a BOM), added back to every offset.
    pub offset: u32,
    pub cfg: &'a CfgCtx,
    /// Directory for `mod x;` at the file's top level, and the file's own directory.
    pub mod_dir: PathBuf,
    pub file_dir: PathBuf,
    /// Expressions deeper than this are lowered as [`Expr::Other`] with no children.
    pub depth: usize,
    /// Every span becomes this one (code expanded from a macro invocation).
    pub fixed: Option<SpanIr>,
    /// Items declared in the inner blocks of the fn being lowered (an `if` block, a
    /// closure body): they become the fn's `nested` items, visible in its whole body.
    pub inner: Vec<Item>,
    /// `use nosync::synchronizes as blocking` in the module being lowered: `("blocking", ..)`.
    pub attr_renames: Vec<(String, AttrName)>,
    /// Malformed escapes (`allow_sync()` without its closure), as the syntax crate words them.
    pub invalid: Vec<(String, SpanIr)>,
    /// The fn bodies of this file replaced by `{}` before parsing (see [`super::lazy`]):
    /// each becomes a [`Body::Lazy`].
    pub lazy: Option<&'a super::lazy::Ranges>,
}

impl Lower<'_> {
    /// Records the errors of a malformed escape or attribute, each at its own place.
    pub(crate) fn invalid(&mut self, errors: syn::Error) {
        for e in errors {
            let at = self.sp(e.span());
            self.invalid.push((e.to_string(), at));
        }
    }

    pub(crate) fn sp(&self, s: proc_macro2::Span) -> SpanIr {
        if let Some(f) = self.fixed {
            return f;
        }
        let r = s.byte_range();
        let (lo, hi) = match self.lazy {
            Some(lazy) => lazy.cuts.range(r),
            None => (r.start as u32, r.end as u32),
        };
        SpanIr {
            file: self.file,
            lo: lo + self.offset,
            hi: hi + self.offset,
        }
    }

    pub(crate) fn items(&mut self, items: &[syn::Item], dir: &Path, top: bool) -> Vec<Item> {
        let outer = std::mem::replace(&mut self.attr_renames, attr_renames(items));
        let mut out = Vec::new();
        for item in items {
            self.item(item, dir, top, &mut out);
        }
        self.attr_renames = outer;
        out.shrink_to_fit();
        out
    }

    fn item(&mut self, item: &syn::Item, dir: &Path, top: bool, out: &mut Vec<Item>) {
        if !self.cfg.enabled(item_attrs(item)) {
            return;
        }
        match item {
            syn::Item::Fn(f) => out.push(Item::Fn(Box::new(self.func(
                &f.sig,
                &f.attrs,
                Some(&f.block),
            )))),
            syn::Item::Use(u) => {
                let is_pub = matches!(u.vis, syn::Visibility::Public(_));
                let span = self.sp(u.span());
                flatten_use(
                    &u.tree,
                    Vec::new(),
                    u.leading_colon.is_some(),
                    &mut |path, alias, global| {
                        out.push(Item::Use(UseIr {
                            path,
                            global,
                            alias,
                            is_pub,
                            span,
                        }))
                    },
                );
            }
            syn::Item::Struct(s) => out.push(Item::Struct {
                name: s.ident.to_string(),
                span: self.sp(s.ident.span()),
                fields: self.fields(&s.fields),
                generics: generics(&s.generics),
                derives: self.derives(&s.attrs),
                defaults: field_defaults(&s.fields),
            }),
            syn::Item::Enum(e) => out.push(Item::Enum {
                name: e.ident.to_string(),
                span: self.sp(e.ident.span()),
                variants: e
                    .variants
                    .iter()
                    .filter(|v| self.cfg.enabled(&v.attrs))
                    .map(|v| (v.ident.to_string(), self.fields(&v.fields)))
                    .collect(),
                derives: self.derives(&e.attrs),
            }),
            syn::Item::Union(u) => out.push(Item::Enum {
                name: u.ident.to_string(),
                span: self.sp(u.ident.span()),
                variants: Vec::new(),
                derives: self.derives(&u.attrs),
            }),
            syn::Item::Type(t) => out.push(Item::TypeAlias {
                name: t.ident.to_string(),
                span: self.sp(t.ident.span()),
                params: t
                    .generics
                    .type_params()
                    .map(|p| (p.ident.to_string(), p.default.as_ref().map(lower_type)))
                    .collect(),
                ty: lower_type(&t.ty),
            }),
            syn::Item::Static(v) => out.push(Item::Value {
                name: v.ident.to_string(),
                ty: lower_type(&v.ty),
            }),
            syn::Item::Const(v) => out.push(Item::Value {
                name: v.ident.to_string(),
                ty: lower_type(&v.ty),
            }),
            syn::Item::Trait(t) => out.push(self.trait_(t)),
            syn::Item::Impl(i) => out.push(Item::Impl(Box::new(self.impl_(i)))),
            syn::Item::Mod(m) => out.push(self.module(m, dir, top)),
            syn::Item::ExternCrate(e) => out.push(Item::ExternCrate {
                name: e.ident.to_string(),
                alias: e.rename.as_ref().map(|(_, i)| i.to_string()),
                span: self.sp(e.span()),
            }),
            syn::Item::Macro(m) => out.push(self.item_macro(m, dir, top)),
            _ => {}
        }
    }

    fn fields(&self, fields: &syn::Fields) -> Vec<(String, TypeRef)> {
        fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let name = f
                    .ident
                    .as_ref()
                    .map_or_else(|| i.to_string(), |id| id.to_string());
                (name, lower_type(&f.ty))
            })
            .collect()
    }

    pub(super) fn trait_(&mut self, t: &syn::ItemTrait) -> Item {
        let (mut fns, mut macros, mut assoc_types) = (Vec::new(), Vec::new(), Vec::new());
        let mut assoc_consts = Vec::new();
        for ti in &t.items {
            match ti {
                syn::TraitItem::Const(c) if self.cfg.enabled(&c.attrs) => {
                    assoc_consts.push((c.ident.to_string(), lower_type(&c.ty)))
                }
                syn::TraitItem::Type(ty) if self.cfg.enabled(&ty.attrs) => {
                    assoc_types.push((ty.ident.to_string(), bounds(ty.bounds.iter())))
                }
                syn::TraitItem::Fn(f) if self.cfg.enabled(&f.attrs) => {
                    fns.push(self.func(&f.sig, &f.attrs, f.default.as_ref()))
                }
                syn::TraitItem::Macro(m) if self.cfg.enabled(&m.attrs) => {
                    macros.push(self.macro_call(&m.mac, m.span()))
                }
                _ => {}
            }
        }
        Item::Trait {
            name: t.ident.to_string(),
            span: self.sp(t.ident.span()),
            supertraits: bounds(t.supertraits.iter()),
            fns,
            assoc_types,
            assoc_consts,
            attrs: self.attrs(&t.attrs),
            macros,
        }
    }

    pub(super) fn impl_(&mut self, i: &syn::ItemImpl) -> ImplIr {
        let (mut fns, mut macros) = (Vec::new(), Vec::new());
        for ii in &i.items {
            match ii {
                syn::ImplItem::Fn(f) if self.cfg.enabled(&f.attrs) => {
                    fns.push(self.func(&f.sig, &f.attrs, Some(&f.block)))
                }
                syn::ImplItem::Macro(m) if self.cfg.enabled(&m.attrs) => {
                    macros.push(self.macro_call(&m.mac, m.span()))
                }
                _ => {}
            }
        }
        fns.shrink_to_fit();
        ImplIr {
            self_ty: lower_type(&i.self_ty),
            trait_: i.trait_.as_ref().map(|(_, p, _)| lower_path(p)),
            generics: generics(&i.generics),
            fns,
            assoc_types: i
                .items
                .iter()
                .filter_map(|ii| match ii {
                    syn::ImplItem::Type(t) => Some((t.ident.to_string(), lower_type(&t.ty))),
                    _ => None,
                })
                .collect(),
            span: self.sp(i.self_ty.span()),
            macros,
        }
    }

    pub(crate) fn func(
        &mut self,
        sig: &syn::Signature,
        attrs: &[syn::Attribute],
        body: Option<&syn::Block>,
    ) -> FnIr {
        let (mut self_param, mut self_mutable) = (None, false);
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(r) => {
                    self_param = Some(r.reference.is_some() || !owns_self(r));
                    self_mutable = r.mutability.is_some();
                }
                syn::FnArg::Typed(pt) => params.push(Param {
                    name: pat_ident(&pt.pat),
                    ty: lower_type(&pt.ty),
                    mutable: matches!(&*pt.pat, syn::Pat::Ident(i) if i.mutability.is_some())
                        || matches!(&*pt.ty, syn::Type::Reference(r) if r.mutability.is_some())
                        || matches!(&*pt.ty, syn::Type::Ptr(p) if p.mutability.is_some()),
                }),
            }
        }
        let mut nested = Vec::new();
        // A fn nested in this one collects its own inner items.
        let outer = std::mem::take(&mut self.inner);
        let body = body.map(|b| match self.lazy_body(b) {
            Some((lazy, uses)) => {
                self.body_uses(uses, &mut nested);
                Body::Lazy(lazy)
            }
            None => Body::Lowered(self.block(b, &mut nested)),
        });
        nested.append(&mut self.inner);
        self.inner = outer;
        FnIr {
            name: sig.ident.to_string(),
            span: self.sp(sig.ident.span()),
            attrs: self.attrs(attrs),
            generics: generics(&sig.generics),
            self_param,
            self_mutable,
            params,
            ret: match &sig.output {
                syn::ReturnType::Default => None,
                syn::ReturnType::Type(_, t) => Some(lower_type(t)),
            },
            is_async: sig.asyncness.is_some(),
            body,
            nested,
        }
    }
}

pub(crate) fn path_names(p: &syn::Path) -> Vec<String> {
    p.segments.iter().map(|s| s.ident.to_string()).collect()
}

pub(crate) fn pat_ident(p: &syn::Pat) -> Option<String> {
    match p {
        syn::Pat::Ident(i) => Some(i.ident.to_string()),
        syn::Pat::Type(t) => pat_ident(&t.pat),
        syn::Pat::Reference(r) => pat_ident(&r.pat),
        _ => None,
    }
}

pub(crate) fn lower_path(p: &syn::Path) -> PathIr {
    PathIr {
        global: p.leading_colon.is_some(),
        segs: p.segments.iter().map(lower_seg).collect(),
        qself: None,
    }
}

pub(crate) fn lower_qpath(q: Option<&syn::QSelf>, p: &syn::Path) -> PathIr {
    let mut out = lower_path(p);
    if let Some(q) = q {
        out.qself = Some(Box::new(QSelf {
            ty: lower_type(&q.ty),
            pos: q.position,
        }));
    }
    out
}

fn lower_seg(s: &syn::PathSegment) -> Seg {
    let (mut args, mut bindings) = (Vec::new(), Vec::new());
    if let syn::PathArguments::AngleBracketed(a) = &s.arguments {
        // Exactly as long as needed: a growing Vec's spare room would outlive the run.
        let types = a.args.iter();
        let kept = |g: &&syn::GenericArgument| {
            matches!(
                g,
                syn::GenericArgument::Type(_) | syn::GenericArgument::Const(_)
            )
        };
        args.reserve_exact(types.filter(kept).count());
        for g in &a.args {
            match g {
                syn::GenericArgument::Type(t) => args.push(lower_type(t)),
                // A const argument keeps its place: arguments match parameters by position.
                syn::GenericArgument::Const(_) => args.push(TypeRef::Unknown),
                syn::GenericArgument::AssocType(b) => {
                    bindings.push((b.ident.to_string(), lower_type(&b.ty)))
                }
                _ => {}
            }
        }
    }
    // `Fn(A, B) -> R` as rustc desugars it: `Fn<(A, B), Output = R>`.
    if let syn::PathArguments::Parenthesized(p) = &s.arguments {
        args.push(TypeRef::Tuple(p.inputs.iter().map(lower_type).collect()));
        if let syn::ReturnType::Type(_, out) = &p.output {
            bindings.push(("Output".to_owned(), lower_type(out)));
        }
    }
    let generics =
        (!args.is_empty() || !bindings.is_empty()).then(|| Box::new(Generics { args, bindings }));
    Seg {
        name: s.ident.to_string().into(),
        generics,
    }
}

pub(crate) fn lower_type(t: &syn::Type) -> TypeRef {
    match t {
        syn::Type::Path(p) => TypeRef::Path(lower_qpath(p.qself.as_ref(), &p.path)),
        syn::Type::Reference(r) => TypeRef::Ref(Box::new(lower_type(&r.elem))),
        syn::Type::Ptr(r) => TypeRef::Ref(Box::new(lower_type(&r.elem))),
        syn::Type::Paren(p) => lower_type(&p.elem),
        syn::Type::Group(g) => lower_type(&g.elem),
        syn::Type::Slice(s) => TypeRef::Slice(Box::new(lower_type(&s.elem))),
        syn::Type::Array(a) => TypeRef::Array(Box::new(lower_type(&a.elem))),
        syn::Type::Tuple(t) => TypeRef::Tuple(t.elems.iter().map(lower_type).collect()),
        syn::Type::ImplTrait(i) => TypeRef::ImplTrait(bounds(i.bounds.iter())),
        syn::Type::TraitObject(d) => TypeRef::DynTrait(bounds(d.bounds.iter())),
        _ => TypeRef::Unknown,
    }
}

fn bounds<'b>(b: impl Iterator<Item = &'b syn::TypeParamBound>) -> Vec<PathIr> {
    b.filter_map(|b| match b {
        syn::TypeParamBound::Trait(t) => Some(lower_path(&t.path)),
        _ => None,
    })
    .collect()
}

/// The type and const parameters, in order (a written type's arguments are matched to
/// them by position), with the type parameters' bounds and defaults.
pub(crate) fn generics(g: &syn::Generics) -> Vec<GenericParam> {
    let mut out: Vec<GenericParam> = (g.params.iter())
        .filter_map(|p| match p {
            syn::GenericParam::Type(p) => Some(GenericParam {
                name: p.ident.to_string(),
                bounds: bounds(p.bounds.iter()),
                default: p.default.as_ref().map(lower_type),
                is_const: false,
            }),
            syn::GenericParam::Const(c) => Some(GenericParam {
                name: c.ident.to_string(),
                bounds: Vec::new(),
                default: None,
                is_const: true,
            }),
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect();
    for pred in g.where_clause.iter().flat_map(|w| w.predicates.iter()) {
        if let syn::WherePredicate::Type(pt) = pred
            && let syn::Type::Path(tp) = &pt.bounded_ty
            && let Some(id) = tp.path.get_ident()
            && let Some(gp) = out.iter_mut().find(|gp| *id == gp.name)
        {
            gp.bounds.extend(bounds(pt.bounds.iter()));
        }
    }
    out
}

/// Whether a receiver holds `Self` by value: `self`, `mut self`, `self: Self`,
/// `self: Box<Self>`. A typed receiver of another type (`self: &Self`, `self: Pin<&mut Self>`,
/// `self: Arc<Self>`) borrows or shares it: dropping it drops no `Self`.
fn owns_self(r: &syn::Receiver) -> bool {
    if r.colon_token.is_none() {
        return true;
    }
    match &*r.ty {
        syn::Type::Path(p) => {
            let last = p.path.segments.last();
            last.is_some_and(|s| s.ident == "Self" || s.ident == "Box")
        }
        _ => false,
    }
}
