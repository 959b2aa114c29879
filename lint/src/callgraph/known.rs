//! What the lint knows of std and cudarc return types, to keep receivers typed through
//! `Arc::new(..)`, `ctx.default_stream()`, `x.lock().unwrap()` and the like.

use crate::resolve::Ty;
use crate::sinks::{CUDARC_RETURNS, is_cudarc_type};

/// Parses the small type syntax of the tables (`Result<Arc<CudaStream>>`).
pub fn parse_table_ty(s: &str) -> Ty {
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
pub fn cudarc_ret(ty_canon: &str, method: &str) -> Option<Ty> {
    let ty = ty_canon.strip_prefix("cudarc::driver::")?;
    CUDARC_RETURNS
        .iter()
        .find(|(t, m, _)| *t == ty && *m == method)
        .map(|(_, _, r)| parse_table_ty(r))
}

/// The result of calling a std (or unknown-crate) associated fn `canon::name(args)`.
pub fn std_assoc_ret(segs: &[String], args: &[Ty]) -> Option<Ty> {
    let (name, ty) = segs.split_last()?;
    let ty = ty.join("::");
    let first = || args.first().cloned().unwrap_or(Ty::Unknown);
    match (ty.as_str(), name.as_str()) {
        (
            "std::Arc" | "std::Rc" | "std::Box" | "std::Mutex" | "std::RwLock" | "std::RefCell",
            "new",
        ) => Some(Ty::Adt(ty, vec![first()])),
        ("std::Vec", _) => Some(Ty::Adt(ty, Vec::new())),
        ("std", "Some") => Some(Ty::Adt("std::Option".into(), vec![first()])),
        ("std", "Ok") => Some(Ty::Adt("std::Result".into(), vec![first()])),
        (t, m) if t.starts_with("cudarc::") => cudarc_ret(t, m),
        _ => None,
    }
}

/// The result of std methods that keep the receiver's type visible.
pub fn std_method_ret(recv: &Ty, name: &str) -> Option<Ty> {
    match name {
        "unwrap" | "expect" | "unwrap_or" | "unwrap_or_default" | "unwrap_or_else"
        | "unwrap_unchecked" => Some(recv.unwrap_once()),
        "clone" | "to_owned" | "as_ref" | "as_mut" | "borrow" | "borrow_mut" | "deref"
        | "deref_mut" | "by_ref" => Some(recv.clone()),
        "lock" | "read" | "write" | "try_lock"
            if recv.is("std::Mutex") || recv.is("std::RwLock") =>
        {
            Some(Ty::Adt("std::Result".into(), vec![recv.arg(0)]))
        }
        "ok" if recv.is("std::Result") => Some(Ty::Adt("std::Option".into(), vec![recv.arg(0)])),
        "get" | "first" | "last" | "get_mut" | "first_mut" | "last_mut" if recv.is("std::Vec") => {
            Some(Ty::Adt("std::Option".into(), vec![recv.arg(0)]))
        }
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
