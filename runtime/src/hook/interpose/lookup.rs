//! The lookups that hand out driver functions, answered with wrappers: `dlsym` and `dlvsym`
//! (cudarc's dynamic loading; a library that looks the driver up in its handle), and
//! `cuGetProcAddress` wherever it is called.
//!
//! A wrapper is handed out only for a function the lookup really returned, and calls exactly
//! that function: a "not found" answer (a null address, with the driver's status) passes through
//! untouched, and an address nosync cannot tie to a hooked call is returned as it is and listed
//! in the coverage. Asked for `cuGetProcAddress` itself, the driver's answer is swapped for
//! nosync's hook of it, so that what is looked up through it is seen too.

use std::ffi::{CStr, c_char, c_int, c_void};

use super::names::{self, Loader, Stand};
use super::wrappers::{Targets, VARIANTS, variants};

/// `cuGetProcAddress` (CUDA 11.3 to 11.8) and `cuGetProcAddress_v2` (CUDA 12 on): what their
/// hooks call.
pub(super) static GET_PROC: [(&[u8], &Targets); 2] = [
    (b"cuGetProcAddress\0", &GET_PROC_V1),
    (b"cuGetProcAddress_v2\0", &GET_PROC_V2),
];
static GET_PROC_V1: Targets = Targets::new(variants!(get_proc));
static GET_PROC_V2: Targets = Targets::new(variants!(get_proc_v2));

type GetProc = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> i32;
type GetProcV2 =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_void) -> i32;
type Dlvsym = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void;

