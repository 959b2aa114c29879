//! `dlopen` in every object the interposer patches: the object it loads (and what that object
//! loads with it) is patched before `dlopen` returns it, whoever called.
//!
//! The loader answers `dlopen` by its caller: a bare file name is searched along the calling
//! object's own path (`DT_RPATH`, `DT_RUNPATH`) and `$ORIGIN` is the calling object's directory.
//! A hook that calls the loader's `dlopen` is the caller the loader sees, so the hook's entry
//! (`dlopen_entry`, a few instructions) passes on its return address, and where the calling
//! object's answer could differ from nosync's the hook asks as that object would (`search.rs`).

use std::cell::Cell;
use std::ffi::{CStr, c_char, c_int, c_void};

use super::names::{self, Names};
use super::search::{self, Plan};

/// The hook's entry: the C signature of `dlopen`, with the caller's return address added as a
/// third argument to [`dlopen_from`], which it tail-calls (so the stack is the caller's).
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
pub(super) unsafe extern "C" fn dlopen_entry(file: *const c_char, flags: c_int) -> *mut c_void {
    core::arch::naked_asm!("endbr64", "mov rdx, [rsp]", "jmp {from}", from = sym dlopen_from)
}

/// The hook's entry (see the x86-64 one): the return address is in the link register.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
pub(super) unsafe extern "C" fn dlopen_entry(file: *const c_char, flags: c_int) -> *mut c_void {
    core::arch::naked_asm!("hint #34", "mov x2, x30", "b {from}", from = sym dlopen_from)
}

/// `dlmopen`'s entry, as `dlopen_entry`: the return address becomes a fourth argument.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
pub(super) unsafe extern "C" fn dlmopen_entry(
    lmid: libc::Lmid_t,
    file: *const c_char,
    flags: c_int,
) -> *mut c_void {
    core::arch::naked_asm!("endbr64", "mov rcx, [rsp]", "jmp {from}", from = sym dlmopen_from)
}

/// `dlmopen`'s entry, as `dlopen_entry`.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
pub(super) unsafe extern "C" fn dlmopen_entry(
    lmid: libc::Lmid_t,
    file: *const c_char,
    flags: c_int,
) -> *mut c_void {
    core::arch::naked_asm!("hint #34", "mov x3, x30", "b {from}", from = sym dlmopen_from)
}

/// `dlopen` from the code at `caller`.
unsafe extern "C" fn dlopen_from(file: *const c_char, flags: c_int, caller: usize) -> *mut c_void {
    // SAFETY: the caller's arguments.
    unsafe { opened(file, flags, caller, &|f, fl| names::dlopen(f, fl)) }
}

/// `dlmopen` from the code at `caller`: into namespace `lmid`, asked the same way.
unsafe extern "C" fn dlmopen_from(
    lmid: libc::Lmid_t,
    file: *const c_char,
    flags: c_int,
    caller: usize,
) -> *mut c_void {
    // SAFETY: the caller's arguments.
    unsafe { opened(file, flags, caller, &|f, fl| names::dlmopen(lmid, f, fl)) }
}

/// The loader's `dlopen` (or `dlmopen` into one namespace), taking a file and flags.
type Open<'a> = &'a dyn Fn(*const c_char, c_int) -> *mut c_void;

thread_local! {
    /// How many hooked `dlopen` calls this thread is inside: one made by a constructor while
    /// another loads (a nested call) leaves the pass to the outermost, since pinning an object
    /// of the outer batch now would run its constructors early.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Opens `file` as the code at `caller` would, then patches what is new.
///
/// # Safety
/// `file` is null or NUL-terminated.
unsafe fn opened(file: *const c_char, flags: c_int, caller: usize, open: Open<'_>) -> *mut c_void {
    DEPTH.with(|d| d.set(d.get() + 1));
    let handle = match names::names() {
        // SAFETY: this fn's contract.
        Some(names) => unsafe { open_as(names, file, flags, caller, open) },
        None => open(file, flags),
    };
    let nested = DEPTH.with(|d| {
        d.set(d.get() - 1);
        d.get() > 0
    });
    if !handle.is_null() {
        // A panic must not unwind into C; a failed pass leaves the object as loaded.
        let _ = std::panic::catch_unwind(|| super::patch::after_dlopen(nested));
    }
    handle
}

/// The loader's answer to `open(file, flags)` made from the object holding `caller`: worked out
/// while the caller's object is pinned, then asked with the loader's `dlopen` as the last call
/// into the loader, so that a failure leaves its `dlerror()` message for the caller.
///
/// # Safety
/// `file` is null or NUL-terminated.
unsafe fn open_as(
    names: &Names,
    file: *const c_char,
    flags: c_int,
    caller: usize,
    open: Open<'_>,
) -> *mut c_void {
    // A preloaded shim of `dlopen` gets the name as the caller wrote it.
    if file.is_null() || names.own.contains(caller) || !names::dlopen_is_libcs() {
        return open(file, flags);
    }
    // SAFETY: this fn's contract.
    let name = unsafe { CStr::from_ptr(file) }.to_bytes();
    match search::plan(name, caller) {
        Plan::AsIs => open(file, flags),
        Plan::Path(path) => open(path.as_ptr(), flags),
        Plan::Search(dirs) => {
            let loaded = open(file, flags | libc::RTLD_NOLOAD);
            if !loaded.is_null() {
                return loaded;
            }
            for path in dirs.iter().filter_map(|d| search::candidate(d, name)) {
                let handle = open(path.as_ptr(), flags);
                if !handle.is_null() {
                    return handle;
                }
            }
            open(file, flags)
        }
    }
}
