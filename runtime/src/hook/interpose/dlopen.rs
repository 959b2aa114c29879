//! `dlopen` in every object the interposer patches: the object it loads (and what that object
//! loads with it) is patched before `dlopen` returns it, whoever called.
//!
//! The loader answers `dlopen` by its caller: a bare file name is searched along the calling
//! object's own path (`DT_RPATH`, `DT_RUNPATH`) and `$ORIGIN` is the calling object's directory.
//! A hook that calls the loader's `dlopen` is the caller the loader sees, so the hook's entry
//! (`dlopen_entry`, a few instructions) passes on its return address, and where the calling
//! object's answer could differ from nosync's the hook asks as that object would: first whether
//! the name is loaded already, then along the caller's own search path (which the loader reports,
//! `RTLD_DI_SERINFO`), then the loader's cache and system directories as anyone would.

use std::ffi::{CStr, CString, c_char, c_int, c_void};

use super::names::{self, Names};
use super::patch::Pin;

/// The hook's entry: the C signature of `dlopen`, with the caller's return address added as a
/// third argument to [`dlopen_from`], which it tail-calls (so the stack is the caller's).
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
pub(super) unsafe extern "C" fn dlopen_entry(file: *const c_char, flags: c_int) -> *mut c_void {
    core::arch::naked_asm!("mov rdx, [rsp]", "jmp {from}", from = sym dlopen_from)
}

/// The hook's entry (see the x86-64 one): the return address is in the link register.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
pub(super) unsafe extern "C" fn dlopen_entry(file: *const c_char, flags: c_int) -> *mut c_void {
    core::arch::naked_asm!("mov x2, x30", "b {from}", from = sym dlopen_from)
}

/// `dlmopen`'s entry, as `dlopen_entry`: the return address becomes a fourth argument.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
pub(super) unsafe extern "C" fn dlmopen_entry(
    lmid: libc::Lmid_t,
    file: *const c_char,
    flags: c_int,
) -> *mut c_void {
    core::arch::naked_asm!("mov rcx, [rsp]", "jmp {from}", from = sym dlmopen_from)
}

/// `dlmopen`'s entry, as `dlopen_entry`.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
pub(super) unsafe extern "C" fn dlmopen_entry(
    lmid: libc::Lmid_t,
    file: *const c_char,
    flags: c_int,
) -> *mut c_void {
    core::arch::naked_asm!("mov x3, x30", "b {from}", from = sym dlmopen_from)
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

/// Opens `file` as the code at `caller` would, then patches what is new.
///
/// # Safety
/// `file` is null or NUL-terminated.
unsafe fn opened(file: *const c_char, flags: c_int, caller: usize, open: Open<'_>) -> *mut c_void {
    let handle = match names::names() {
        // SAFETY: this fn's contract.
        Some(names) => unsafe { open_as(names, file, flags, caller, open) },
        None => open(file, flags),
    };
    if !handle.is_null() {
        // A panic must not unwind into C; a failed pass leaves the object as loaded.
        let _ = std::panic::catch_unwind(super::patch::after_dlopen);
    }
    handle
}

/// The loader's answer to `open(file, flags)` made from the object holding `caller`.
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
    if file.is_null() || names.own.contains(caller) {
        return open(file, flags);
    }
    // SAFETY: this fn's contract.
    let name = unsafe { CStr::from_ptr(file) }.to_bytes();
    let origin = name.contains(&b'$');
    if name.contains(&b'/') && !origin {
        return open(file, flags);
    }
    let census = super::elf::census();
    let Some(object) = census.objects.iter().find(|o| o.contains(caller)) else {
        return open(file, flags);
    };
    let Ok(pin) = Pin::new(object) else {
        return open(file, flags);
    };
    if origin {
        return match expand_origin(name, &object.name) {
            Some(expanded) => open(expanded.as_ptr(), flags),
            None => open(file, flags),
        };
    }
    // SAFETY: the caller's object is pinned while its headers are read; nosync's stays loaded.
    let paths =
        unsafe { super::elf::has_search_path(object) || super::elf::has_search_path(&names.own) };
    if !paths {
        // Neither object names a search path of its own: the loader searches alike for both.
        return open(file, flags);
    }
    // SAFETY: as this fn's contract.
    unsafe { search_as(&pin, file, name, flags, open) }
}

/// A bare `name` opened as the object of `pin` would: the object of that name if one is loaded,
/// else the first that opens along the object's search path, else the loader's cache and system
/// directories.
///
/// # Safety
/// `file` is `name`, NUL-terminated.
unsafe fn search_as(
    pin: &Pin,
    file: *const c_char,
    name: &[u8],
    flags: c_int,
    open: Open<'_>,
) -> *mut c_void {
    let loaded = open(file, flags | libc::RTLD_NOLOAD);
    if !loaded.is_null() {
        return loaded;
    }
    for dir in search_path(pin.handle()) {
        let Ok(path) = CString::new([dir.as_slice(), b"/", name].concat()) else {
            continue;
        };
        // SAFETY: a NUL-terminated path.
        if unsafe { libc::access(path.as_ptr(), libc::F_OK) } == 0 {
            let handle = open(path.as_ptr(), flags);
            if !handle.is_null() {
                return handle;
            }
        }
    }
    open(file, flags)
}

