//! Writing an import slot without changing its page's protection: the page's protection is read
//! from the kernel (`/proc/self/maps`), write access is added for the one store if the page
//! lacks it, and exactly what was there is put back. Nothing is guessed from the object's
//! headers: glibc rounds the end of `PT_GNU_RELRO` down, so a slot in it may share a writable
//! page with `.data` (64 KiB pages on AArch64), and a page with text relocations is executable.
//!
//! A store of one aligned pointer-sized word is atomic on the supported targets: a thread
//! calling through the slot meanwhile reads the old or the new address.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// The kernel's mappings of this process: start, end and protection, sorted by start.
#[derive(Debug, Default)]
pub(super) struct Maps(Vec<(usize, usize, i32)>);

impl Maps {
    /// Reads `/proc/self/maps`.
    pub(super) fn read() -> std::io::Result<Maps> {
        let text = std::fs::read_to_string("/proc/self/maps")?;
        Ok(Maps::parse(&text))
    }

    /// The mappings of a `/proc/<pid>/maps` text; lines it cannot read are left out.
    pub(super) fn parse(text: &str) -> Maps {
        let mut maps: Vec<_> = text.lines().filter_map(mapping).collect();
        maps.sort_unstable();
        Maps(maps)
    }

    /// The protection of the mapping that holds `addr`.
    pub(super) fn protection(&self, addr: usize) -> Option<i32> {
        let i = self.0.partition_point(|&(start, _, _)| start <= addr);
        let &(start, end, prot) = self.0.get(i.checked_sub(1)?)?;
        (start..end).contains(&addr).then_some(prot)
    }
}

/// One line: `start-end perms offset dev inode [path]`.
fn mapping(line: &str) -> Option<(usize, usize, i32)> {
    let mut fields = line.split_ascii_whitespace();
    let (start, end) = fields.next()?.split_once('-')?;
    let perms = fields.next()?.as_bytes();
    let bit = |i: usize, c: u8, p: i32| if perms.get(i) == Some(&c) { p } else { 0 };
    let prot = bit(0, b'r', libc::PROT_READ)
        | bit(1, b'w', libc::PROT_WRITE)
        | bit(2, b'x', libc::PROT_EXEC);
    let hex = |s: &str| usize::from_str_radix(s, 16).ok();
    Some((hex(start)?, hex(end)?, prot))
}

/// Why a slot was not written.
#[derive(Debug)]
pub(super) enum Refused {
    /// The slot is not aligned for an atomic store (a malformed object).
    Misaligned,
    /// No mapping holds the slot's page.
    Unmapped,
    /// `mprotect` refused write access (a sealed mapping, a security policy).
    Protect(std::io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Misaligned => f.write_str("the slot is not pointer-aligned"),
            Refused::Unmapped => f.write_str("no mapping holds the slot's page"),
            Refused::Protect(e) => write!(f, "its page could not be made writable: {e}"),
        }
    }
}

/// Whether `slot` can be read and written atomically.
pub(super) fn aligned(slot: *mut usize) -> bool {
    (slot as usize).is_multiple_of(align_of::<AtomicUsize>())
}

/// Reads a slot.
///
/// # Safety
/// `slot` is an aligned import slot of a loaded object.
pub(super) unsafe fn load(slot: *mut usize) -> usize {
    // SAFETY: an aligned, pointer-sized, mapped slot (this fn's contract).
    unsafe { AtomicUsize::from_ptr(slot) }.load(SeqCst)
}

/// Stores `value` into `slot`, the page's protection as it was before (`maps` says what).
///
/// # Safety
/// `slot` is an import slot of a loaded object that stays loaded, and `value` the address of a
/// function with the signature of the symbol the slot names.
pub(super) unsafe fn store(maps: &Maps, slot: *mut usize, value: usize) -> Result<(), Refused> {
    if !aligned(slot) {
        return Err(Refused::Misaligned);
    }
    let page = page_size();
    let start = (slot as usize) & !(page - 1);
    let prot = maps.protection(start).ok_or(Refused::Unmapped)?;
    let lift = prot & libc::PROT_WRITE == 0;
    // SAFETY: `start` is the page of a slot of a loaded object; adding write access to a mapped
    // page changes no byte of it.
    if lift && unsafe { libc::mprotect(start as *mut c_void, page, prot | libc::PROT_WRITE) } != 0 {
        return Err(Refused::Protect(std::io::Error::last_os_error()));
    }
    // SAFETY: an aligned, pointer-sized slot, writable now (the loader writes it the same way).
    unsafe { AtomicUsize::from_ptr(slot) }.store(value, SeqCst);
    if lift {
        // SAFETY: as above: the page gets back exactly the protection the kernel reported. It
        // cannot fail where adding write access to the same page succeeded.
        unsafe { libc::mprotect(start as *mut c_void, page, prot) };
    }
    Ok(())
}

fn page_size() -> usize {
    // SAFETY: `sysconf` has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|s| s.is_power_of_two())
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pages_protection_is_the_kernels_mapping_that_holds_it() {
        let maps = Maps::parse(
            "1000-3000 r--p 00000000 08:01 12 /lib/a.so\n\
             3000-4000 rw-p 00002000 08:01 12 /lib/a.so\n\
             5000-6000 r-xp 00000000 00:00 0\n\
             garbage\n",
        );
        assert_eq!(maps.protection(0x1000), Some(libc::PROT_READ));
        assert_eq!(maps.protection(0x2fff), Some(libc::PROT_READ));
        assert_eq!(
            maps.protection(0x3000),
            Some(libc::PROT_READ | libc::PROT_WRITE)
        );
        assert_eq!(maps.protection(0x4000), None);
        assert_eq!(
            maps.protection(0x5000),
            Some(libc::PROT_READ | libc::PROT_EXEC)
        );
        assert_eq!(maps.protection(0xfff), None);
    }

    #[test]
    fn a_store_into_a_read_only_page_leaves_it_read_only() {
        let page = page_size();
        // SAFETY: a fresh anonymous private mapping of one page.
        let mem = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_EXEC,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(mem, libc::MAP_FAILED);
        let slot = mem.cast::<usize>().wrapping_add(3);
        let before = Maps::read().unwrap().protection(mem as usize);
        assert_eq!(before, Some(libc::PROT_READ | libc::PROT_EXEC));
        // SAFETY: the mapping above stays until `munmap`; the value is never called.
        unsafe { store(&Maps::read().unwrap(), slot, 0x1234) }.unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { load(slot) }, 0x1234);
        assert_eq!(Maps::read().unwrap().protection(mem as usize), before);
        // SAFETY: misaligned: refused before any access.
        let odd = unsafe { store(&Maps::read().unwrap(), slot.byte_add(1), 1) };
        assert!(matches!(odd, Err(Refused::Misaligned)));
        // SAFETY: the mapping above.
        unsafe { libc::munmap(mem, page) };
    }
}
