//! The objects the dynamic loader has loaded, each read while the loader holds its lock
//! (`dl_iterate_phdr`): nothing can unload an object during the visit, so its mapped sections
//! may be read there. The interposer lists them to find import slots; the stack walk, to read
//! their unwind tables.

// With `--cfg nosync_off` nothing walks a stack; the interposer still lists objects.
#![cfg_attr(nosync_off, allow(dead_code))]

use std::ffi::{CStr, c_int, c_void};

/// One loaded object, valid during the visit.
pub(in crate::hook) struct Loaded<'a> {
    /// `dlpi_addr`: what the object's virtual addresses are offset by.
    pub base: usize,
    /// The path the loader opened, empty for the main program.
    pub name: &'a CStr,
    /// Its program headers, the loader's own.
    pub phdrs: &'a [libc::Elf64_Phdr],
}

/// The loader's counters of objects added and removed so far in the process (`dlpi_adds`,
/// `dlpi_subs`): a change means the set of objects changed; in `subs`, that one was unloaded
/// and a later one may be loaded at its address.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(in crate::hook) struct Counters {
    pub adds: u64,
    pub subs: u64,
}

/// glibc's `struct dl_phdr_info`, with the two counters (the `libc` crate leaves them out);
/// the loader says by the size it passes how much of it is there.
#[repr(C)]
struct PhdrInfo {
    addr: usize,
    name: *const libc::c_char,
    phdr: *const libc::Elf64_Phdr,
    phnum: u16,
    adds: u64,
    subs: u64,
}

/// Visits every loaded object, in the loader's order (the program first), while the loader
/// holds its lock; returns the loader's counters. `visit` returns `false` to stop.
pub(in crate::hook) fn each(mut visit: impl FnMut(&Loaded<'_>) -> bool) -> Counters {
    struct Walk<'v> {
        visit: &'v mut dyn FnMut(&Loaded<'_>) -> bool,
        counters: Counters,
    }
    unsafe extern "C" fn one(
        info: *mut libc::dl_phdr_info,
        size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `dl_iterate_phdr` passes a valid `info` of `size` bytes for the duration of
        // this call, and `data` is the `Walk` handed to it below.
        let (info, walk) = unsafe { (&*info.cast::<PhdrInfo>(), &mut *data.cast::<Walk<'_>>()) };
        if size >= size_of::<PhdrInfo>() {
            walk.counters = Counters {
                adds: info.adds,
                subs: info.subs,
            };
        }
        let name = if info.name.is_null() {
            c""
        } else {
            // SAFETY: the loader's NUL-terminated name of a loaded object, alive during the visit.
            unsafe { CStr::from_ptr(info.name) }
        };
        let phdrs = if info.phdr.is_null() {
            &[][..]
        } else {
            // SAFETY: `phnum` headers at `phdr`, mapped while the loader holds its lock.
            unsafe { std::slice::from_raw_parts(info.phdr, usize::from(info.phnum)) }
        };
        let base = info.addr;
        c_int::from(!(walk.visit)(&Loaded { base, name, phdrs }))
    }
    let mut walk = Walk {
        visit: &mut visit,
        counters: Counters::default(),
    };
    // SAFETY: `one` matches the callback type and only reads what the loader passes.
    unsafe { libc::dl_iterate_phdr(Some(one), (&raw mut walk).cast()) };
    walk.counters
}

/// The loader's counters alone: one visit, of the program.
pub(in crate::hook) fn counters() -> Counters {
    each(|_| false)
}

impl Loaded<'_> {
    /// Its loaded segments (`PT_LOAD`).
    pub(in crate::hook) fn loads(&self) -> impl Iterator<Item = &libc::Elf64_Phdr> + Clone {
        self.phdrs.iter().filter(|p| p.p_type == libc::PT_LOAD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_comes_first_with_its_segments_and_the_counters_count_it() {
        let mut seen = Vec::new();
        let after = each(|o| {
            seen.push((o.name.to_bytes().is_empty(), o.loads().count()));
            true
        });
        assert!(seen.len() >= 2, "{seen:?}");
        assert!(seen[0].0 && seen[0].1 > 0, "{seen:?}");
        assert!(after.adds >= seen.len() as u64, "{after:?} {seen:?}");
        assert_eq!(counters(), after);
    }
}
