//! Return types of std and cudarc calls, from the tables of [`crate::known`], to keep
//! receivers typed through `Arc::new(..)`, `ctx.default_stream()`, `x.lock().unwrap()`
//! and the like, and of the `Result` aliases of crates it does not analyse
//! (`anyhow::Result<T>`), for `?`.

use crate::known::cudarc::{CUDARC_RETURNS, is_cudarc_type};
use crate::known::std::{LOCK_METHODS, LOCKS, SAME_TYPE, UNWRAPPING, VEC_ACCESSORS, WRAPPING_NEW};
use crate::known::{RESULT_ALIASES, locks};
use crate::resolve::Ty;

/// Parses the small type syntax of the tables (`Result<Arc<CudaStream>>`).
pub(super) fn parse_table_ty(s: &str) -> Ty {
    let s = s.trim();
    let (name, inner) = match s.find('<') {
        Some(i) => (&s[..i], s[i + 1..].strip_suffix('>').unwrap_or("")),
        None => (s, ""),
    };
    let canon = if is_cudarc_type(name) {
        format!("cudarc::driver::{name}")
    } else {
        format!("std::{name}")
    };
    let args = if inner.is_empty() {
        Vec::new()
    } else {
        vec![parse_table_ty(inner)]
    };
    Ty::Adt(canon, args)
}

/// The return type of cudarc's `Type::method`, if the table has it.
pub(super) fn cudarc_ret(ty_canon: &str, method: &str) -> Option<Ty> {
    let ty = ty_canon.strip_prefix("cudarc::driver::")?;
    CUDARC_RETURNS
        .iter()
        .find(|(t, m, _)| *t == ty && *m == method)
        .map(|(_, _, r)| parse_table_ty(r))
}

/// The result of calling a std (or unknown-crate) associated fn `canon::name(args)`.
pub(super) fn std_assoc_ret(segs: &[String], args: &[Ty]) -> Option<Ty> {
    let (name, ty) = segs.split_last()?;
    let ty = ty.join("::");
    let first = || args.first().cloned().unwrap_or(Ty::Unknown);
    match (ty.as_str(), name.as_str()) {
        (t, "new") if WRAPPING_NEW.contains(&t) => Some(Ty::Adt(ty, vec![first()])),
        // `std::slice::from_raw_parts(ptr as *const T, n)`: a `[T]`.
        ("std::slice", "from_raw_parts" | "from_raw_parts_mut" | "from_ref" | "from_mut") => {
            Some(Ty::Slice(Box::new(first())))
        }
        ("std::mem", "take" | "replace") => Some(first()),
        ("std::iter", "once" | "repeat") => Some(super::std_types::iter_of(first())),
        ("std::String", "new" | "from" | "with_capacity") => Some(Ty::Adt(ty, Vec::new())),
        ("std::Vec", _) => Some(Ty::Adt(ty, Vec::new())),
        ("std", "Some") => Some(Ty::Adt("std::Option".into(), vec![first()])),
        ("std", "Ok") => Some(Ty::Adt("std::Result".into(), vec![first()])),
        (t, m) if t.starts_with("cudarc::") => cudarc_ret(t, m),
        _ => None,
    }
}

/// `ty` with a known external alias replaced by the type it stands for.
pub(super) fn expand_known_alias(ty: &Ty) -> Ty {
    match ty {
        Ty::Adt(c, args) => match RESULT_ALIASES.iter().find(|(a, _)| a == c) {
            Some((_, err)) => {
                let ok = args.first().cloned().unwrap_or(Ty::Unknown);
                let err = args
                    .get(1)
                    .cloned()
                    .unwrap_or_else(|| Ty::Adt((*err).to_owned(), Vec::new()));
                Ty::Adt("std::Result".into(), vec![ok, err])
            }
            None => ty.clone(),
        },
        _ => ty.clone(),
    }
}

/// What `e?` gives for an `e` of type `ty`: the `Ok` type of a `Result` (or of a known
/// alias of it), the `Some` type of an `Option`. Crate-local aliases are already expanded
/// when the type is resolved.
pub(super) fn try_output(ty: &Ty) -> Ty {
    expand_known_alias(ty).unwrap_once()
}

fn result_of(ok: Ty) -> Option<Ty> {
    Some(Ty::Adt("std::Result".into(), vec![ok]))
}

/// `Result`/`Option` adapters that keep the value's type: `r.map_err(..)?`,
/// `r.context("..")?`, `o.ok_or(e)?`, `o.cloned()`.
fn adapter_ret(recv: &Ty, name: &str) -> Option<Ty> {
    let ok = recv.arg(0);
    match name {
        "map_err" | "context" | "with_context" | "wrap_err" | "wrap_err_with" | "inspect"
        | "inspect_err" | "or_else"
            if recv.is("std::Result") =>
        {
            result_of(ok)
        }
        "ok_or" | "ok_or_else" | "context" | "with_context" | "wrap_err" | "wrap_err_with"
            if recv.is("std::Option") =>
        {
            result_of(ok)
        }
        "copied" | "cloned" | "as_deref" | "as_deref_mut" | "take" | "filter" | "inspect"
        | "or" | "or_else" | "xor"
            if recv.is("std::Option") =>
        {
            Some(Ty::Adt("std::Option".into(), vec![ok]))
        }
        _ => None,
    }
}

/// The result of std method `recv.name(args)`: the receiver's type kept visible
/// (`unwrap`, `clone`, `lock`, `map_err`), or what iterating, indexing and combinators
/// give ([`super::std_types::method_ret`]).
pub(super) fn std_method_ret(recv: &Ty, name: &str, args: &[Ty]) -> Option<Ty> {
    let recv = &expand_known_alias(recv);
    if let Some(t) = adapter_ret(recv, name) {
        return Some(t);
    }
    if let Some(t) = super::std_types::method_ret(recv, name, args) {
        return Some(t);
    }
    let is_any = |tys: &[&str]| recv.canon().is_some_and(|c| tys.contains(&c));
    if UNWRAPPING.contains(&name) {
        Some(recv.unwrap_once())
    } else if SAME_TYPE.contains(&name) {
        Some(recv.clone())
    } else if LOCK_METHODS.contains(&name) && is_any(LOCKS) {
        Some(Ty::Adt("std::Result".into(), vec![recv.arg(0)]))
    } else if let Some(guard) = lock_guard(recv, name) {
        Some(guard)
    } else if (name == "ok" && recv.is("std::Result"))
        || (VEC_ACCESSORS.contains(&name) && recv.is("std::Vec"))
    {
        Some(Ty::Adt("std::Option".into(), vec![recv.arg(0)]))
    } else {
        None
    }
}

/// What a lock crate's locking method gives: its guard of the lock's value, in an `Option`
/// for `try_*` ([`locks`]).
fn lock_guard(recv: &Ty, name: &str) -> Option<Ty> {
    let lock = recv.canon().filter(|c| locks::LOCKS.contains(c))?;
    let guard = Ty::Adt(locks::guard_of(lock, name)?, vec![recv.arg(0)]);
    match (
        locks::LOCKING.contains(&name),
        locks::TRY_LOCKING.contains(&name),
    ) {
        (true, _) => Some(guard),
        (_, true) => Some(Ty::Adt("std::Option".into(), vec![guard])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_types() {
        let t = parse_table_ty("Result<Arc<CudaStream>>");
        let inner = t.unwrap_once();
        assert_eq!(
            inner
                .deref_chain()
                .last()
                .and_then(|t| t.canon().map(str::to_owned))
                .as_deref(),
            Some("cudarc::driver::CudaStream")
        );
    }
}
