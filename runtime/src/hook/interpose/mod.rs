//! The interposer: the hook without CUPTI. Every hooked or watched driver call a program makes
//! through its import slots, `dlsym` or `cuGetProcAddress` is sent to a wrapper with the call's
//! signature (`wrappers.rs`), which runs the CUPTI callback's check around the call of what the
//! slot or lookup held before. CUPTI attached costs every driver call of the process (about
//! 35 ns a launch on the H200, measured in `docs/gpu.md`); a wrapper costs a call outside every
//! scope one thread-local read.
//!
//! What it rewrites (`patch.rs`), at install and after every `dlopen` through a patched object:
//! - the import slots (`elf.rs`) naming a hooked call in every loaded object but the driver, the
//!   loader and the C library, each with the wrapper that calls what the slot held (so another
//!   interposer, such as a preloaded shim, keeps its calls);
//! - `dlopen` in those objects, so that what they load is patched before it is returned
//!   (`dlopen.rs`: asked as the caller would);
//! - in the object nosync is linked into, `dlsym` and `dlvsym`: a hooked name they find (cudarc's
//!   `dynamic-loading` resolves each entry point at its first call) is answered with a wrapper
//!   (`lookup.rs`). They are taken over there only: their answer to `RTLD_NEXT` depends on the
//!   caller's object;
//! - `cuGetProcAddress`(`_v2`) wherever it is imported or looked up: the address it returns for a
//!   hooked call is swapped for a wrapper, a "not found" answer is passed on untouched.
//!
//! An install is all or nothing: until the driver has started, every rewrite is journaled, and a
//! failure puts every slot back. Each page keeps the protection it had (`protect.rs`). What it
//! cannot see, and what it left alone, is in [`super::Coverage`], and said once on stderr where
//! it matters. [`super::Backend::Auto`] chooses it only before the driver is initialized: an
//! entry point resolved before the install is not seen. Slots, once rewritten, stay so;
//! uninstalled, the wrappers call straight through.

mod dlopen;
mod elf;
mod lookup;
mod names;
mod patch;
mod protect;
mod search;
mod slot;
pub(super) mod wrappers;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use wrappers::Entry;

/// Whether the interposer was first installed before the driver was initialized: then every
/// lookup of a driver function since went through it, and a later install sees every call.
static FROM_THE_START: AtomicBool = AtomicBool::new(false);

/// What the install found.
#[derive(Debug)]
pub(super) struct Installed {
    /// The entries whose function is known (the driver, or an object, has it).
    pub(super) resolved: Vec<&'static Entry>,
    /// Import slots rewritten in this install.
    pub(super) slots: usize,
}

/// Why the interposer cannot serve here.
pub(super) fn unsupported() -> Option<&'static str> {
    if !cfg!(all(
        target_os = "linux",
        target_env = "gnu",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )) {
        return Some(
            "the interposer rewrites ELF import slots through glibc's loader: Linux (glibc) on x86-64 or AArch64 only",
        );
    }
    None
}

/// Whether an install now sees every call: the interposer was installed before the driver was
/// initialized (now or earlier in the process).
pub(super) fn complete(initialized: bool) -> bool {
    !initialized || FROM_THE_START.load(Relaxed)
}

/// Finds the real functions in `driver` (once) and rewrites the slots of every loaded object;
/// the wrappers stay off until [`commit`]. An error here has written nothing; after a success,
/// [`abort`] puts every slot back.
pub(super) fn install(
    driver: &libloading::Library,
    initialized: bool,
) -> Result<Installed, String> {
    if let Some(why) = unsupported() {
        return Err(why.to_owned());
    }
    if !complete(initialized) {
        return Err(String::from(
            "the driver was initialized before the install, and driver functions looked up since would go unseen: install before the first CUDA call, or use Backend::Cupti",
        ));
    }
    let names = names::init(driver, hooks())?;
    let slots = patch::begin(names);
    if !patch::holds_hook(names, b"dlsym", names::Loader::Dlsym.hook()) {
        patch::abort();
        return Err(String::from(
            "nosync's `dlsym` import slot could not be rewritten (Hook::coverage() says why): what cudarc loads at run time would go unseen",
        ));
    }
    let resolved = wrappers::ALL
        .iter()
        .copied()
        .filter(|e| e.targets.claimed())
        .collect();
    Ok(Installed { resolved, slots })
}

/// The entries `names.rs` hands out for the loader's functions and `cuGetProcAddress`.
fn hooks() -> names::Hooks {
    names::Hooks {
        loaders: [
            lookup::dlsym_entry as *const () as usize,
            lookup::dlvsym_entry as *const () as usize,
            dlopen::dlopen_entry as *const () as usize,
            dlopen::dlmopen_entry as *const () as usize,
        ],
        get_proc: &lookup::GET_PROC,
    }
}

/// The install is complete (the driver started): the wrappers check from now on.
pub(super) fn commit(initialized: bool) {
    patch::commit();
    if !initialized {
        FROM_THE_START.store(true, Relaxed);
    }
    wrappers::ACTIVE.store(true, Relaxed);
    patch::tell_once();
}

/// The install failed after [`install`]: every slot it wrote is put back, no wrapper checks.
pub(super) fn abort() {
    wrappers::ACTIVE.store(false, Relaxed);
    patch::abort();
}

/// The last hook of this backend is gone: the wrappers call straight through.
pub(super) fn uninstall() {
    wrappers::ACTIVE.store(false, Relaxed);
}

/// A capture or `capture_safe` scope began (`true`) or the last one ended.
pub(super) fn watch(on: bool) {
    wrappers::WATCHING.store(on, Relaxed);
}

/// The hooked rows whose function the interposer knows now.
pub(super) fn hooked() -> Vec<&'static super::Hooked> {
    let known = |row: &super::Hooked| {
        let mut entries = wrappers::ALL.iter();
        entries.any(|e| e.domain == row.domain && e.cbid == row.cbid && e.targets.claimed())
    };
    super::HOOKED.iter().filter(|row| known(row)).collect()
}

/// What the interposer sees now.
pub(super) fn coverage() -> super::common::coverage::Coverage {
    let skipped = patch::skipped();
    let objects = patch::state()
        .as_ref()
        .map(|s| s.objects.clone())
        .unwrap_or_default();
    super::common::coverage::Coverage {
        backend: super::common::Backend::Interpose,
        objects,
        skipped,
        unseen: super::common::coverage::INTERPOSER_UNSEEN.to_vec(),
    }
}

#[cfg(test)]
mod tests;
