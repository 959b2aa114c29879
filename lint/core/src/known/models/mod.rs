//! Models of the libraries GPU code is built on: which of their calls make the host wait, why,
//! and for calls that wait only for some arguments, how to tell from the call site (candle's
//! `Tensor::to_device` waits toward the CPU only; cudarc's `memcpy_dtoh` into pageable memory
//! only). The shipped models are a data file, `models.toml` (its format: `docs/models.md`),
//! read and validated once ([`shipped`]); users add models in the configuration's `models`,
//! read by the same reader ([`read_entries`]) with the same located errors.
//!
//! A model names a function by its canonical path ([`super::canonical`]). A function of a
//! crate the lint does not parse (cudarc, std) becomes a built-in sink; a function of an
//! analysed crate (candle's `to_device`) keeps its body, and each call of it is decided at
//! the call site by the model's [`When`].

mod read;
pub mod setters;

pub use read::{ReadError, read_entries, read_file};

use crate::diagnostics::SinkKind;
use cargo_metadata::semver::{Version, VersionReq};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// The shipped models' text.
pub const SHIPPED: &str = include_str!("../models.toml");

/// A models file: the libraries it was checked against, its models, its flags and its
/// derives.
#[derive(Debug, Clone, Default)]
pub struct Models {
    pub libraries: Vec<Library>,
    pub models: Vec<Model>,
    pub flags: Vec<Flag>,
    pub derives: Vec<Derive>,
    pub variants: Vec<Variant>,
}

/// A trait method of a library whose impl for one type always returns one variant of an enum
/// (candle's `impl TensorOrScalar for &Tensor` returns `TensorScalar::Tensor`): where the
/// callees of a `match`'s scrutinee (`match rhs.to_tensor_scalar()? { .. }`) are only such
/// impls, the arms of the enum's other variants cannot run and are not walked.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The trait method's canonical path (`candle_core::scalar::TensorOrScalar::to_tensor_scalar`).
    pub path: String,
    /// The impl's self type by path (`candle_core::Tensor`)...
    pub for_ty: String,
    /// ...and whether the impl is for a reference to it (`&candle_core::Tensor`).
    pub for_ref: bool,
    /// The variant it returns (`candle_core::scalar::TensorScalar::Tensor`), in `Ok(..)` or not.
    pub returns: String,
    /// The versions of the path's crate it holds for (every version when `None`).
    pub versions: Option<VersionReq>,
    pub reason: String,
    /// Where the test finds the evidence: the impl (`TensorOrScalar for &Tensor`) and the
    /// body's return.
    pub source: Option<Source>,
    pub span: Range<usize>,
}

impl Variant {
    /// The crate the path names (`candle_core`).
    pub fn krate(&self) -> &str {
        crate_of(&self.path)
    }

    /// Whether the fact holds for version `v` of its crate (an unknown version: yes).
    pub fn holds_for(&self, v: Option<&Version>) -> bool {
        holds(self.versions.as_ref(), v)
    }
}

/// What a derive macro writes that calls need (the lint never expands a proc macro): a
/// constructor, `T::new(..) -> T` (derive-new's `#[derive(new)]`, burn's
/// `#[derive(Config)]`). A derive named like a trait of an analysed crate implements that
/// trait without a model (`resolve::derives`).
#[derive(Debug, Clone)]
pub struct Derive {
    /// The derive as a type's `#[derive(..)]` resolves it: the macro's canonical path
    /// (`derive_new::new`), or, for a derive named like the trait it implements, the
    /// trait's (`burn_core::config::Config`). A derive path that resolves to nothing (a
    /// `#[macro_use]` import) is matched by its last segment.
    pub path: String,
    /// The constructor it writes: `fn <name>(..) -> Self`.
    pub constructor: String,
    /// The field attribute whose `default = ..` the constructor writes into the field
    /// (burn's `#[config(default = ..)]`): the value it makes is known to hold those.
    pub defaults: Option<String>,
    pub reason: String,
    /// Where the test finds the evidence: the library (the macro's crate) and the
    /// function that writes the constructor.
    pub source: Option<Source>,
    pub span: Range<usize>,
}

/// A library's process-wide switch: a `static` `AtomicBool` that some of its functions
/// branch on (`if FLAG.load(..) { .. } else { .. }`) and that only its setters change. While
/// no analysed crate names a setter, the flag keeps its default, and the arm of such a
/// branch that the default does not take is not followed (candle's `FORCE_DMMV`, whose
/// host-side dequantization waits for the GPU).
#[derive(Debug, Clone)]
pub struct Flag {
    /// The static's canonical path (`candle_core::quantized::cuda::FORCE_DMMV`).
    pub path: String,
    /// Its value until a setter is called.
    pub default: bool,
    /// The functions that change it, by canonical path.
    pub set_by: Vec<String>,
    /// The versions of the path's crate it holds for (every version when `None`).
    pub versions: Option<VersionReq>,
    /// What the branches on it choose between.
    pub reason: String,
    /// Where the entry's path is written in its file.
    pub span: Range<usize>,
}

impl Flag {
    /// The crate the path names (`candle_core`).
    pub fn krate(&self) -> &str {
        crate_of(&self.path)
    }

    /// Whether the flag holds for version `v` of its crate (an unknown version: yes).
    pub fn holds_for(&self, v: Option<&Version>) -> bool {
        holds(self.versions.as_ref(), v)
    }

