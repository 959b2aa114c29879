//! The import slots of the loaded objects, found by the test itself (`dl_iterate_phdr`, each
//! object's dynamic section and relocations), and the protection of every page of the process
//! (`/proc/self/maps`): what an install must leave as it was.

use std::collections::BTreeMap;
use std::ffi::{CStr, c_int, c_void};

/// A named slot: a `JUMP_SLOT`, `GLOB_DAT` or absolute 64-bit relocation without addend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Slot {
    pub(crate) object: String,
    pub(crate) symbol: String,
    pub(crate) addr: usize,
    /// The relocation type.
    pub(crate) kind: u32,
}

/// One loaded object: its base, name and program headers.
#[derive(Debug, Clone)]
pub(crate) struct Object {
    pub(crate) base: usize,
    pub(crate) name: String,
    pub(crate) phdrs: Vec<libc::Elf64_Phdr>,
}

/// Every loaded object.
pub(crate) fn objects() -> Vec<Object> {
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: the loader's `info` for this call; `data` is the `Vec` below.
        let (info, out) = unsafe { (&*info, &mut *data.cast::<Vec<Object>>()) };
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // SAFETY: a NUL-terminated name of a loaded object.
            unsafe { CStr::from_ptr(info.dlpi_name) }
                .to_string_lossy()
                .into_owned()
        };
        // SAFETY: `dlpi_phnum` headers, copied while the loader holds its lock.
        let phdrs =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        out.push(Object {
            base: info.dlpi_addr as usize,
            name,
            phdrs: phdrs.to_vec(),
        });
        0
    }
    let mut out: Vec<Object> = Vec::new();
    // SAFETY: `each` reads what the loader passes and writes `out`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut out).cast()) };
    out
}

#[cfg(target_arch = "x86_64")]
const TYPES: [u32; 3] = [7, 6, 1];
#[cfg(target_arch = "aarch64")]
const TYPES: [u32; 3] = [1026, 1025, 257];
/// The absolute 64-bit relocation (`R_X86_64_64`, `R_AARCH64_ABS64`).
pub(crate) const ABSOLUTE: u32 = TYPES[2];

/// The named slots of every loaded object whose name passes `keep`.
pub(crate) fn slots(keep: impl Fn(&str) -> bool) -> Vec<Slot> {
    let mut out = Vec::new();
    for o in objects().into_iter().filter(|o| keep(&o.name)) {
        out.extend(object_slots(&o));
    }
    out
}

fn object_slots(o: &Object) -> Vec<Slot> {
    let Some(dynamic) = o.phdrs.iter().find(|p| p.p_type == libc::PT_DYNAMIC) else {
        return Vec::new();
    };
    let mut tags = [0u64; 24];
    let mut at = (o.base + dynamic.p_vaddr as usize) as *const [u64; 2];
    // SAFETY: the object's dynamic section, ended by `DT_NULL`.
    unsafe {
        while (*at)[0] != 0 {
            if let Some(t) = tags.get_mut((*at)[0] as usize) {
                *t = (*at)[1];
            }
            at = at.add(1);
        }
    }
    let abs = |v: u64| {
        let v = v as usize;
        if v != 0 && v < o.base { v + o.base } else { v }
    };
    let (strtab, symtab) = (abs(tags[5]), abs(tags[6]));
    let mut out = Vec::new();
    for (table, size) in [(7, 8), (23, 2)] {
        let start = abs(tags[table]);
        if start == 0 || strtab == 0 || symtab == 0 {
            continue;
        }
        // SAFETY: the object's relocations, `size` bytes of 24-byte entries.
        let relas = unsafe {
            std::slice::from_raw_parts(start as *const [u64; 3], tags[size] as usize / 24)
        };
        for r in relas {
            let (sym, kind) = ((r[1] >> 32) as usize, r[1] as u32);
            if sym == 0 || !TYPES.contains(&kind) || r[2] != 0 {
                continue;
            }
            // SAFETY: a symbol of the object's table (24-byte entries, the name first).
            let symbol = unsafe {
                let name = *((symtab + sym * 24) as *const u32);
                CStr::from_ptr((strtab + name as usize) as *const libc::c_char)
            };
            out.push(Slot {
                object: o.name.clone(),
                symbol: symbol.to_string_lossy().into_owned(),
                addr: o.base + r[0] as usize,
                kind,
            });
        }
    }
    out
}

/// The value a slot holds.
pub(crate) fn value(slot: &Slot) -> usize {
    // SAFETY: a slot of a loaded object: aligned, mapped and readable.
    unsafe { std::ptr::read_volatile(slot.addr as *const usize) }
}

/// The `PT_GNU_RELRO` range of the loaded object whose file name ends with `file`.
pub(crate) fn relro(file: &str) -> Option<(usize, usize)> {
    let o = objects().into_iter().find(|o| o.name.ends_with(file))?;
    let p = o.phdrs.iter().find(|p| p.p_type == libc::PT_GNU_RELRO)?;
    let start = o.base + p.p_vaddr as usize;
    Some((start, start + p.p_memsz as usize))
}

/// The page size.
pub(crate) fn page() -> usize {
    // SAFETY: no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap()
}

/// The protection (`r-xp`) of every page of the mappings whose path passes `keep`, by address.
pub(crate) fn pages(keep: impl Fn(&str) -> bool) -> BTreeMap<usize, String> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let page = page();
    let mut out = BTreeMap::new();
    for line in maps.lines() {
        let mut parts = line.split_whitespace();
        let (range, perms) = (parts.next().unwrap(), parts.next().unwrap());
        let path = parts.nth(3).unwrap_or("");
        if !keep(path) {
            continue;
        }
        let (from, to) = range.split_once('-').unwrap();
        let from = usize::from_str_radix(from, 16).unwrap();
        let to = usize::from_str_radix(to, 16).unwrap();
        for p in (from..to).step_by(page) {
            out.insert(p, format!("{perms} {path}"));
        }
    }
    out
}

/// Extends the `PT_GNU_RELRO` segment of the ELF file at `path` to end 16 bytes past the page
/// its end was rounded up to: the layout GNU ld before 2.39 leaves (the region's last page is
/// partial; the loader rounds its end down and leaves that page writable, shared with the
/// import table's tail and `.data`). Returns the new end (an offset from the base).
pub(crate) fn extend_relro(path: &std::path::Path, page: u64) -> u64 {
    let mut bytes = std::fs::read(path).unwrap();
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let phoff = u64_at(&bytes, 0x20) as usize;
    let phentsize = u16::from_le_bytes([bytes[0x36], bytes[0x37]]) as usize;
    let phnum = u16::from_le_bytes([bytes[0x38], bytes[0x39]]) as usize;
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        if kind != libc::PT_GNU_RELRO {
            continue;
        }
        let vaddr = u64_at(&bytes, at + 0x10);
        let memsz = u64_at(&bytes, at + 0x28);
        let end = (vaddr + memsz).div_ceil(page) * page + 16;
        let size = (end - vaddr).to_le_bytes();
        bytes[at + 0x20..at + 0x28].copy_from_slice(&size); // p_filesz
        bytes[at + 0x28..at + 0x30].copy_from_slice(&size); // p_memsz
        std::fs::write(path, bytes).unwrap();
        return end;
    }
    panic!("{} has no PT_GNU_RELRO", path.display());
}
