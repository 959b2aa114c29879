//! What the interposer stands in for, by name, and the loader's functions its hooks call.
//!
//! The loader's `dlsym`, `dlvsym` and `dlopen` are what nosync's own import slots held before the
//! install (a preloaded shim of them stays in the path), resolved through the C library's handle
//! where a slot was not bound yet: never the address of a Rust function pointer, which in a
//! program built without position independence is the program's own PLT stub, and would jump
//! back into the rewritten slot.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use super::elf::{self, Object};
use super::wrappers::{self, Entry, Targets};
use crate::hook::check::table::Domain;

/// What a slot or a lookup of a name gets instead.
#[derive(Debug, Clone, Copy)]
pub(super) enum Stand {
    /// A hooked or watched call: its wrappers check.
    Call(&'static Entry),
    /// `cuGetProcAddress` or `cuGetProcAddress_v2`: its wrappers swap what it returns.
    GetProc(&'static Targets),
    /// `dlsym`, `dlvsym` (nosync's object only) and `dlopen` (every object): one hook each.
    Loader(Loader),
}

/// The real loader functions, by [`Loader`] (the `dlsym` entries jump through them).
pub(super) static LOADER_CELLS: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

/// The hooks that stand in for the loader's functions, by [`Loader`], set by [`init`].
static LOADER_HOOKS: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

/// What stands in for the loader's functions and for `cuGetProcAddress`: the entries of
/// `lookup.rs` and `dlopen.rs`, which use this table, so `init` is handed them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Hooks {
    /// The entries of `dlsym`, `dlvsym`, `dlopen`, `dlmopen`, by [`Loader`].
    pub loaders: [usize; 4],
    /// `cuGetProcAddress`'s names (NUL-terminated) and their wrappers' targets.
    pub get_proc: &'static [(&'static [u8], &'static Targets)],
}

/// The span of nosync's own object (its first and last loaded byte), for the `dlsym` entries.
pub(super) static OWN_SPAN: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];

/// The loader's functions nosync stands in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub(super) enum Loader {
    Dlsym,
    Dlvsym,
    Dlopen,
    Dlmopen,
}

impl Loader {
    /// The real function, as nosync's object had it bound.
    pub(super) fn real(self) -> usize {
        self.cell().load(Relaxed)
    }

    fn cell(self) -> &'static AtomicUsize {
        &LOADER_CELLS[self as usize]
    }

    /// The hook that stands in for it (0 before [`init`]).
    pub(super) fn hook(self) -> usize {
        LOADER_HOOKS[self as usize].load(Relaxed)
    }

    /// Whether nosync takes it over in objects other than its own: every one, since each hook
    /// keeps its caller's answer (`lookup.rs`, `dlopen.rs`).
    pub(super) fn everywhere(self) -> bool {
        true
    }
}

pub(super) type Dlsym = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
pub(super) type Dlopen = unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void;
type Dlmopen = unsafe extern "C" fn(libc::Lmid_t, *const c_char, c_int) -> *mut c_void;

/// The real `dlsym`.
pub(super) fn dlsym(handle: *mut c_void, name: &[u8]) -> usize {
    debug_assert_eq!(name.last(), Some(&0));
    let real: Dlsym = match Loader::Dlsym.real() {
        // Before `init` no slot is rewritten: the C library's function is reached directly.
        0 => libc::dlsym,
        // SAFETY: set at `init` to the loader's `dlsym`.
        f => unsafe { std::mem::transmute::<usize, Dlsym>(f) },
    };
    // SAFETY: a NUL-terminated name (asserted) and a handle the caller got from the loader.
    unsafe { real(handle, name.as_ptr().cast()) as usize }
}

/// The real `dlopen`.
pub(super) fn dlopen(file: *const c_char, flags: c_int) -> *mut c_void {
    let real: Dlopen = match Loader::Dlopen.real() {
        // Before `init` no slot is rewritten: the C library's function is reached directly.
        0 => libc::dlopen,
        // SAFETY: set at `init` to the loader's `dlopen`.
        f => unsafe { std::mem::transmute::<usize, Dlopen>(f) },
    };
    // SAFETY: the caller's arguments.
    unsafe { real(file, flags) }
}

/// The real `dlmopen`.
pub(super) fn dlmopen(lmid: libc::Lmid_t, file: *const c_char, flags: c_int) -> *mut c_void {
    // SAFETY: set at `init` to the C library's `dlmopen` (the hook is stored only where it is).
    let real: Dlmopen = unsafe { std::mem::transmute(Loader::Dlmopen.real()) };
    // SAFETY: the caller's arguments.
    unsafe { real(lmid, file, flags) }
}

static DLOPEN_IS_LIBCS: AtomicBool = AtomicBool::new(false);

/// Whether the `dlopen` nosync's object was bound to is the C library's (not a preloaded
/// shim's, which gets every name as its caller wrote it).
pub(super) fn dlopen_is_libcs() -> bool {
    DLOPEN_IS_LIBCS.load(Relaxed)
}

