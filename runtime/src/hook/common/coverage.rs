//! What the installed hook sees, and what it does not: for the interposer, the objects whose
//! import slots it rewrote, the slots and lookups it left alone and why, and the calls no slot
//! reaches. `Hook::coverage()` returns it; its `Display` is what a user reads.

use std::fmt;

use super::Backend;

/// What the installed hook sees, and what it does not.
#[derive(Debug, Clone)]
pub struct Coverage {
    pub(in crate::hook) backend: Backend,
    pub(in crate::hook) objects: Vec<PatchedObject>,
    pub(in crate::hook) skipped: Vec<Skipped>,
    pub(in crate::hook) unseen: Vec<&'static str>,
}

/// An object whose import slots the interposer looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PatchedObject {
    /// Its path as the loader has it (empty for the program).
    pub name: String,
    /// How many of its slots now call a wrapper (written by the last pass over it).
    pub slots: usize,
}

/// A slot, an object or a lookup the interposer left alone: calls through it are not seen.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// The object's path (`(lookup)` for a `dlsym` or `cuGetProcAddress` answer).
    pub object: String,
    /// The symbol the slot or lookup names (`*` for the whole object).
    pub symbol: String,
    /// Why.
    pub reason: String,
}

/// What the interposer cannot see at all, whatever the process does.
pub(in crate::hook) const INTERPOSER_UNSEEN: [&str; 3] = [
    "driver functions looked up before the install (by cudarc, the CUDA runtime or any library), or by another object than nosync's in the global scope (dlsym with RTLD_DEFAULT or RTLD_NEXT): NOSYNC_HOOK=cupti sees their calls",
    "calls an object's constructors make while dlopen is loading it, before it is patched",
    "objects loaded into another link-map namespace (dlmopen)",
];

impl Coverage {
    /// How the hook sees the calls.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The objects whose slots the interposer looked at (none for CUPTI, which needs no slot).
    pub fn objects(&self) -> &[PatchedObject] {
        &self.objects
    }

    /// What the interposer left alone, and why.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// What this backend cannot see, in sentences.
    pub fn unseen(&self) -> &[&'static str] {
        &self.unseen
    }

    /// How many import slots call a wrapper.
    pub fn slots(&self) -> usize {
        self.objects.iter().map(|o| o.slots).sum()
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.backend {
            Backend::Interpose => writeln!(
                f,
                "hook: the interposer, {} import slots rewritten in {} objects",
                self.slots(),
                self.objects.iter().filter(|o| o.slots > 0).count()
            )?,
            _ => writeln!(
                f,
                "hook: CUPTI's callbacks, every driver and runtime call of the process"
            )?,
        }
        for o in self.objects.iter().filter(|o| o.slots > 0) {
            let name = if o.name.is_empty() {
                "the program"
            } else {
                &o.name
            };
            writeln!(f, "  patched: {name} ({} slots)", o.slots)?;
        }
        for s in &self.skipped {
            let object = if s.object.is_empty() {
                "the program"
            } else {
                &s.object
            };
            writeln!(f, "  left alone: `{}` in {object}: {}", s.symbol, s.reason)?;
        }
        for u in &self.unseen {
            writeln!(f, "  not seen: {u}")?;
        }
        Ok(())
    }
}
