//! Path resolution in a module's scope: items, `use`s (renames, globs, re-exports
//! across crates), extern crate names, `crate`/`self`/`super`, and the std prelude.
//!
//! Lookups are lazy, memoised per query and bounded: every query carries a memo of
//! (module, name, namespace wanted, external globs allowed) → result, where an entry
//! still being computed reads as `None` (a glob or re-export cycle resolves nothing),
//! plus a depth cap. Each member search is thus done once per query, so a query costs
//! at most the number of (module, name) pairs it reaches, whatever the glob graph: a
//! mesh of modules globbing each other no longer makes failed lookups exponential.
//! The memo lives for one query (not the whole phase) so that results do not depend
//! on which thread asked what first.

use super::*;
use crate::known::canonical;
use crate::known::cudarc::is_cudarc_type;
use crate::known::locks::is_lock_crate;
use crate::known::std::{PRELUDE, is_std_crate};

const MAX_DEPTH: usize = 24;

/// The per-query memo: (module, name, `more`, `ext`) → result; `None` while in progress.
/// Its names borrow from the query and the map, both of which outlive it.
type Visited<'q> = HashMap<(ModId, &'q str, bool, bool), Option<Def>, fnv::FnvBuildHasher>;

impl DefMap<'_> {
    /// Resolves `segs` as written in module `m`.
    pub fn resolve_path(&self, m: ModId, segs: &[&str], global: bool) -> Option<Def> {
        let mut visited = Visited::default();
        self.resolve_in(m, segs, global, &mut visited, 0)
    }

    fn resolve_in<'q>(
        &'q self,
        m: ModId,
        segs: &[&'q str],
        global: bool,
        v: &mut Visited<'q>,
        depth: usize,
    ) -> Option<Def> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (first, rest) = segs.split_first()?;
        let krate = self.modules.get(m as usize)?.krate;
        let mut def = if global {
            self.extern_crate(krate, first)?
        } else {
            match *first {
                "crate" => Def::Mod(self.crates[krate].root),
                "self" => Def::Mod(m),
                "super" => Def::Mod(self.modules[m as usize].parent.unwrap_or(m)),
                name => self.lookup(m, name, !rest.is_empty(), v, depth)?,
            }
        };
        for (i, seg) in rest.iter().enumerate() {
            def = self.step(def, seg, i + 1 < rest.len(), v, depth)?;
        }
        Some(def)
    }

    /// One path step from `def` to its member `seg`.
    fn step<'q>(
        &'q self,
        def: Def,
        seg: &'q str,
        more: bool,
        v: &mut Visited<'q>,
        depth: usize,
    ) -> Option<Def> {
        match def {
            Def::Mod(m) if seg == "super" => {
                Some(Def::Mod(self.modules[m as usize].parent.unwrap_or(m)))
            }
            Def::Mod(m) => self.member(m, seg, more, true, v, depth + 1),
            Def::Crate(c) => self.member(self.crates[c].root, seg, more, true, v, depth + 1),
            Def::External(mut segs) => {
                segs.push(seg.to_owned());
                Some(Def::External(canonical_owned(segs)))
            }
            Def::Type(t) | Def::Trait(t) => self.assoc(&t, seg),
            Def::Fn(_) | Def::Value(_) => None,
        }
    }

    /// An associated fn `name` of a type or trait.
    pub fn assoc(&self, canon: &str, name: &str) -> Option<Def> {
        if let Some(TypeData {
            kind: TypeKind::Alias(..),
            ..
        }) = self.types.get(canon)
        {
            let ty = self.resolve_alias(canon, &[], 0);
            return ty.canon().and_then(|c| self.assoc(c, name));
        }
        super::note_impl_tables();
        if let Some(ids) = self.methods.get(canon).and_then(|t| t.get(name)) {
            // An inherent fn comes before trait impls' fns of the same name.
            let inherent = ids.iter().find(|&&f| self.func(f).trait_.is_none());
            return inherent.or(ids.first()).map(|&f| Def::Fn(f));
        }
        self.trait_method(canon, name).map(Def::Fn)
    }

    /// A name in module `m`'s own namespace (items, uses, globs), as seen from outside.
    /// `ext`: whether a glob of an external crate may supply the name (not when this
    /// module is itself searched through another module's glob: that module's own
    /// items and later globs come first).
    fn member<'q>(
        &'q self,
        m: ModId,
        name: &'q str,
        more: bool,
        ext: bool,
        v: &mut Visited<'q>,
        depth: usize,
    ) -> Option<Def> {
        if depth > MAX_DEPTH {
            return None;
        }
        // An item of the module itself answers at once, without a search that could
        // recurse: memoising it would only cost a key's allocation (most lookups end here).
        if let Some(defs) = self.modules[m as usize].items.get(name) {
            return pick(defs, more);
        }
        let key = (m, name, more, ext);
        if let Some(done) = v.get(&key) {
            return done.clone();
        }
        v.insert(key, None);
        let found = self.member_uncached(m, name, more, ext, v, depth);
        v.insert(key, found.clone());
        found
    }

    fn member_uncached<'q>(
        &'q self,
        m: ModId,
        name: &'q str,
        more: bool,
        ext: bool,
        v: &mut Visited<'q>,
        depth: usize,
    ) -> Option<Def> {
        let md = &self.modules[m as usize];
        if let Some(defs) = md.items.get(name) {
            return pick(defs, more);
        }
        for &u in md.uses.get(name).into_iter().flatten() {
            if let Some(d) = self.resolve_use(m, u, v, depth + 1) {
                return Some(d);
            }
        }
        let mut external: Option<Vec<String>> = None;
        for &g in &md.globs {
            let target = match self.resolve_use(m, g, v, depth + 1) {
                Some(Def::Mod(t)) => t,
                Some(Def::Crate(c)) => self.crates[c].root,
                Some(Def::External(segs)) => {
                    let cudarc =
                        segs.first().is_some_and(|s| s == "cudarc") && is_cudarc_type(name);
                    if external.is_none() || cudarc {
                        external = Some(segs);
                    }
                    continue;
                }
                _ => continue,
            };
            if let Some(d) = self.member(target, name, more, false, v, depth + 1) {
                return Some(d);
            }
        }
        // A glob of a crate the lint does not parse (`use cudarc::driver::*`,
        // `use std::arch::x86_64::*`) may be where the name comes from.
        let mut segs = external.filter(|_| ext && !PRELUDE.contains(&name))?;
        segs.push(name.to_owned());
        Some(Def::External(canonical_owned(segs)))
    }

    /// A name as used inside module `m`: its members, then extern crates, then the prelude.
    fn lookup<'q>(
        &'q self,
        m: ModId,
        name: &'q str,
        has_rest: bool,
        v: &mut Visited<'q>,
        depth: usize,
    ) -> Option<Def> {
        if let Some(d) = self.member(m, name, has_rest, false, v, depth) {
            return Some(d);
        }
        let krate = self.modules[m as usize].krate;
        if let Some(d) = self.extern_crate(krate, name) {
            return Some(d);
        }
        if PRELUDE.contains(&name) || (has_rest && is_std_crate(name)) {
            return Some(Def::External(vec!["std".to_owned(), name.to_owned()]));
        }
        // Last: a glob of a crate the lint does not parse (the searches of the first
        // pass are memoised, so this pass only adds the external fallback).
        self.member(m, name, has_rest, true, v, depth)
    }

    fn extern_crate(&self, krate: usize, name: &str) -> Option<Def> {
        if is_std_crate(name) {
            return Some(Def::External(vec!["std".to_owned()]));
        }
        if self.crates[krate].name == name {
            return Some(Def::Mod(self.crates[krate].root));
        }
        match self.crates[krate].deps.get(name)? {
            DepTarget::Analysed(c) => Some(Def::Crate(*c)),
            DepTarget::External(real) => Some(Def::External(vec![real.clone()])),
        }
    }

    fn resolve_use<'q>(
        &'q self,
        m: ModId,
        u: &'q UseIr,
        v: &mut Visited<'q>,
        depth: usize,
    ) -> Option<Def> {
        let segs: Vec<&str> = u.path.iter().map(String::as_str).collect();
        if segs.is_empty() {
            return None;
        }
        self.resolve_in(m, &segs, u.global, v, depth + 1)
    }

    /// What an attribute path means: `no_sync`, `synchronizes` or `allow_sync` in any
    /// spelling (`nosync::synchronizes`, bare after a `use`, renamed with `as`).
    pub fn attr_kind(&self, m: ModId, path: &[String]) -> Option<String> {
        let segs: Vec<&str> = path.iter().map(String::as_str).collect();
        if let [name] = segs.as_slice() {
            let md = &self.modules[m as usize];
            if let Some(u) = md.uses.get(name).and_then(|u| u.first()) {
                return u.path.last().cloned();
            }
            return Some((*name).to_owned());
        }
        match self.resolve_path(m, &segs, false) {
            Some(Def::External(p)) if p.first().is_some_and(|c| c == "nosync") => p.last().cloned(),
            _ if segs.first() == Some(&"nosync") => segs.last().map(|s| (*s).to_owned()),
            _ => None,
        }
    }

    /// Fn `f`'s path as a user can write it: where a module on its path is not `pub`, the
    /// path through the public module nearest the item that re-exports the item (the fn,
    /// or its type or trait) with a `pub use` (`candle_core::cuda_backend::CudaDevice::
    /// get_or_load_func` for `candle_core::cuda_backend::device::CudaDevice::..`); else
    /// the path it is defined at.
    pub fn writable_path(&self, f: FnId) -> String {
        let func = self.func(f);
        self.reexported_path(f).unwrap_or_else(|| func.path.clone())
    }

    fn reexported_path(&self, f: FnId) -> Option<String> {
        let func = self.func(f);
        let owner = func
            .path
            .strip_suffix(func.name.as_str())?
            .strip_suffix("::")?;
        // The item named from outside: the fn itself, or its type or trait.
        let (home, item, tail) = match self.types.get(owner) {
            Some(t) => (t.module, owner, Some(func.name.as_str())),
            None => (func.module, func.path.as_str(), None),
        };
        let home_path = &self.modules[home as usize].path;
        let name = item.strip_prefix(home_path.as_str())?.strip_prefix("::")?;
        if name.contains("::") || self.is_public(home) {
            return None;
        }
        // The modules above the item's come first, the nearest first; then the shortest.
        let nearness = |p: &str| {
            let shared = p.split("::").zip(home_path.split("::"));
            std::cmp::Reverse(shared.take_while(|(a, b)| a == b).count())
        };
        let krate = self.modules[home as usize].krate;
        let mut found: Vec<_> = (self.reexports(krate, name, tail, f).into_iter())
            .map(|(m, path)| (nearness(&self.modules[m as usize].path), path))
            .collect();
        found.sort_by(|(a, p), (b, q)| (a, p.len(), p).cmp(&(b, q.len(), q)));
        found.into_iter().next().map(|(_, p)| p)
    }

    /// The paths through public modules of crate `krate` that name fn `f` by a `pub use` of
    /// `name` (renamed or not, or a `pub use ..::*`) then `tail`, with their modules.
    fn reexports(
        &self,
        krate: usize,
        name: &str,
        tail: Option<&str>,
        f: FnId,
    ) -> Vec<(ModId, String)> {
        let mut found = Vec::new();
        for (m, md) in self.modules.iter().enumerate() {
            if md.krate != krate || !self.is_public(m as ModId) {
                continue;
            }
            let renames = (md.uses.iter())
                .filter(|(_, us)| us.iter().any(|u| u.is_pub))
                .map(|(alias, _)| *alias);
            let glob = md.globs.iter().any(|g| g.is_pub) && !md.uses.contains_key(name);
            for alias in renames.chain(glob.then_some(name)) {
                let segs: Vec<&str> = std::iter::once(alias).chain(tail).collect();
                if self.resolve_path(m as ModId, &segs, false) == Some(Def::Fn(f)) {
                    found.push((m as ModId, format!("{}::{}", md.path, segs.join("::"))));
                }
            }
        }
        found
    }

    /// Whether module `m` and every module above it are `pub`.
    fn is_public(&self, m: ModId) -> bool {
        let mut at = Some(m);
        while let Some(m) = at {
            let md = &self.modules[m as usize];
            if !md.is_pub {
                return false;
            }
            at = md.parent;
        }
        true
    }
}

/// [`canonical`] of a path the caller owns: a path of a crate that `canonical` leaves as
/// it is (neither std nor cudarc) is returned without a copy (a path step into an external
/// crate is taken at every call naming one).
fn canonical_owned(segs: Vec<String>) -> Vec<String> {
    match segs.first().map(String::as_str) {
        Some(c) if is_std_crate(c) || c == "cudarc" || is_lock_crate(c) => canonical(&segs),
        _ => segs,
    }
}

/// Of several definitions of one name (type and value namespaces), the most useful.
/// A path with more segments after this one wants a module or type, else a fn.
fn pick(defs: &[Def], more: bool) -> Option<Def> {
    defs.iter()
        .find(|d| matches!(d, Def::Fn(_)) != more)
        .or_else(|| defs.first())
        .cloned()
}