/// The names, and the object nosync is linked into.
#[derive(Debug)]
pub(super) struct Names {
    by_name: HashMap<&'static [u8], Stand>,
    pub(super) own: Object,
}

impl Names {
    /// What stands in for `name` (without its NUL).
    pub(super) fn get(&self, name: &[u8]) -> Option<Stand> {
        self.by_name.get(name).copied()
    }
}

static NAMES: OnceLock<Names> = OnceLock::new();

/// The names, once `init` ran.
pub(super) fn names() -> Option<&'static Names> {
    NAMES.get()
}

/// Finds the loader's functions and each call's function in `driver`, once; nothing is written
/// to any slot here, so an error leaves the process as it was.
pub(super) fn init(driver: &libloading::Library, hooks: Hooks) -> Result<&'static Names, String> {
    for (cell, hook) in LOADER_HOOKS.iter().zip(hooks.loaders) {
        cell.store(hook, Relaxed);
    }
    if let Some(names) = NAMES.get() {
        return Ok(names);
    }
    let own = elf::object_of(init as *const () as usize)
        .ok_or("the object nosync is linked into is not among the loaded objects")?;
    bind_loader(&own)?;
    let (start, end) = own.span();
    OWN_SPAN[0].store(start, Relaxed);
    OWN_SPAN[1].store(end, Relaxed);
    let mut by_name = HashMap::new();
    for &entry in wrappers::ALL {
        let real = match entry.domain {
            Domain::Driver => symbol(driver, entry.cname),
            Domain::Runtime => dlsym(libc::RTLD_DEFAULT, entry.cname),
        };
        let _ = entry.targets.wrapper_for(real);
        by_name.insert(&entry.cname[..entry.cname.len() - 1], Stand::Call(entry));
    }
    for &(name, targets) in hooks.get_proc {
        let _ = targets.wrapper_for(symbol(driver, name));
        by_name.insert(&name[..name.len() - 1], Stand::GetProc(targets));
    }
    for (name, loader) in LOADERS {
        by_name.insert(&name[..name.len() - 1], Stand::Loader(loader));
    }
    Ok(NAMES.get_or_init(|| Names { by_name, own }))
}

/// The loader's functions nosync stands in for, by name.
const LOADERS: [(&[u8], Loader); 4] = [
    (b"dlsym\0", Loader::Dlsym),
    (b"dlvsym\0", Loader::Dlvsym),
    (b"dlopen\0", Loader::Dlopen),
    (b"dlmopen\0", Loader::Dlmopen),
];

/// Reads what nosync's own slots of the loader's functions are bound to (the C library's
/// function, for one it does not import).
fn bind_loader(own: &Object) -> Result<(), String> {
    // SAFETY: nosync's own object stays loaded while its code runs.
    let slots = unsafe { elf::slots(own) };
    for (name, loader) in LOADERS {
        let slot = slots.iter().find(|s| s.name.to_bytes_with_nul() == name);
        let slot = slot.filter(|s| super::protect::aligned(s.at));
        // SAFETY: an aligned import slot of nosync's object.
        let held = slot.map_or(0, |s| unsafe { super::protect::load(s.at) });
        loader.cell().store(bound_in_libc(own, held, name), Relaxed);
    }
    let libcs = bound_in_libc(own, 0, b"dlopen\0");
    DLOPEN_IS_LIBCS.store(libcs != 0 && libcs == Loader::Dlopen.real(), Relaxed);
    if Loader::Dlsym.real() == 0 || Loader::Dlopen.real() == 0 {
        return Err(String::from(
            "the C library's `dlsym` or `dlopen` was not found: the interposer cannot follow what is loaded at run time",
        ));
    }
    Ok(())
}

/// What a slot of nosync's object holding `held` calls: `held` once bound, else the C library's
/// function of that name (found through its handle, so never a PLT stub of the program).
fn bound_in_libc(own: &Object, held: usize, name: &[u8]) -> usize {
    if held != 0 && !own.contains(held) {
        return held;
    }
    for lib in [&b"libc.so.6\0"[..], b"libdl.so.2\0"] {
        // SAFETY: NUL-terminated names; RTLD_NOLOAD only looks among the loaded objects. No slot
        // is rewritten yet, so these calls reach the loader.
        let found = unsafe {
            let handle = libc::dlopen(lib.as_ptr().cast(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
            if handle.is_null() {
                continue;
            }
            let f = libc::dlsym(handle, name.as_ptr().cast()) as usize;
            libc::dlclose(handle);
            f
        };
        if found != 0 && !own.contains(found) {
            return found;
        }
    }
    0
}

fn symbol(lib: &libloading::Library, name: &[u8]) -> usize {
    // SAFETY: the address is only read, as an integer; `name` is NUL-terminated.
    unsafe { lib.get::<*mut c_void>(name) }.map_or(0, |s| *s as usize)
}
