//! The walk of Linux x86-64: the loaded objects' unwind tables (`.eh_frame_hdr`, `.eh_frame`)
//! copied once, and each address's unwind rule cached per thread by framehop, so that a stack
//! already seen costs a few loads and a table lookup a frame.
//!
//! Safe by construction: the tables are copied while the loader holds its lock (no `dlclose`
//! can unmap them meanwhile); the walk reads memory only inside this thread's stack, between
//! the stack pointer and the stack's top (a bad rule ends the walk, it cannot fault); the
//! loader's counters are compared at every walk, and the tables are read again when an object
//! was loaded or unloaded since. Where it cannot walk (no stack bounds from pthread, a stack
//! pointer outside them, a walk already under way on this thread, the thread's storage gone
//! at its exit) it says so and the caller walks with the platform's unwinder.

use std::cell::RefCell;
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::{PoisonError, RwLock};

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, Module, Unwinder};

use super::mix::{DEPTH, SEED, mix};
use crate::hook::check::loaded::{self, Counters, Loaded};

/// The unwind tables of every loaded object, as of the loader's counters.
struct Tables {
    unwinder: UnwinderX86_64<Vec<u8>>,
    counters: Counters,
}

static TABLES: RwLock<Option<Tables>> = RwLock::new(None);

/// A thread's rule cache and the bounds of its stack.
struct Local {
    cache: CacheX86_64,
    stack: Range<u64>,
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// The registers a walk starts from: where this function is, its stack and frame pointers.
#[derive(Clone, Copy)]
struct Start {
    pc: u64,
    sp: u64,
    bp: u64,
}

/// The hash of this thread's stack, or `None` where this walker cannot walk it.
#[inline(never)]
pub(super) fn hash() -> Option<u64> {
    let start = start();
    let mut hash = SEED;
    walk(start, |address| hash = mix(hash, address))?;
    Some(hash)
}

/// The addresses of this thread's frames, this function's first (the tests compare them with
/// the platform unwinder's).
#[cfg(test)]
#[inline(never)]
pub(super) fn addresses() -> Option<Vec<u64>> {
    let start = start();
    let mut out = Vec::new();
    walk(start, |address| out.push(address))?;
    Some(out)
}

#[inline(always)]
fn start() -> Start {
    let (pc, sp, bp): (u64, u64, u64);
    // SAFETY: reads three registers, touches no memory.
    unsafe {
        std::arch::asm!(
            "lea {pc}, [rip]", "mov {sp}, rsp", "mov {bp}, rbp",
            pc = out(reg) pc, sp = out(reg) sp, bp = out(reg) bp,
            options(nomem, nostack, preserves_flags),
        );
    }
    Start { pc, sp, bp }
}

/// Calls `each` with the address of every frame from `start`, [`DEPTH`] at most; `None` where
/// it cannot walk. A panic inside framehop ends the walk there, never the caller.
fn walk(start: Start, mut each: impl FnMut(u64)) -> Option<()> {
    let now = loaded::counters();
    let read = || TABLES.read().unwrap_or_else(PoisonError::into_inner);
    let mut tables = read();
    if !tables.as_ref().is_some_and(|t| t.counters == now) {
        drop(tables);
        refresh(now);
        tables = read();
    }
    let unwinder = &tables.as_ref()?.unwinder;
    let walked = LOCAL.try_with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        let local = slot.get_or_insert_with(Local::new);
        let each = &mut each;
        std::panic::catch_unwind(AssertUnwindSafe(|| frames(unwinder, local, start, each)))
            .ok()
            .flatten()
    });
    walked.ok().flatten()
}

/// Walks from `start` with the thread's cache, reading only its stack above the stack pointer.
fn frames(
    unwinder: &UnwinderX86_64<Vec<u8>>,
    local: &mut Local,
    start: Start,
    each: &mut impl FnMut(u64),
) -> Option<()> {
    let top = local.stack.end;
    if !local.stack.contains(&start.sp) {
        return None;
    }
    let mut read = |addr: u64| match addr.checked_add(8) {
        Some(end) if addr >= start.sp && end <= top => {
            // SAFETY: eight bytes of this thread's stack, between its stack pointer and its
            // top: mapped and readable while this walk runs on it.
            Ok(unsafe { (addr as *const u64).read_unaligned() })
        }
        _ => Err(()),
    };
    let regs = UnwindRegsX86_64::new(start.pc, start.sp, start.bp);
    let mut iter = unwinder.iter_frames(start.pc, regs, &mut local.cache, &mut read);
    for _ in 0..DEPTH {
        match iter.next() {
            Ok(Some(frame)) => each(frame.address()),
            Ok(None) | Err(_) => break,
        }
    }
    Some(())
}

