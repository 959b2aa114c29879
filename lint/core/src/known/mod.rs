//! The lint's knowledge of code it never parses, in one place: std/core/alloc
//! ([`std`]), cudarc's types ([`cudarc`]), the models of the libraries GPU code calls
//! ([`models`]: cudarc's blocking APIs, candle's argument-dependent waits) and the built-in
//! sinks made of them ([`sinks`]), and the one canonical form of their paths
//! ([`canonical`]), which every stage compares.

pub mod cudarc;
pub mod locks;
pub mod models;
pub mod sinks;
pub mod std;

/// The canonical form of the path of an item outside the analysed crates:
/// - std, core and alloc: `std::` and the segments from the first type or trait on
///   (`core::ops::Drop` → `std::Drop`, `std::sync::Arc::new` → `std::Arc::new`), or
///   every segment when none is a type (`core::mem::drop` → `std::mem::drop`);
/// - cudarc: its types at `cudarc::driver::<Type>` ([`cudarc::canonical_cudarc`]);
/// - the lock crates of [`locks`]: the crate and the segments from the first type on
///   (`spin::mutex::MutexGuard` → `spin::MutexGuard`);
/// - other crates: as written.
///
/// Applying it to a canonical path changes nothing, so paths can be built segment by
/// segment and canonicalised at each step.
pub fn canonical(segs: &[String]) -> Vec<String> {
    match segs.first().map(String::as_str) {
        Some(c) if std::is_std_crate(c) => from_first_type("std", &segs[1..]),
        Some(c) if locks::is_lock_crate(c) => from_first_type(c, &segs[1..]),
        Some("cudarc") => cudarc::canonical_cudarc(segs),
        _ => segs.to_vec(),
    }
}

/// `krate` and the segments of `rest` from its first type or trait on (all of `rest` when
/// none is one).
fn from_first_type(krate: &str, rest: &[String]) -> Vec<String> {
    let first_ty = rest.iter().position(|s| is_type_name(s));
    let mut out = vec![krate.to_owned()];
    out.extend(rest[first_ty.unwrap_or(0)..].iter().cloned());
    out
}

/// The canonical path of an external type or trait, as one string (`std::Drop`,
/// `cudarc::driver::CudaStream`, `serde::Serialize`).
pub fn canonical_name(segs: &[String]) -> String {
    canonical(segs).join("::")
}

/// `Result` aliases of crates the lint does not analyse, by canonical path, with the
/// error type they fix: `anyhow::Result<T>` is `std::Result<T, anyhow::Error>`.
pub const RESULT_ALIASES: &[(&str, &str)] = &[
    ("anyhow::Result", "anyhow::Error"),
    ("eyre::Result", "eyre::Report"),
    ("color_eyre::Result", "color_eyre::Report"),
    ("color_eyre::eyre::Result", "color_eyre::eyre::Report"),
];

/// Whether a std path segment names a type or trait (std's modules and fns are
/// lower case, its types and traits upper case).
fn is_type_name(s: &str) -> bool {
    s.chars().next().is_some_and(char::is_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(p: &str) -> String {
        let v: Vec<String> = p.split("::").map(str::to_owned).collect();
        canonical_name(&v)
    }

    #[test]
    fn every_spelling_of_a_std_item_is_one_path() {
        for p in [
            "core::ops::Drop",
            "std::ops::Drop",
            "std::Drop",
            "alloc::ops::Drop",
        ] {
            assert_eq!(canon(p), "std::Drop", "{p}");
        }
        assert_eq!(canon("std::sync::Arc::new"), "std::Arc::new");
        assert_eq!(canon("alloc::sync::Arc"), "std::Arc");
        assert_eq!(canon("core::mem::drop"), "std::mem::drop");
        assert_eq!(canon("std::io::Result"), "std::Result");
        assert_eq!(
            canon("cudarc::driver::safe::CudaStream"),
            "cudarc::driver::CudaStream"
        );
        assert_eq!(canon("mycrate::ops::Drop"), "mycrate::ops::Drop");
        assert_eq!(canon("spin::mutex::MutexGuard"), "spin::MutexGuard");
        assert_eq!(
            canon("parking_lot::RwLockReadGuard::map"),
            "parking_lot::RwLockReadGuard::map"
        );
        // Canonical paths are fixed points.
        for p in ["std::Drop", "std::Arc::new", "std::mem::drop"] {
            assert_eq!(canon(p), p);
        }
    }
}
