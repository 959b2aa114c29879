//! Deciding a call of a modelled fn (`known::models`) from its arguments: the arguments'
//! types (pageable or pinned memory, a cudarc type) and, for calls whose name a
//! conditional model has, the shapes of the argument expressions as written (a value
//! path like `&Device::Cpu`, a method call like `x.device()`); and, for a built-in cudarc
//! node, whether its model holds for the calling crate's cudarc version.

use super::{Typed, Walker};
use crate::callgraph::Uncertain;
use crate::known::models::{Matcher, Otherwise};
use crate::parse::ir::Expr;
use crate::resolve::{Def, FnData, FnId};

/// An argument as written, as far as a model's matchers look at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ArgShape {
    /// A path (behind `&` and parentheses): its names and whether it is global.
    Path(Vec<String>, bool),
    /// A call of a method without arguments (`x.device()`).
    Method(String),
    Other,
}

/// What a model says of one call.
pub(super) enum Verdict {
    /// The call waits: an edge to the model's sink.
    Waits,
    /// It does not: no edge.
    Never,
    /// Nothing here decides: an edge marked with the model's note.
    Undecided(Uncertain),
}

/// The shapes of `args`, for a call named `name` whose model decides from an argument
/// (empty for every other call: nothing is recorded).
pub(super) fn shapes(map: &crate::resolve::DefMap<'_>, name: &str, args: &[Expr]) -> Vec<ArgShape> {
    if !map.modelled_names.contains_key(name) {
        return Vec::new();
    }
    args.iter().map(shape).collect()
}

fn shape(e: &Expr) -> ArgShape {
    match e {
        Expr::Ref(inner) => shape(inner),
        Expr::Path(p) if p.qself.is_none() => {
            let names = p.names().iter().map(|s| s.to_string()).collect();
            ArgShape::Path(names, p.global)
        }
        Expr::MethodCall { name, args, .. } if args.is_empty() => {
            ArgShape::Method(name.to_string())
        }
        _ => ArgShape::Other,
    }
}

impl Walker<'_, '_> {
    /// What the model of `fd` (if any) says of this call with `args` (`arg_shift`: a path
    /// call's receiver comes first).
    pub(super) fn model_verdict(
        &self,
        fd: &FnData<'_>,
        args: &[Typed],
        arg_shift: usize,
    ) -> Verdict {
        let Some(m) = &fd.marks.model else {
            return Verdict::Waits;
        };
        if fd.ir.is_none() && m.krate() == "cudarc" && !m.holds_for(self.cudarc_version()) {
            return Verdict::Never;
        }
        if m.follow {
            // The body is walked; the wait is in it, taken only by some calls.
            return Verdict::Undecided(Uncertain::Argument {
                note: m.reason.clone(),
            });
        }
        let Some(when) = &m.when else {
            return Verdict::Waits;
        };
        let i = when.arg + arg_shift;
        let ty = args.get(i).map(|(t, _)| t);
        let shape = self.arg_shapes.get(i);
        let matches = |ms: &[Matcher]| ms.iter().any(|x| self.matches(x, ty, shape));
        if matches(&when.blocks) {
            return Verdict::Waits;
        }
        if matches(&when.never) {
            return Verdict::Never;
        }
        match when.otherwise {
            Otherwise::Clean => Verdict::Never,
            Otherwise::Possible => Verdict::Undecided(Uncertain::Argument {
                note: when.note.clone(),
            }),
        }
    }

    /// Built-in node `f`, or the node of its path whose model holds for the calling crate's
    /// cudarc (a type's `Drop` is one entry of [`crate::resolve::DefMap::drops`] for every
    /// version); `None` when no version's model holds.
    pub(super) fn for_cudarc_version(&self, f: FnId) -> Option<FnId> {
        let fd = self.map.func(f);
        if fd.ir.is_some() {
            return Some(f);
        }
        let holds = |&id: &FnId| {
            let m = self.map.func(id).marks.model.as_ref();
            m.is_none_or(|m| m.krate() != "cudarc" || m.holds_for(self.cudarc_version()))
        };
        let same_path = self.map.builtin.get(&fd.path).into_iter().flatten();
        same_path.copied().find(holds).or(Some(f).filter(holds))
    }

    /// The version of the cudarc the calling crate depends on.
    fn cudarc_version(&self) -> Option<&cargo_metadata::semver::Version> {
        let krate = self.map.modules[self.module as usize].krate;
        self.map.crates.get(krate)?.versions.cudarc.as_ref()
    }

    fn matches(
        &self,
        m: &Matcher,
        ty: Option<&crate::resolve::Ty>,
        shape: Option<&ArgShape>,
    ) -> bool {
        match m {
            Matcher::Pageable => ty.and_then(|t| t.is_pageable()) == Some(true),
            Matcher::Pinned => ty.and_then(|t| t.is_pageable()) == Some(false),
            Matcher::Type(path) => ty.is_some_and(|t| {
                self.map
                    .deref_chain(t)
                    .iter()
                    .any(|t| t.canon() == Some(path.as_str()))
            }),
            Matcher::Value(path) => match shape {
                Some(ArgShape::Path(names, global)) => self.is_value(names, *global, path),
                _ => false,
            },
            Matcher::Method(name) => shape == Some(&ArgShape::Method(name.clone())),
        }
    }

    /// Whether the path `names` (a unit variant or a constant) is the value `path` names.
    fn is_value(&self, names: &[String], global: bool, path: &str) -> bool {
        let Some((last, ty)) = names.split_last() else {
            return false;
        };
        if !path.ends_with(last.as_str()) || ty.is_empty() {
            return false;
        }
        let ty: Vec<&str> = ty.iter().map(String::as_str).collect();
        let Some(Def::Type(c)) = self.map.resolve_path(self.module, &ty, global) else {
            return false;
        };
        let want = self.map.model_values.get(path).map_or(path, String::as_str);
        // An older version's type (`candle_core@0.6.0::device::Device`) is the type the
        // model names in that version.
        let c = match c.split_once("::") {
            Some((krate, rest)) if krate.contains('@') => {
                format!(
                    "{}::{rest}",
                    &krate[..krate.find('@').unwrap_or(krate.len())]
                )
            }
            _ => c,
        };
        want.len() == c.len() + 2 + last.len()
            && want.starts_with(c.as_str())
            && want[c.len()..].strip_prefix("::") == Some(last.as_str())
    }
}
