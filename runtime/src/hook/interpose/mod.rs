//! The interposer: the hook without CUPTI. Every hooked or watched driver call a program makes
//! through its import slots or through `dlsym` is sent to a wrapper with the call's signature
//! (`wrappers.rs`), which runs the CUPTI callback's check around the real call. CUPTI attached
//! costs every driver call of the process (about 35 ns a launch on the H200, measured in
//! `docs/gpu.md`); a wrapper costs a call outside every scope one thread-local read.
//!
//! What it rewrites, at install:
//! - the import slots (`elf.rs`) naming a hooked call in every loaded object but the driver, the
//!   loader and the C library: code that links the driver (cudarc's `dynamic-linking`, candle's
//!   choice; C++ libraries built against `libcuda.so`);
//! - in the object nosync is linked into, the slots of `dlsym` and `dlopen`: a hooked name that
//!   `dlsym` finds (cudarc's `dynamic-loading` resolves each entry point at its first call, through
//!   `libloading`) is answered with the wrapper, and an object `dlopen` loads later is patched as
//!   above. `dlsym` is taken over there only: the hook calls the C library's `dlsym` from nosync's
//!   object, so a lookup with `RTLD_NEXT` (next after the caller's object) keeps its meaning only
//!   for callers in that object. (Taking it over in the CUDA runtime's library too did not make
//!   its internal driver calls visible on the H200, so it is not done);
//! - `cuGetProcAddress`(`_v2`) wherever it is imported or looked up: the address it returns for a
//!   hooked call is swapped for the wrapper.
//!
//! What it cannot see, and why [`super::Backend::Auto`] chooses it only before the driver is
//! initialized: an entry point resolved before the install (cudarc keeps each one after its first
//! call), and code that reaches the driver by another path (a library loaded with `dlopen` from
//! outside nosync's object, not named as CUDA's, that looks the driver up itself). Slots, once
//! rewritten, stay so; uninstalled, the wrappers call straight through.

mod elf;
pub(super) mod wrappers;

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock, PoisonError};

use wrappers::Entry;

/// Whether a hook with this backend is installed: the wrappers check, else they call through.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether a capture or a `capture_safe` scope is live: launches and queries are checked.
static WATCHING: AtomicBool = AtomicBool::new(false);

static REAL_DLSYM: AtomicUsize = AtomicUsize::new(0);
static REAL_DLOPEN: AtomicUsize = AtomicUsize::new(0);
static REAL_GET_PROC: AtomicUsize = AtomicUsize::new(0);
static REAL_GET_PROC_V2: AtomicUsize = AtomicUsize::new(0);

type Dlsym = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
type Dlopen = unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void;
type GetProc = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> i32;
type GetProcV2 =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_void) -> i32;

/// The entries, by name, and the objects patched so far.
struct Table {
    entries: Vec<(&'static Entry, usize)>,
    by_name: HashMap<&'static [u8], usize>,
    /// The load base of the object nosync is linked into.
    own: usize,
}

impl Table {
    /// A hooked call's entry by name: where its real function is kept, and its wrapper.
    fn entry(&self, name: &[u8]) -> Option<(&'static AtomicUsize, usize)> {
        let &i = self.by_name.get(name)?;
        let (entry, wrapper) = self.entries[i];
        Some((&entry.real, wrapper))
    }
}

static TABLE: OnceLock<Table> = OnceLock::new();
/// Whether the interposer was first installed before the driver was initialized: then every
/// lookup of a driver function since went through it, and a later install sees every call.
static FROM_THE_START: AtomicBool = AtomicBool::new(false);

/// Whether `dlsym` in nosync's object goes through [`dlsym_hook`].
static OWN_DLSYM: AtomicBool = AtomicBool::new(false);
static SEEN: Mutex<Option<elf::Seen>> = Mutex::new(None);

/// What the install found.
#[derive(Debug)]
pub(super) struct Installed {
    /// The entries whose real function is known (the driver has it).
    pub(super) resolved: Vec<&'static Entry>,
    /// Import slots rewritten in this install.
    pub(super) slots: usize,
}

/// Why the interposer cannot serve here.
pub(super) fn unsupported() -> Option<&'static str> {
    if !cfg!(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )) {
        return Some("the interposer rewrites ELF import slots: Linux on x86-64 or AArch64 only");
    }
    None
}