impl Local {
    /// A fresh cache, and the stack's bounds from pthread (empty where it gives none: every
    /// walk on this thread then falls back).
    fn new() -> Local {
        Local {
            cache: CacheX86_64::new(),
            stack: stack_bounds().unwrap_or(0..0),
        }
    }
}

/// This thread's stack, lowest to one past the highest address.
fn stack_bounds() -> Option<Range<u64>> {
    // SAFETY: `attr` is initialised by `pthread_getattr_np` before it is read and destroyed
    // once; the two out-parameters are plain locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let (mut addr, mut size) = (std::ptr::null_mut(), 0usize);
        let got = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        let low = addr as u64;
        (got == 0).then(|| low..low.saturating_add(size as u64))
    }
}

/// Reads every object's unwind tables again, unless another thread already did since the
/// loader's counters read `now`.
#[cold]
fn refresh(now: Counters) {
    let mut tables = TABLES.write().unwrap_or_else(PoisonError::into_inner);
    if tables.as_ref().is_some_and(|t| t.counters == now) {
        return;
    }
    let mut unwinder = UnwinderX86_64::new();
    let counters = loaded::each(|object| {
        // Inside the loader's callback a panic would abort: caught, the object is skipped.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
            if let Some(module) = module(object) {
                unwinder.add_module(module);
            }
        }));
        true
    });
    *tables = Some(Tables { unwinder, counters });
}

/// An object's unwind tables, copied (`None` without `.eh_frame_hdr`: its frames are walked
/// by frame pointer, framehop's fallback).
fn module(object: &Loaded<'_>) -> Option<Module<Vec<u8>>> {
    let base = object.base as u64;
    let (low, high) = object.loads().fold((u64::MAX, 0), |(low, high), p| {
        (low.min(p.p_vaddr), high.max(p.p_vaddr + p.p_memsz))
    });
    let text = object.loads().find(|p| p.p_flags & libc::PF_X != 0)?;
    let hdr = object
        .phdrs
        .iter()
        .find(|p| p.p_type == libc::PT_GNU_EH_FRAME)?;
    let hdr_svma = hdr.p_vaddr..hdr.p_vaddr + hdr.p_memsz;
    let hdr_bytes = readable(object, hdr_svma.clone())?;
    let eh_start = eh_frame_address(hdr_svma.start, hdr_bytes)?;
    let eh_svma = eh_start..eh_frame_end(object, eh_start)?;
    let eh_bytes = readable(object, eh_svma.clone())?;
    let info = ExplicitModuleSectionInfo {
        base_svma: 0,
        text_svma: Some(text.p_vaddr..text.p_vaddr + text.p_memsz),
        eh_frame_svma: Some(eh_svma),
        eh_frame: Some(eh_bytes.to_vec()),
        eh_frame_hdr_svma: Some(hdr_svma),
        eh_frame_hdr: Some(hdr_bytes.to_vec()),
        ..Default::default()
    };
    let name = object.name.to_string_lossy().into_owned();
    Some(Module::new(name, base + low..base + high, base, info))
}

/// The bytes at `svma` in `object`, where a readable loaded segment holds them all.
fn readable<'o>(object: &Loaded<'o>, svma: Range<u64>) -> Option<&'o [u8]> {
    let inside = |p: &&libc::Elf64_Phdr| {
        p.p_flags & libc::PF_R != 0 && p.p_vaddr <= svma.start && svma.end <= p.p_vaddr + p.p_memsz
    };
    object.loads().find(inside)?;
    let len = usize::try_from(svma.end.checked_sub(svma.start)?).ok()?;
    let at = (object.base as u64).checked_add(svma.start)?;
    // SAFETY: inside a readable segment of a loaded object, which the loader cannot unload
    // during the visit (`loaded::each`), and which the caller copies before it returns.
    Some(unsafe { std::slice::from_raw_parts(at as *const u8, len) })
}

/// Where `.eh_frame` begins, from `.eh_frame_hdr`'s pointer to it (version 1; the encodings
/// linkers write: pc- or header-relative 4 bytes, absolute 4 or 8).
fn eh_frame_address(hdr_svma: u64, hdr: &[u8]) -> Option<u64> {
    let (&[version, encoding, ..], Some(field)) = (hdr, hdr.get(4..)) else {
        return None;
    };
    let word = |n: usize| {
        field
            .get(..n)
            .map(|b| b.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x)))
    };
    let sdata4 = || word(4).map(|v| i64::from(v as u32 as i32));
    match (version, encoding) {
        (1, 0x1b) => hdr_svma.checked_add_signed(4 + sdata4()?),
        (1, 0x3b) => hdr_svma.checked_add_signed(sdata4()?),
        (1, 0x03) => word(4),
        (1, 0x04) => word(8),
        _ => None,
    }
}