/// `name` with `$ORIGIN` (or `${ORIGIN}`) replaced by the directory of the object at `object`
/// (the program's own when it has no name); `None` where that directory is unknown.
fn expand_origin(name: &[u8], object: &str) -> Option<CString> {
    let path = if object.is_empty() {
        std::fs::read_link("/proc/self/exe").ok()?
    } else {
        std::path::PathBuf::from(object)
    };
    let dir = path.parent()?.as_os_str().as_encoded_bytes().to_vec();
    let text = name.to_vec();
    let replaced = replace(&replace(&text, b"${ORIGIN}", &dir), b"$ORIGIN", &dir);
    CString::new(replaced).ok()
}

fn replace(text: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if rest.starts_with(from) {
            out.extend_from_slice(to);
            rest = &rest[from.len()..];
        } else {
            out.push(rest[0]);
            rest = &rest[1..];
        }
    }
    out
}

/// `Dl_serinfo`'s head and `Dl_serpath` (`<dlfcn.h>`).
#[repr(C)]
struct SerInfo {
    size: usize,
    count: u32,
    paths: [SerPath; 0],
}
#[repr(C)]
struct SerPath {
    name: *const c_char,
    flags: u32,
}
/// `LA_SER_CONFIG`, `LA_SER_DEFAULT`: the loader's cache and system directories, searched
/// after the caller's own path for every caller alike.
const SYSTEM: u32 = 0x08 | 0x40;

/// The directories the loader searches for a bare name `dlopen`ed from the object of `handle`,
/// before its cache and the system directories: its `DT_RPATH` chain, `LD_LIBRARY_PATH`, its
/// `DT_RUNPATH`, in the loader's order.
fn search_path(handle: *mut c_void) -> Vec<Vec<u8>> {
    let mut head = SerInfo {
        size: 0,
        count: 0,
        paths: [],
    };
    // SAFETY: `RTLD_DI_SERINFOSIZE` writes the sizes into a `Dl_serinfo`'s head.
    if unsafe { libc::dlinfo(handle, libc::RTLD_DI_SERINFOSIZE, (&raw mut head).cast()) } != 0 {
        return Vec::new();
    }
    let words = head.size.div_ceil(size_of::<usize>()).max(2);
    let mut buf = vec![0usize; words];
    // SAFETY: a buffer of at least `size` bytes, aligned for `Dl_serinfo`, its head filled in as
    // the protocol asks; the loader writes the paths and the strings they point to into it.
    let paths = unsafe {
        let info = buf.as_mut_ptr().cast::<SerInfo>();
        (*info).size = head.size;
        (*info).count = head.count;
        if libc::dlinfo(handle, libc::RTLD_DI_SERINFO, info.cast()) != 0 {
            return Vec::new();
        }
        std::slice::from_raw_parts(
            (&raw const (*info).paths).cast::<SerPath>(),
            (*info).count as usize,
        )
    };
    paths
        .iter()
        .filter(|p| p.flags & SYSTEM == 0 && !p.name.is_null())
        // SAFETY: the loader's NUL-terminated strings, inside `buf`.
        .map(|p| unsafe { CStr::from_ptr(p.name) }.to_bytes().to_vec())
        .filter(|d| !d.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_is_the_calling_objects_directory() {
        let got = expand_origin(b"$ORIGIN/../lib/libx.so", "/opt/app/bin/liba.so").unwrap();
        assert_eq!(got.as_bytes(), b"/opt/app/bin/../lib/libx.so");
        let got = expand_origin(b"${ORIGIN}/liby.so", "/opt/app/liba.so").unwrap();
        assert_eq!(got.as_bytes(), b"/opt/app/liby.so");
    }

    #[test]
    fn the_search_path_of_this_binary_holds_ld_library_path() {
        // The test binary's own handle; `LD_LIBRARY_PATH` is read when the process starts, so
        // only what it held then can be compared.
        let Some(var) = std::env::var_os("LD_LIBRARY_PATH") else {
            return;
        };
        // SAFETY: the program's own handle.
        let handle = unsafe { libc::dlopen(std::ptr::null(), libc::RTLD_LAZY) };
        let dirs = search_path(handle);
        let first = var
            .as_encoded_bytes()
            .split(|&b| b == b':')
            .find(|d| !d.is_empty());
        if let Some(first) = first {
            assert!(dirs.iter().any(|d| d == first), "{dirs:?}");
        }
    }
}