/// Whether an install now sees every call: the interposer was installed before the driver was
/// initialized (now or earlier in the process).
pub(super) fn complete(initialized: bool) -> bool {
    !initialized || FROM_THE_START.load(Relaxed)
}

/// Resolves the real functions in `driver` (once), rewrites the slots, and turns the wrappers on.
/// `initialized`: whether the driver was initialized before this install.
pub(super) fn install(
    driver: &libloading::Library,
    initialized: bool,
) -> Result<Installed, String> {
    if let Some(why) = unsupported() {
        return Err(why.to_owned());
    }
    if !complete(initialized) {
        return Err(String::from(
            "the driver was initialized before the install, and driver functions looked up since would go unseen: install before the first CUDA call, or use Backend::Cupti",
        ));
    }
    let table = table(driver)?;
    let slots = patch_new_objects(table);
    if !OWN_DLSYM.load(Relaxed) {
        return Err(String::from(
            "nosync's object has no `dlsym` import slot to rewrite: what cudarc loads at run time would go unseen",
        ));
    }
    ACTIVE.store(true, Relaxed);
    if !initialized {
        FROM_THE_START.store(true, Relaxed);
    }
    let resolved = table
        .entries
        .iter()
        .map(|(e, _)| *e)
        .filter(|e| e.real.load(Relaxed) != 0)
        .collect();
    Ok(Installed { resolved, slots })
}

/// The last hook of this backend is gone: the wrappers call straight through.
pub(super) fn uninstall() {
    ACTIVE.store(false, Relaxed);
}

/// A capture or `capture_safe` scope began (`true`) or the last one ended.
pub(super) fn watch(on: bool) {
    WATCHING.store(on, Relaxed);
}

fn table(driver: &libloading::Library) -> Result<&'static Table, String> {
    if let Some(t) = TABLE.get() {
        return Ok(t);
    }
    // Read before any slot of this object is rewritten: the C library's own functions.
    REAL_DLSYM.store(libc::dlsym as *const () as usize, Relaxed);
    REAL_DLOPEN.store(libc::dlopen as *const () as usize, Relaxed);
    let own = elf::object_of(table as *const () as usize)
        .ok_or("the object nosync is linked into is not among the loaded objects")?;
    let entries = wrappers::all();
    for (entry, _) in &entries {
        entry.real.store(real_of(driver, entry), Relaxed);
    }
    REAL_GET_PROC.store(symbol(driver, b"cuGetProcAddress\0"), Relaxed);
    REAL_GET_PROC_V2.store(symbol(driver, b"cuGetProcAddress_v2\0"), Relaxed);
    let by_name = entries
        .iter()
        .enumerate()
        .map(|(i, (e, _))| (&e.cname[..e.cname.len() - 1], i))
        .collect();
    Ok(TABLE.get_or_init(|| Table {
        entries,
        by_name,
        own: own.base,
    }))
}

/// The driver's function for a driver entry; the runtime's, where one is loaded, for a runtime
/// entry (else it is learned when `dlsym` finds it).
fn real_of(driver: &libloading::Library, entry: &Entry) -> usize {
    match entry.domain {
        super::table::Domain::Driver => symbol(driver, entry.cname),
        // SAFETY: `dlsym` with a NUL-terminated name; RTLD_DEFAULT searches the global scope.
        super::table::Domain::Runtime => unsafe {
            libc::dlsym(libc::RTLD_DEFAULT, entry.cname.as_ptr().cast()) as usize
        },
    }
}

fn symbol(lib: &libloading::Library, name: &[u8]) -> usize {
    // SAFETY: the address is only read, as an integer; `name` is NUL-terminated.
    unsafe { lib.get::<*mut c_void>(name) }.map_or(0, |s| *s as usize)
}

/// Rewrites the slots of every loaded object not seen before; how many.
fn patch_new_objects(table: &Table) -> usize {
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    let seen = seen.get_or_insert_with(Default::default);
    let mut count = 0;
    for object in elf::objects() {
        if elf::is_exempt(&object.name) || !seen.insert(object.base) {
            continue;
        }
        count += patch_object(table, &object);
        if elf::is_cuda_runtime(&object.name) {
            warn_runtime_once(&object.name);
        }
    }
    count
}