/// One past `.eh_frame`'s last record: its records' lengths followed to the zero terminator,
/// inside the readable segment that holds its start.
fn eh_frame_end(object: &Loaded<'_>, start: u64) -> Option<u64> {
    let segment = object.loads().find(|p| {
        p.p_flags & libc::PF_R != 0 && (p.p_vaddr..p.p_vaddr + p.p_filesz).contains(&start)
    })?;
    let bytes = readable(object, start..segment.p_vaddr + segment.p_filesz)?;
    let word = |at: usize, n: usize| {
        let b = bytes.get(at..at + n)?;
        Some(b.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x)))
    };
    let mut at = 0usize;
    loop {
        let Some(len) = word(at, 4) else {
            return Some(start + at as u64);
        };
        let next = match len {
            0 => return Some(start + at as u64 + 4),
            0xffff_ffff => usize::try_from(word(at + 4, 8)?).ok()?.checked_add(12)?,
            _ => usize::try_from(len).ok()? + 4,
        };
        at = at.checked_add(next)?;
        if at >= bytes.len() {
            return Some(start + bytes.len() as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_points_at_eh_frame_in_each_encoding_linkers_write() {
        let hdr = |encoding: u8, field: &[u8]| [&[1, encoding, 0x03, 0x3b][..], field].concat();
        // pc-relative: from the field itself, 4 bytes into the header at 0x1000.
        let back = (-0x20i32).to_le_bytes();
        assert_eq!(
            eh_frame_address(0x1000, &hdr(0x1b, &back)),
            Some(0x1000 + 4 - 0x20)
        );
        assert_eq!(
            eh_frame_address(0x1000, &hdr(0x3b, &back)),
            Some(0x1000 - 0x20)
        );
        assert_eq!(
            eh_frame_address(0x1000, &hdr(0x03, &0x2000u32.to_le_bytes())),
            Some(0x2000)
        );
        assert_eq!(
            eh_frame_address(0x1000, &hdr(0x04, &0x3000u64.to_le_bytes())),
            Some(0x3000)
        );
        // Another version, an encoding no linker writes, a header cut short: no tables.
        assert_eq!(
            eh_frame_address(0x1000, &[2, 0x1b, 3, 0x3b, 0, 0, 0, 0]),
            None
        );
        assert_eq!(eh_frame_address(0x1000, &hdr(0x09, &back)), None);
        assert_eq!(eh_frame_address(0x1000, &[1, 0x1b, 3]), None);
        assert_eq!(eh_frame_address(0x1000, &hdr(0x04, &[0; 4])), None);
    }

    /// An object loaded after a walk (as a program's `dlopen` of the driver) is read at the next
    /// walk: the tables follow the loader's counters.
    #[test]
    fn an_object_loaded_after_a_walk_is_read_at_the_next() {
        let mut loaded_names = Vec::new();
        loaded::each(|o| {
            loaded_names.push(o.name.to_string_lossy().into_owned());
            true
        });
        let candidates = [
            c"libanl.so.1",
            c"libutil.so.1",
            c"libdl.so.2",
            c"libnss_files.so.2",
        ];
        let fresh = candidates.iter().find(|c| {
            let name = c.to_str().unwrap_or_default();
            !loaded_names.iter().any(|n| n.ends_with(name))
        });
        let Some(fresh) = fresh else {
            panic!("none of {candidates:?} is left to load: {loaded_names:?}");
        };
        assert!(hash().is_some());
        let before = TABLES.read().unwrap().as_ref().map(|t| t.counters);
        // SAFETY: a C library's own shared object, loaded and never unloaded.
        let handle = unsafe { libc::dlopen(fresh.as_ptr(), libc::RTLD_NOW) };
        assert!(!handle.is_null(), "{fresh:?} did not load");
        assert!(hash().is_some());
        let after = TABLES.read().unwrap().as_ref().map(|t| t.counters);
        assert_ne!(before, after);
        assert_eq!(after, Some(loaded::counters()));
    }

    #[test]
    fn every_object_with_a_header_gives_its_tables() {
        let (mut with_header, mut modules) = (0, 0);
        loaded::each(|object| {
            with_header += usize::from(
                object
                    .phdrs
                    .iter()
                    .any(|p| p.p_type == libc::PT_GNU_EH_FRAME),
            );
            modules += usize::from(module(object).is_some());
            true
        });
        assert!(modules > 0);
        assert_eq!(modules, with_header);
    }
}
