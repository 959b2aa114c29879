//! The import slots of the loaded ELF objects: where an object keeps the address of a function it
//! calls in another library (its GOT entries, filled by the dynamic loader). Rewriting a slot
//! sends every later call of that object through another function; this is how the interposer
//! puts its wrappers between a program and the driver without CUPTI.
//!
//! The objects come from `dl_iterate_phdr`; each object's dynamic section names its symbol and
//! string tables and its relocations (`DT_RELA`, `DT_JMPREL`). A slot is a `JUMP_SLOT`,
//! `GLOB_DAT` or absolute 64-bit relocation of a named symbol. The loader's own copy of the
//! program headers is read only under its lock (`dl_iterate_phdr`); an object's tables only
//! while the caller holds a reference to it, so that no `dlclose` unmaps them meanwhile.

use std::ffi::CStr;

use crate::hook::check::loaded;

/// One loaded object: its load base, its program headers and its name.
#[derive(Debug, Clone)]
pub(super) struct Object {
    /// `dlpi_addr`: what the object's virtual addresses are offset by.
    pub(super) base: usize,
    /// The path the loader opened, empty for the main program.
    pub(super) name: String,
    /// A copy of its program headers: the loader's are read only while it holds its lock.
    phdrs: Vec<libc::Elf64_Phdr>,
}

/// The loaded objects, in the loader's order (the program first), and the loader's counter of
/// objects removed so far in the process.
#[derive(Debug, Default)]
pub(super) struct Census {
    pub(super) objects: Vec<Object>,
    /// `dlpi_subs`: a change means an object was unloaded, and a later one may have been
    /// loaded at its address.
    pub(super) subs: u64,
}

/// Every object loaded now, copied while the loader holds its lock.
pub(super) fn census() -> Census {
    let mut objects = Vec::new();
    let counters = loaded::each(|o| {
        objects.push(Object {
            base: o.base,
            name: o.name.to_string_lossy().into_owned(),
            phdrs: o.phdrs.to_vec(),
        });
        true
    });
    Census {
        objects,
        subs: counters.subs,
    }
}

impl Object {
    /// Whether `addr` lies in one of the object's loaded segments.
    pub(super) fn contains(&self, addr: usize) -> bool {
        self.phdrs.iter().any(|p| {
            let start = self.base.wrapping_add(p.p_vaddr as usize);
            p.p_type == libc::PT_LOAD && (start..start + p.p_memsz as usize).contains(&addr)
        })
    }
}

impl Object {
    /// The first and one past the last byte of its loaded segments.
    pub(super) fn span(&self) -> (usize, usize) {
        let loads = self.phdrs.iter().filter(|p| p.p_type == libc::PT_LOAD);
        let ends = loads.map(|p| {
            let start = self.base.wrapping_add(p.p_vaddr as usize);
            (start, start + p.p_memsz as usize)
        });
        ends.fold((usize::MAX, 0), |(lo, hi), (s, e)| (lo.min(s), hi.max(e)))
    }
}

/// The object that holds `addr` (a function of this crate: the object nosync is linked into).
pub(super) fn object_of(addr: usize) -> Option<Object> {
    census().objects.into_iter().find(|o| o.contains(addr))
}

/// A named import slot of an object.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    /// Where the address is kept.
    pub(super) at: *mut usize,
    /// The symbol's name (in the object's string table, valid while it is loaded).
    pub(super) name: &'static CStr,
}

const DT_NULL: i64 = 0;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_PLTRELSZ: i64 = 2;
const DT_JMPREL: i64 = 23;

/// The relocation types that hold a function's address: jump slot, global data, absolute.
#[cfg(target_arch = "x86_64")]
const SLOT_TYPES: [u32; 3] = [7, 6, 1];
#[cfg(target_arch = "aarch64")]
const SLOT_TYPES: [u32; 3] = [1026, 1025, 257];

#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

#[repr(C)]
struct Rela {
    offset: u64,
    info: u64,
    addend: i64,
}