/// The CUDA runtime reaches the driver by a path the interposer does not rewrite (measured on
/// the H200: `cudaStreamSynchronize` and `cudaMemcpy` wait unseen): said once, where a logger is.
#[cold]
fn warn_runtime_once(name: &str) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        log::warn!(
            target: "nosync",
            "hook: {name} is loaded: the interposer does not see the driver calls the CUDA runtime makes itself (cudaStreamSynchronize, cudaMemcpy); for runtime-API code install with Backend::Cupti (NOSYNC_HOOK=cupti)"
        );
    });
}

fn patch_object(table: &Table, object: &elf::Object) -> usize {
    let own = object.base == table.own;
    let mut count = 0;
    for slot in elf::slots(object) {
        let Some(value) = replacement(table, slot.name.to_bytes(), own) else {
            continue;
        };
        // SAFETY: a slot of `object` naming the function `value` stands in for, with its
        // signature (the wrappers have their call's; the hooks have dlsym's, dlopen's, and
        // cuGetProcAddress's).
        let held = unsafe { elf::load(slot.at) } == value;
        // SAFETY: as above.
        let stored = held || unsafe { elf::store(object, slot.at, value) };
        count += usize::from(stored && !held);
        if own && stored && slot.name.to_bytes() == b"dlsym" {
            OWN_DLSYM.store(true, Relaxed);
        }
    }
    count
}

/// What a slot naming `name` should hold, if nosync stands in for it. `dlsym` and `dlopen` are
/// taken over in nosync's own object (`own`) only.
fn replacement(table: &Table, name: &[u8], own: bool) -> Option<usize> {
    let (real, stand_in) = match name {
        b"dlsym" if own => return Some(dlsym_hook as *const () as usize),
        b"dlopen" if own => return Some(dlopen_hook as *const () as usize),
        _ => get_proc(name).or_else(|| table.entry(name))?,
    };
    (real.load(Relaxed) != 0).then_some(stand_in)
}

/// `cuGetProcAddress`'s two names: where the driver's function is kept, and nosync's hook.
fn get_proc(name: &[u8]) -> Option<(&'static AtomicUsize, usize)> {
    match name {
        b"cuGetProcAddress" => Some((&REAL_GET_PROC, get_proc_hook as *const () as usize)),
        b"cuGetProcAddress_v2" => Some((&REAL_GET_PROC_V2, get_proc_v2_hook as *const () as usize)),
        _ => None,
    }
}

/// What `dlsym` found for `name`, or the wrapper that stands in for it.
fn substitute_named(name: &[u8], found: usize) -> usize {
    let Some(table) = TABLE.get() else {
        return found;
    };
    let Some((real, stand_in)) = get_proc(name).or_else(|| table.entry(name)) else {
        return found;
    };
    // A runtime entry's function is learned here (cuGetProcAddress's is set at install); another
    // copy of a call (a second driver or runtime) is left alone.
    match real.compare_exchange(0, found, Relaxed, Relaxed) {
        Ok(_) => stand_in,
        Err(real) if real == found => stand_in,
        Err(_) => found,
    }
}

/// The wrapper for the function at `addr`, if it is a hooked call's.
fn substitute_address(addr: usize) -> usize {
    let Some(table) = TABLE.get() else {
        return addr;
    };
    table
        .entries
        .iter()
        .find(|(e, _)| e.real.load(Relaxed) == addr)
        .map_or(addr, |(_, w)| *w)
}

/// `dlsym` in nosync's object.
unsafe extern "C" fn dlsym_hook(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    // SAFETY: set to the C library's `dlsym` before this hook was stored in any slot.
    let real: Dlsym = unsafe { std::mem::transmute(REAL_DLSYM.load(Relaxed)) };
    // SAFETY: the caller's arguments, passed on (same object: `RTLD_NEXT` means the same).
    let found = unsafe { real(handle, name) };
    if found.is_null() || name.is_null() {
        return found;
    }
    // SAFETY: `dlsym` found a symbol, so `name` is a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(name) }.to_bytes();
    substitute_named(name, found as usize) as *mut c_void
}

