//! The built-in sinks: the models ([`super::models`]) of functions of crates the lint does
//! not parse (cudarc, std), by canonical path (see [`super::cudarc`] for the canonical form
//! and cudarc's types). Models of functions of analysed crates (candle's `to_device`) are
//! applied to those functions once they are resolved (`resolve::models`).

use super::models::{Model, shipped};
pub use crate::diagnostics::SinkKind;

/// Whether `m` models a function of a crate the lint does not parse: it becomes a built-in
/// node (std's `Vec::try_from` among them, modelled for its cudarc argument). A `detached`
/// model is no sink: it applies to a function of an analysed crate only.
pub fn is_builtin(m: &Model) -> bool {
    let krate = m.krate();
    !m.detached && (krate == "cudarc" || super::std::is_std_crate(krate))
}

/// The shipped built-in sinks, in the file's order.
pub fn builtins() -> impl Iterator<Item = &'static Model> {
    shipped().0.models.iter().filter(|m| is_builtin(m))
}

/// Method names distinctive enough to be matched by name alone on an unknown receiver.
pub const NAME_ONLY_OK: &[&str] = &[
    "synchronize",
    "clone_dtoh",
    "memcpy_dtov",
    "memcpy_dtoh",
    "elapsed_ms",
    "load_module",
];