    /// The setters' names (their paths' last segments), which the analysed code is searched for.
    pub fn setter_names(&self) -> impl Iterator<Item = &str> {
        self.set_by
            .iter()
            .map(|p| p.rsplit("::").next().unwrap_or_default())
    }
}

/// A library the models describe, and the versions whose sources they were read in.
#[derive(Debug, Clone)]
pub struct Library {
    /// The package name (`candle-core`).
    pub name: String,
    pub checked: Vec<Version>,
}

/// One model: a function that waits, always or for some arguments, or one that runs the
/// closures handed to it later on another thread.
#[derive(Debug, Clone)]
pub struct Model {
    /// The function's canonical path (`cudarc::driver::CudaStream::synchronize`), or
    /// `Type::drop` for a type whose `Drop` waits.
    pub path: String,
    /// For a function that waits: how (`kind = "blocks" | "may" | "setup"`).
    pub kind: SinkKind,
    /// `kind = "detached"`: the function hands the closures (and fn items) it is given to
    /// another thread and returns without waiting for them (cubecl's
    /// `DeviceHandle::submit`, like `std::thread::spawn`): their calls are not the
    /// caller's. Such a model is no sink.
    pub detached: bool,
    /// Why it waits (or, detached, where the closures run).
    pub reason: String,
    /// The versions of the path's crate the model holds for (every version when `None`).
    pub versions: Option<VersionReq>,
    /// `path` is `Type::drop`: reached where a value of the type is dropped.
    pub on_drop: bool,
    /// `follow = true` (a `may` model of a function of an analysed crate): a call goes on
    /// into the function's body, and each blocking call the body reaches is a possible
    /// finding, with `reason` as its note. Without it the function is the sink.
    pub follow: bool,
    /// When only some calls wait; `None`: every call.
    pub when: Option<Arc<When>>,
    /// Where the test finds the evidence in the library's source (shipped models only).
    pub source: Option<Source>,
    /// Where the entry's path is written in its file.
    pub span: Range<usize>,
}

/// Which calls of a modelled function wait, decided from one argument at the call site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct When {
    /// The argument, 0-based, not counting `self`.
    pub arg: usize,
    /// The call waits when the argument matches one of these...
    pub blocks: Vec<Matcher>,
    /// ...and never when it matches one of these.
    pub never: Vec<Matcher>,
    /// An argument neither decides: a `possible` finding, or no wait.
    pub otherwise: Otherwise,
    /// The note of a `possible` finding.
    pub note: String,
}

/// What an argument that no matcher decides means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Otherwise {
    /// The call may wait: the finding is `possible-sync-in-no-sync`, with the note.
    Possible,
    /// The call does not wait.
    Clean,
}

/// A fact about an argument, seen at the call site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher {
    /// Host memory the driver must stage: a `Vec`, slice or array.
    Pageable,
    /// Page-locked or device memory: cudarc's `PinnedHostSlice` (and cudarc's other types).
    Pinned,
    /// A value of this type (canonical path), behind references.
    Type(String),
    /// This value: a unit variant or constant by its path (`candle_core::Device::Cpu`),
    /// written at the call (behind `&` and parentheses).
    Value(String),
    /// What a call of this method returns (`x.device()`), on any receiver, without arguments.
    Method(String),
}

/// Where the evidence of a model is in its library's source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Source {
    /// The package whose source holds it, when not the path's crate (`std::Vec::try_from`
    /// is cudarc's `impl TryFrom<CudaSlice<T>> for Vec<T>`).
    pub library: Option<String>,
    /// `Trait for Type`: the impl block the function is in, when not the path's type.
    pub impl_: Option<String>,
    /// The function's name, when not the path's last segment.
    pub fn_: Option<String>,
    /// Code the function's body contains (whitespace aside): what makes it wait.
    pub has: Vec<String>,
}

impl Model {
    /// The crate the path names (`cudarc`, `candle_core`, `std`).
    pub fn krate(&self) -> &str {
        crate_of(&self.path)
    }

    /// Whether the model holds for version `v` of its crate (an unknown version: yes).
    pub fn holds_for(&self, v: Option<&Version>) -> bool {
        holds(self.versions.as_ref(), v)
    }
}

/// The crate a model path names: its first segment.
fn crate_of(path: &str) -> &str {
    path.split("::").next().unwrap_or_default()
}

/// Whether a fact for the versions `req` holds for version `v` (no bound, or an unknown
/// version: yes).
fn holds(req: Option<&VersionReq>, v: Option<&Version>) -> bool {
    match (req, v) {
        (Some(req), Some(v)) => req.matches(v),
        _ => true,
    }
}

/// The shipped models, read once; a problem in them is a located error in `models.toml`
/// (the `shipped_models_are_valid` test keeps the list empty).
pub fn shipped() -> &'static (Models, Vec<ReadError>) {
    static SHIPPED_MODELS: OnceLock<(Models, Vec<ReadError>)> = OnceLock::new();
    SHIPPED_MODELS.get_or_init(|| read_file(SHIPPED))
}

/// Whether package `package` (`candle-core`) is crate `krate` (`candle_core`).
pub fn is_package(krate: &str, package: &str) -> bool {
    krate.len() == package.len()
        && krate
            .bytes()
            .zip(package.bytes())
            .all(|(a, b)| a == b || (a == b'_' && b == b'-'))
}

#[cfg(test)]
mod tests;
