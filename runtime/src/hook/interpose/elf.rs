//! The import slots of the loaded ELF objects: where an object keeps the address of a function it
//! calls in another library (its GOT entries, filled by the dynamic loader). Rewriting a slot
//! sends every later call of that object through another function; this is how the interposer
//! puts its wrappers between a program and the driver without CUPTI.
//!
//! The objects come from `dl_iterate_phdr`; each object's dynamic section names its symbol and
//! string tables and its relocations (`DT_RELA`, `DT_JMPREL`). A slot is a `JUMP_SLOT`,
//! `GLOB_DAT` or absolute 64-bit relocation of a named symbol. Slots in the read-only-after-load
//! region (`PT_GNU_RELRO`) are made writable for the one aligned store, then read-only again; a
//! store of one pointer-sized word is atomic on the supported targets, so a thread calling through
//! the slot meanwhile sees the old or the new address.

use std::collections::HashSet;
use std::ffi::{CStr, c_int, c_void};

/// One loaded object: its load base, its program headers and its name.
#[derive(Debug, Clone)]
pub(super) struct Object {
    /// `dlpi_addr`: what the object's virtual addresses are offset by.
    pub(super) base: usize,
    /// The path the loader opened, empty for the main program.
    pub(super) name: String,
    phdrs: &'static [libc::Elf64_Phdr],
}

/// Every object loaded now, in the loader's order (the program first).
pub(super) fn objects() -> Vec<Object> {
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: `dl_iterate_phdr` passes a valid `info` for the duration of this call, and
        // `data` is the `Vec<Object>` handed to it below.
        let (info, out) = unsafe { (&*info, &mut *data.cast::<Vec<Object>>()) };
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // SAFETY: the loader's NUL-terminated name of a loaded object.
            unsafe { CStr::from_ptr(info.dlpi_name) }
                .to_string_lossy()
                .into_owned()
        };
        let phdrs = if info.dlpi_phdr.is_null() {
            &[][..]
        } else {
            // SAFETY: `dlpi_phnum` headers at `dlpi_phdr`, mapped while the object is loaded.
            // The interposer reads them in the same pass (an install, or a `dlopen` that just
            // returned); an object another thread `dlclose`s during that pass is the one case
            // this does not guard against (the loader's lock is held only inside this callback).
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
        };
        out.push(Object {
            base: info.dlpi_addr as usize,
            name,
            phdrs,
        });
        0
    }
    let mut out: Vec<Object> = Vec::new();
    // SAFETY: `each` matches the callback type and only reads what the loader passes.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut out).cast()) };
    out
}

/// The object that holds `addr` (a function of this crate: the object nosync is linked into).
pub(super) fn object_of(addr: usize) -> Option<Object> {
    objects().into_iter().find(|o| {
        o.phdrs.iter().any(|p| {
            let start = o.base + p.p_vaddr as usize;
            p.p_type == libc::PT_LOAD && (start..start + p.p_memsz as usize).contains(&addr)
        })
    })
}

/// A named import slot of an object.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    /// Where the address is kept.
    pub(super) at: *mut usize,
    /// The symbol's name (in the object's string table, mapped while it is loaded).
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

/// The named import slots of `object` (none when it has no dynamic section).
pub(super) fn slots(object: &Object) -> Vec<Slot> {
    let Some(dynamic) = object.phdrs.iter().find(|p| p.p_type == libc::PT_DYNAMIC) else {
        return Vec::new();
    };
    let mut table = [0u64; 24];
    let mut entry = (object.base + dynamic.p_vaddr as usize) as *const Dyn;
    // SAFETY: the dynamic section of a loaded object, an array ended by `DT_NULL`.
    unsafe {
        while (*entry).tag != DT_NULL {
            if let Ok(i) = usize::try_from((*entry).tag)
                && i < table.len()
            {
                table[i] = (*entry).val;
            }
            entry = entry.add(1);
        }
    }
    // glibc stores the tables' addresses relocated, other loaders as offsets from the base.
    let at = |v: u64| {
        let v = v as usize;
        if v != 0 && v < object.base {
            v + object.base
        } else {
            v
        }
    };
    let (strtab, symtab) = (at(table[DT_STRTAB as usize]), at(table[DT_SYMTAB as usize]));
    if strtab == 0 || symtab == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (rela, size) in [(DT_RELA, DT_RELASZ), (DT_JMPREL, DT_PLTRELSZ)] {
        let (start, bytes) = (at(table[rela as usize]), table[size as usize] as usize);
        if start == 0 {
            continue;
        }
        let count = bytes / size_of::<Rela>();
        // SAFETY: the object's relocation table, `count` entries, mapped while it is loaded.
        let relas = unsafe { std::slice::from_raw_parts(start as *const Rela, count) };
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
            let slot = (object.base + r.offset as usize) as *mut usize;
            out.push(Slot { at: slot, name });
        }
    }
    out
}

/// Stores `value` into `slot`, making its page writable for the store if it is not; whether it
/// was stored. A page in the object's `PT_GNU_RELRO` region is made read-only again.
///
/// # Safety
/// `slot` is an import slot of `object` (from [`slots`]) and `value` the address of a function
/// with the signature of the symbol the slot names.
pub(super) unsafe fn store(object: &Object, slot: *mut usize, value: usize) -> bool {
    let page = page_size();
    let start = (slot as usize) & !(page - 1);
    let relro = object.phdrs.iter().any(|p| {
        let from = object.base + p.p_vaddr as usize;
        p.p_type == libc::PT_GNU_RELRO
            && (from..from + p.p_memsz as usize).contains(&(slot as usize))
    });
    // SAFETY: `start` is the page of a slot of a loaded object; adding write access to a mapped
    // data page changes no byte of it.
    let writable = unsafe {
        libc::mprotect(
            start as *mut c_void,
            page,
            libc::PROT_READ | libc::PROT_WRITE,
        ) == 0
    };
    if !writable {
        return false;
    }
    // SAFETY: an aligned, pointer-sized slot (the loader writes it the same way); atomic, so a
    // concurrent call through the slot reads the old or the new address.
    unsafe {
        (*slot.cast::<std::sync::atomic::AtomicUsize>())
            .store(value, std::sync::atomic::Ordering::SeqCst)
    };
    if relro {
        // SAFETY: as above; the page goes back to what the loader left it.
        unsafe { libc::mprotect(start as *mut c_void, page, libc::PROT_READ) };
    }
    true
}

/// Reads a slot.
///
/// # Safety
/// `slot` is an import slot of a loaded object.
pub(super) unsafe fn load(slot: *mut usize) -> usize {
    // SAFETY: an aligned, pointer-sized, mapped slot (this fn's contract).
    unsafe {
        (*slot.cast::<std::sync::atomic::AtomicUsize>()).load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn page_size() -> usize {
    // SAFETY: `sysconf` has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|s| s.is_power_of_two())
        .unwrap_or(4096)
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

/// The CUDA runtime's own library.
pub(super) fn is_cuda_runtime(name: &str) -> bool {
    file_starts_with(name, &["libcudart.so"])
}

/// Whether the file name of the object at `path` begins with one of `prefixes`.
fn file_starts_with(path: &str, prefixes: &[&str]) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    prefixes.iter().any(|p| file.starts_with(p))
}

/// The objects patched so far, by base, so a later pass (after a `dlopen`) visits only new ones.
pub(super) type Seen = HashSet<usize>;