/// `dlopen` in nosync's object: the object it loads is patched before it is returned.
unsafe extern "C" fn dlopen_hook(file: *const c_char, flags: c_int) -> *mut c_void {
    // SAFETY: set to the C library's `dlopen` before this hook was stored in any slot.
    let real: Dlopen = unsafe { std::mem::transmute(REAL_DLOPEN.load(Relaxed)) };
    // SAFETY: the caller's arguments, passed on.
    let handle = unsafe { real(file, flags) };
    if !handle.is_null()
        && let Some(table) = TABLE.get()
    {
        // A panic must not unwind into C; a failed patch leaves the object as loaded.
        let _ = std::panic::catch_unwind(|| patch_new_objects(table));
    }
    handle
}

/// `cuGetProcAddress` (CUDA 11.3 to 11.8).
unsafe extern "C" fn get_proc_hook(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> i32 {
    // SAFETY: set to the driver's function before this hook was handed out.
    let real: GetProc = unsafe { std::mem::transmute(REAL_GET_PROC.load(Relaxed)) };
    // SAFETY: the caller's arguments, passed on; `pfn` is written by the driver on success.
    unsafe { swap_found(real(symbol, pfn, version, flags), pfn) }
}

/// `cuGetProcAddress_v2` (CUDA 12 on).
unsafe extern "C" fn get_proc_v2_hook(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_void,
) -> i32 {
    // SAFETY: set to the driver's function before this hook was handed out.
    let real: GetProcV2 = unsafe { std::mem::transmute(REAL_GET_PROC_V2.load(Relaxed)) };
    // SAFETY: the caller's arguments, passed on; `pfn` is written by the driver on success.
    unsafe { swap_found(real(symbol, pfn, version, flags, status), pfn) }
}

/// After `cuGetProcAddress` answered `result`: the function it wrote into `pfn`, swapped for its
/// wrapper if it is a hooked call's.
///
/// # Safety
/// `pfn` is null or the pointer the caller passed, which the driver wrote on success.
unsafe fn swap_found(result: i32, pfn: *mut *mut c_void) -> i32 {
    if result == 0 && !pfn.is_null() {
        // SAFETY: this fn's contract.
        unsafe { *pfn = substitute_address(*pfn as usize) as *mut c_void };
    }
    result
}

/// Runs a wrapper's call: checked at its entry and exit like a CUPTI callback, unless there is
/// nothing to decide.
///
/// # Safety
/// `params` is the call's parameter struct, laid out as CUPTI's for `entry`'s call.
#[inline(always)]
pub(super) unsafe fn around(
    entry: &'static Entry,
    params: *const c_void,
    call: impl FnOnce() -> i32,
) -> i32 {
    if !ACTIVE.load(Relaxed)
        || (entry.frequent && !WATCHING.load(Relaxed))
        || super::callback::idle(entry.cbid)
    {
        return call();
    }
    // SAFETY: as this fn's contract.
    unsafe { checked(entry, params, call) }
}

/// # Safety
/// As [`around`].
unsafe fn checked(entry: &'static Entry, params: *const c_void, call: impl FnOnce() -> i32) -> i32 {
    use super::ffi::{API_ENTER, API_EXIT, CallbackData};
    let mut slot = 0u64;
    let mut data = CallbackData {
        callbackSite: API_ENTER,
        functionName: entry.cname.as_ptr().cast(),
        functionParams: params,
        functionReturnValue: std::ptr::null_mut(),
        symbolName: std::ptr::null(),
        context: std::ptr::null_mut(),
        contextUid: 0,
        correlationData: &raw mut slot,
        correlationId: 0,
    };
    // SAFETY: `data` is shaped like CUPTI's for this call: its parameter struct (this fn's
    // contract), its slot, and at the exit its result.
    unsafe { super::callback::check_interposed(entry.domain, entry.cbid, &data) };
    let mut result = call();
    let r = result;
    data.callbackSite = API_EXIT;
    data.functionReturnValue = (&raw mut result).cast();
    // SAFETY: as above.
    unsafe { super::callback::check_interposed(entry.domain, entry.cbid, &data) };
    r
}

#[cfg(test)]
mod tests;
