//! `<Type as Trait>::method` seen from outside the impl: which fns it names, for config
//! paths and qualified calls. A trait of a crate the lint does not analyse is matched by
//! its crate and name; a provided method the impl does not override gets a node of its
//! own for that type.

use super::{DefMap, FnData, FnId, Ty};

impl<'a> FnData<'a> {
    /// This fn as a node of its own: a provided trait method walked with `Self` =
    /// `self_ty`, shown in its path as `shown` (the implementing type, or a type
    /// parameter's bounds: `<impl UnaryOpT as Map1>::map`) and of canonical path `canon`
    /// when it is a type; with `shown` = `None`, as it is.
    pub fn specialised(
        &self,
        shown: Option<&str>,
        canon: Option<&str>,
        self_ty: Option<Ty>,
    ) -> FnData<'a> {
        let trait_ = self.trait_.clone().unwrap_or_default();
        FnData {
            name: self.name.clone(),
            path: match shown {
                Some(c) => format!("<{c} as {trait_}>::{}", self.name),
                None => self.path.clone(),
            },
            module: self.module,
            span: self.span,
            ir: self.ir,
            self_ty: if shown.is_some() { None } else { self.self_ty },
            self_canon: canon.map(str::to_owned).or_else(|| self.self_canon.clone()),
            impl_generics: self.impl_generics,
            impl_trait_args: self.impl_trait_args,
            trait_: self.trait_.clone(),
            is_trait_decl: shown.is_none() && self.is_trait_decl,
            marks: self.marks.clone(),
            self_override: self_ty.or_else(|| self.self_override.clone()),
        }
    }
}

impl DefMap<'_> {
    /// The fns `method` of the impls of trait `tr` (a canonical path) for type `ty`.
    ///
    /// A trait of a crate that is not analysed is known only by the path each impl
    /// resolved it to, which may be a re-export's or the defining module's: when no impl
    /// names `tr` exactly, an impl of a trait of the same crate and the same name
    /// matches (`safetensors::View` is the `safetensors::tensor::View` that candle's
    /// `impl st::View for Tensor` names), provided that only one such trait path does.
    pub fn impl_methods(&self, ty: &str, tr: &str, method: &str) -> Vec<FnId> {
        let ids = self
            .methods
            .get(ty)
            .and_then(|m| m.get(method))
            .map(Vec::as_slice)
            .unwrap_or_default();
        let trait_of = |f: FnId| self.func(f).trait_.as_deref();
        let exact: Vec<FnId> = ids
            .iter()
            .copied()
            .filter(|&f| trait_of(f) == Some(tr))
            .collect();
        if !exact.is_empty() || self.is_analysed_path(tr) {
            return exact;
        }
        let same = |t: &str| {
            !self.is_analysed_path(t)
                && t.split("::").next() == tr.split("::").next()
                && t.rsplit("::").next() == tr.rsplit("::").next()
        };
        let near: Vec<FnId> = ids
            .iter()
            .copied()
            .filter(|&f| trait_of(f).is_some_and(same))
            .collect();
        let mut paths: Vec<&str> = near.iter().filter_map(|&f| trait_of(f)).collect();
        paths.sort_unstable();
        paths.dedup();
        if paths.len() == 1 { near } else { Vec::new() }
    }

    /// Whether canonical path `p` is in an analysed crate (or std, whose paths are
    /// canonical already).
    fn is_analysed_path(&self, p: &str) -> bool {
        let first = p.split("::").next().unwrap_or_default();
        first == "std" || self.crates.iter().any(|c| c.path_name == first)
    }

    /// The node of trait `tr`'s provided method `method` for a type `ty` whose
    /// `impl tr for ty` does not override it: created on the first request (walked with
    /// `Self` = `ty`, as a call on a `ty` receiver is) and listed with `ty`'s methods,
    /// so that calls on a `ty` reach it. `None` when `ty` does not implement `tr` or
    /// `tr` has no provided method `method`.
    pub fn provided_method_node(&mut self, ty: &str, tr: &str, method: &str) -> Option<FnId> {
        if !self.traits_of.get(ty)?.iter().any(|t| t == tr) {
            return None;
        }
        let decl = self.trait_method(tr, method)?;
        let d = self.func(decl);
        let provided = d.is_trait_decl && d.ir.is_some_and(|ir| ir.body.is_some());
        if !provided || d.trait_.as_deref() != Some(tr) {
            return None;
        }
        let self_ty = self.resolve_alias(ty, &[], 0);
        let node = self.fns[decl as usize].specialised(Some(ty), Some(ty), Some(self_ty));
        let id = self.fns.len() as FnId;
        self.fns.push(node);
        self.methods
            .entry(ty.to_owned())
            .or_default()
            .entry(method.to_owned())
            .or_default()
            .push(id);
        Some(id)
    }
}