#[repr(C)]
struct Sym {
    name: u32,
    info: u8,
    other: u8,
    shndx: u16,
    value: u64,
    size: u64,
}

/// The object's dynamic section as a table by tag (tags below 32), with addresses made
/// absolute; `None` without one.
///
/// # Safety
/// The object stays loaded during the call.
unsafe fn dynamic(object: &Object) -> Option<[usize; 32]> {
    let dynamic = object.phdrs.iter().find(|p| p.p_type == libc::PT_DYNAMIC)?;
    let mut table = [0usize; 32];
    let mut entry = object.base.wrapping_add(dynamic.p_vaddr as usize) as *const Dyn;
    // SAFETY: the dynamic section of a loaded object (this fn's contract), ended by `DT_NULL`.
    unsafe {
        while (*entry).tag != DT_NULL {
            if let Ok(i) = usize::try_from((*entry).tag)
                && i < table.len()
            {
                table[i] = (*entry).val as usize;
            }
            entry = entry.add(1);
        }
    }
    // glibc stores the tables' addresses relocated, other loaders as offsets from the base.
    for tag in [DT_STRTAB, DT_SYMTAB, DT_RELA, DT_JMPREL] {
        let v = &mut table[tag as usize];
        if *v != 0 && *v < object.base {
            *v += object.base;
        }
    }
    Some(table)
}

/// The named import slots of `object` (none when it has no dynamic section).
///
/// # Safety
/// The object stays loaded while the slots are used (the caller holds a reference to it).
pub(super) unsafe fn slots(object: &Object) -> Vec<Slot> {
    // SAFETY: this fn's contract.
    let Some(table) = (unsafe { dynamic(object) }) else {
        return Vec::new();
    };
    let (strtab, symtab) = (table[DT_STRTAB as usize], table[DT_SYMTAB as usize]);
    if strtab == 0 || symtab == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (rela, size) in [(DT_RELA, DT_RELASZ), (DT_JMPREL, DT_PLTRELSZ)] {
        let (start, bytes) = (table[rela as usize], table[size as usize]);
        if start == 0 {
            continue;
        }
        // SAFETY: the object's relocation table, `bytes` long, mapped while it is loaded.
        let relas =
            unsafe { std::slice::from_raw_parts(start as *const Rela, bytes / size_of::<Rela>()) };
        for r in relas {
            let (sym, kind) = ((r.info >> 32) as usize, r.info as u32);
            if sym == 0 || !SLOT_TYPES.contains(&kind) || r.addend != 0 {
                continue;
            }
            // SAFETY: `sym` indexes the object's symbol table (the loader resolved it), whose
            // names are offsets into its string table; both are mapped while it is loaded.
            let name = unsafe {
                let s = &*(symtab as *const Sym).add(sym);
                CStr::from_ptr((strtab + s.name as usize) as *const libc::c_char)
            };
            let at = object.base.wrapping_add(r.offset as usize) as *mut usize;
            out.push(Slot { at, name });
        }
    }
    out
}

/// Objects the interposer leaves alone: the driver itself (its calls into itself are its own),
/// the loader, the C library, CUPTI and the kernel's vDSO.
pub(super) fn is_exempt(name: &str) -> bool {
    const EXEMPT: [&str; 9] = [
        "libcuda.so",
        "libcupti.so",
        "ld-linux",
        "ld-musl",
        "libc.so",
        "libdl.so",
        "libnvidia-",
        "linux-vdso",
        "linux-gate",
    ];
    file_starts_with(name, &EXEMPT)
}

/// The dynamic loader itself.
pub(super) fn is_loader(name: &str) -> bool {
    file_starts_with(name, &["ld-linux", "ld-musl", "ld64.so", "ld.so"])
}

/// Whether the file name of the object at `path` begins with one of `prefixes`.
fn file_starts_with(path: &str, prefixes: &[&str]) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    prefixes.iter().any(|p| file.starts_with(p))
}