/// A lookup's entry, in every patched object: `$answer` for a lookup in a handle (whose answer
/// does not depend on the caller) or from nosync's object; else (`RTLD_DEFAULT`, `RTLD_NEXT`,
/// which the loader answers by the calling object: its scope, the objects after it) a jump
/// straight to the loader's function in cell `$cell`, the caller's return address untouched.
macro_rules! lookup_entry {
    ($(#[$doc:meta])* $name:ident => $answer:ident, cell $cell:literal, ($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        pub(super) unsafe extern "C" fn $name($($arg: $ty),*) -> *mut c_void {
            core::arch::naked_asm!(
                "endbr64",
                "test rdi, rdi",
                "je 2f",
                "cmp rdi, -1",
                "je 2f",
                "jmp {answer}",
                "2:",
                "mov rax, [rsp]",
                "cmp rax, qword ptr [rip + {span}]",
                "jb 3f",
                "cmp rax, qword ptr [rip + {span} + 8]",
                "jae 3f",
                "jmp {answer}",
                "3:",
                concat!("jmp qword ptr [rip + {cells} + ", $cell, " * 8]"),
                answer = sym $answer,
                span = sym names::OWN_SPAN,
                cells = sym names::LOADER_CELLS,
            )
        }

        $(#[$doc])*
        #[cfg(target_arch = "aarch64")]
        #[unsafe(naked)]
        pub(super) unsafe extern "C" fn $name($($arg: $ty),*) -> *mut c_void {
            core::arch::naked_asm!(
                "hint #34",
                "cbz x0, 2f",
                "cmn x0, #1",
                "b.eq 2f",
                "b {answer}",
                "2:",
                "adrp x16, {span}",
                "add x16, x16, :lo12:{span}",
                "ldr x17, [x16]",
                "cmp x30, x17",
                "b.lo 3f",
                "ldr x17, [x16, #8]",
                "cmp x30, x17",
                "b.hs 3f",
                "b {answer}",
                "3:",
                "adrp x16, {cells}",
                "add x16, x16, :lo12:{cells}",
                concat!("ldr x16, [x16, #", $cell, " * 8]"),
                "br x16",
                answer = sym $answer,
                span = sym names::OWN_SPAN,
                cells = sym names::LOADER_CELLS,
            )
        }
    };
}

lookup_entry! {
    /// `dlsym`'s entry (the loader's `dlsym` is cell 0).
    dlsym_entry => dlsym_answer, cell 0, (handle: *mut c_void, name: *const c_char)
}

lookup_entry! {
    /// `dlvsym`'s entry (the loader's `dlvsym` is cell 1).
    dlvsym_entry => dlvsym_answer, cell 1, (handle: *mut c_void, name: *const c_char, version: *const c_char)
}

/// A `dlsym` whose answer does not depend on its caller (or a caller in nosync's object).
unsafe extern "C" fn dlsym_answer(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    // SAFETY: set at install to the loader's `dlsym`, before this hook was stored in any slot.
    let real: names::Dlsym = unsafe { std::mem::transmute(Loader::Dlsym.real()) };
    // SAFETY: the caller's arguments, passed on.
    let found = unsafe { real(handle, name) };
    // SAFETY: `name` is what the caller passed to `dlsym`: null or NUL-terminated.
    unsafe { answer(name, found) }
}

/// A `dlvsym` whose answer does not depend on its caller, as [`dlsym_answer`].
unsafe extern "C" fn dlvsym_answer(
    handle: *mut c_void,
    name: *const c_char,
    version: *const c_char,
) -> *mut c_void {
    // SAFETY: set at install to the loader's `dlvsym` (the hook is stored only where it is).
    let real: Dlvsym = unsafe { std::mem::transmute(Loader::Dlvsym.real()) };
    // SAFETY: the caller's arguments, passed on.
    let found = unsafe { real(handle, name, version) };
    // SAFETY: as in `dlsym_answer`.
    unsafe { answer(name, found) }
}

/// A lookup of `name` found `found`: the wrapper that calls it, where `name` is a hooked call's.
///
/// # Safety
/// `name` is null or NUL-terminated.
unsafe fn answer(name: *const c_char, found: *mut c_void) -> *mut c_void {
    if found.is_null() || name.is_null() {
        return found;
    }
    // SAFETY: this fn's contract.
    let name = unsafe { CStr::from_ptr(name) }.to_bytes();
    let targets = match names::names().and_then(|n| n.get(name)) {
        Some(Stand::Call(entry)) => &entry.targets,
        Some(Stand::GetProc(targets)) => targets,
        _ => return found,
    };
    if targets.target_of_wrapper(found as usize).is_some() {
        return found;
    }
    match targets.wrapper_for(found as usize) {
        Some(wrapper) => wrapper as *mut c_void,
        None => {
            super::patch::unseen_lookup(
                name,
                "every variant of its wrapper calls another function",
            );
            found
        }
    }
}

/// `cuGetProcAddress`'s hook, variant `K`.
unsafe extern "C" fn get_proc<const K: usize>(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> i32 {
    // SAFETY: `GetProc` is its C signature; variant `K` was handed out.
    let real: GetProc = unsafe { GET_PROC_V1.get(K) };
    // SAFETY: the caller's arguments, passed on.
    let result = unsafe { real(symbol, pfn, version, flags) };
    // SAFETY: `pfn` is the caller's pointer, written by the driver on success.
    unsafe { swap_found(result, symbol, pfn) }
}

/// `cuGetProcAddress_v2`'s hook, variant `K`.
unsafe extern "C" fn get_proc_v2<const K: usize>(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_void,
) -> i32 {
    // SAFETY: `GetProcV2` is its C signature; variant `K` was handed out.
    let real: GetProcV2 = unsafe { GET_PROC_V2.get(K) };
    // SAFETY: the caller's arguments, passed on.
    let result = unsafe { real(symbol, pfn, version, flags, status) };
    // SAFETY: as in `get_proc`.
    unsafe { swap_found(result, symbol, pfn) }
}

/// After `cuGetProcAddress` answered `result`: the function it wrote into `pfn`, swapped for the
/// wrapper that calls it if it is a hooked call's. A null function ("not found": the driver
/// answers success with a null `pfn` and says so in its status) is never swapped.
///
/// # Safety
/// `pfn` is null or the pointer the caller passed, which the driver wrote on success; `symbol`
/// is null or NUL-terminated.
unsafe fn swap_found(result: i32, symbol: *const c_char, pfn: *mut *mut c_void) -> i32 {
    if result != 0 || pfn.is_null() {
        return result;
    }
    // SAFETY: this fn's contract.
    let found = unsafe { *pfn } as usize;
    if found == 0 {
        return result;
    }
    let asked = if symbol.is_null() {
        &b""[..]
    } else {
        // SAFETY: this fn's contract.
        unsafe { CStr::from_ptr(symbol) }.to_bytes()
    };
    let swapped = substitute(found, asked).unwrap_or_else(|| {
        if !asked.is_empty() && hooked_family(asked) {
            super::patch::unseen_lookup(asked, "cuGetProcAddress returned a function nosync does not know (another version, or another interposer's)");
        }
        found
    });
    // SAFETY: this fn's contract.
    unsafe { *pfn = swapped as *mut c_void };
    result
}

/// The wrapper already calling `found`, of any hooked call or of `cuGetProcAddress` itself;
/// among the calls whose name begins with the one asked for first (should the driver give two
/// calls one address, the wrapper with the asked call's signature).
fn substitute(found: usize, asked: &[u8]) -> Option<usize> {
    let calls = super::wrappers::ALL
        .iter()
        .map(|e| (e.name().as_bytes(), &e.targets));
    let lookups = GET_PROC.iter().map(|(n, t)| (&n[..n.len() - 1], *t));
    let all: Vec<_> = calls.chain(lookups).collect();
    let named = all.iter().filter(|(n, _)| n.starts_with(asked));
    let wrapper = |(_, t): &(&[u8], &Targets)| t.wrapper_of(found);
    named
        .clone()
        .find_map(wrapper)
        .or_else(|| all.iter().find_map(wrapper))
}

/// Whether some hooked call's name is `name` with a version or stream suffix (or none).
fn hooked_family(name: &[u8]) -> bool {
    let mut all = super::wrappers::ALL.iter().map(|e| e.name().as_bytes());
    all.any(|n| n.starts_with(name))
}

const _: () = assert!(VARIANTS == 4, "variants! lists four");
