//! How a `dlopen` of a bare name made from another object than nosync's is answered as that
//! object would have it. The loader searches the calling object's own path first (its
//! `DT_RPATH` and its loaders', or `LD_LIBRARY_PATH` then its `DT_RUNPATH`), then what every
//! caller searches alike (the program's `DT_RPATH`, `LD_LIBRARY_PATH`, the cache, the system
//! directories); `$ORIGIN` is the calling object's directory.
//!
//! The loader reports an object's search path (`RTLD_DI_SERINFO`, in its order, without the
//! cache); what every caller shares is the end of that list, the same as the loader's own
//! object's list ends with. What is left before it is the caller's own: tried first, then the
//! name is asked as it is, which searches the shared part as the loader would.

use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::OnceLock;

use super::elf;
use super::slot::Pin;

/// How to ask the loader for a name on a caller's behalf.
#[derive(Debug)]
pub(super) enum Plan {
    /// As it is: every caller gets the same answer.
    AsIs,
    /// This path (`$ORIGIN` expanded for the caller).
    Path(CString),
    /// The name if it is loaded already, else the first that opens in these directories (the
    /// caller's own), else the name as it is.
    Search(Vec<Vec<u8>>),
}

/// The plan for `name` asked from the code at `caller` (the program, when no object holds it,
/// as the loader takes it). Worked out while the caller's object is pinned.
pub(super) fn plan(name: &[u8], caller: usize) -> Plan {
    if std::env::var_os("MUT").is_some() {
        return Plan::AsIs;
    }
    let dst = name.contains(&b'$');
    if name.contains(&b'/') && !dst {
        return Plan::AsIs;
    }
    let census = elf::census();
    let object = census.objects.iter().find(|o| o.contains(caller));
    let Some(Ok(pin)) = object.or(census.objects.first()).map(Pin::new) else {
        return Plan::AsIs;
    };
    if dst {
        // The loader refuses `$ORIGIN` in a set-user-ID program: so does the hook.
        // SAFETY: `getauxval` has no preconditions.
        let secure = unsafe { libc::getauxval(libc::AT_SECURE) } != 0;
        let path = origin(&pin)
            .filter(|_| !secure)
            .and_then(|o| expand(name, &o));
        return path.map_or(Plan::AsIs, Plan::Path);
    }
    let own = own_part(serinfo(pin.handle()), shared());
    if own.is_empty() {
        Plan::AsIs
    } else {
        Plan::Search(own)
    }
}

/// `dir/name`, if such a file exists.
pub(super) fn candidate(dir: &[u8], name: &[u8]) -> Option<CString> {
    let path = CString::new([dir, b"/", name].concat()).ok()?;
    // SAFETY: a NUL-terminated path.
    (unsafe { libc::access(path.as_ptr(), libc::F_OK) } == 0).then_some(path)
}

/// The part of `list` before the end it shares with `shared`.
fn own_part(mut list: Vec<Vec<u8>>, shared: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let common = list
        .iter()
        .rev()
        .zip(shared.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    list.truncate(list.len() - common);
    list
}

/// The loader's own object's search path: what every caller searches.
fn shared() -> &'static [Vec<u8>] {
    static SHARED: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SHARED.get_or_init(|| {
        let census = elf::census();
        let loader = census.objects.iter().find(|o| elf::is_loader(&o.name));
        loader
            .and_then(|o| Pin::new(o).ok())
            .map(|p| serinfo(p.handle()))
            .unwrap_or_default()
    })
}

/// The directory the loader takes as `$ORIGIN` for the pinned object.
fn origin(pin: &Pin) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: `RTLD_DI_ORIGIN` writes a NUL-terminated path of at most `PATH_MAX` bytes.
    let r = unsafe { libc::dlinfo(pin.handle(), libc::RTLD_DI_ORIGIN, buf.as_mut_ptr().cast()) };
    (r == 0).then(|| {
        CStr::from_bytes_until_nul(&buf)
            .ok()
            .map(|c| c.to_bytes().to_vec())
    })?
}

/// `name` with `$ORIGIN` (or `${ORIGIN}`) replaced by `origin`; `None` if it holds neither.
fn expand(name: &[u8], origin: &[u8]) -> Option<CString> {
    let mut out = Vec::with_capacity(name.len() + origin.len());
    let (mut rest, mut found) = (name, false);
    while let Some(&b) = rest.first() {
        match [&b"${ORIGIN}"[..], b"$ORIGIN"]
            .into_iter()
            .find(|t| rest.starts_with(t))
        {
            Some(token) => {
                out.extend_from_slice(origin);
                rest = &rest[token.len()..];
                found = true;
            }
            None => {
                out.push(b);
                rest = &rest[1..];
            }
        }
    }
    if found { CString::new(out).ok() } else { None }
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

/// The directories the loader searches for a bare name `dlopen`ed from the object of `handle`,
/// in its order (the cache is not among them).
fn serinfo(handle: *mut c_void) -> Vec<Vec<u8>> {
    let mut head = SerInfo {
        size: 0,
        count: 0,
        paths: [],
    };
    // SAFETY: `RTLD_DI_SERINFOSIZE` writes the sizes into a `Dl_serinfo`'s head.
    if unsafe { libc::dlinfo(handle, libc::RTLD_DI_SERINFOSIZE, (&raw mut head).cast()) } != 0 {
        return Vec::new();
    }
    let mut buf = vec![0usize; head.size.div_ceil(size_of::<usize>()).max(2)];
    // SAFETY: a buffer of at least `size` bytes, aligned for `Dl_serinfo`, its head filled in as
    // the protocol asks; the loader writes the paths and the strings they point to into it.
    let paths = unsafe {
        let info = buf.as_mut_ptr().cast::<SerInfo>();
        ((*info).size, (*info).count) = (head.size, head.count);
        if libc::dlinfo(handle, libc::RTLD_DI_SERINFO, info.cast()) != 0 {
            return Vec::new();
        }
        std::slice::from_raw_parts(
            (&raw const (*info).paths).cast::<SerPath>(),
            (*info).count as usize,
        )
    };
    let name = |p: &SerPath| {
        (!p.name.is_null()).then(|| {
            // SAFETY: the loader's NUL-terminated strings, inside `buf`.
            unsafe { CStr::from_ptr(p.name) }.to_bytes().to_vec()
        })
    };
    paths
        .iter()
        .filter_map(name)
        .filter(|d| !d.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|d| d.as_bytes().to_vec()).collect()
    }

    #[test]
    fn the_callers_own_part_is_what_comes_before_the_shared_end() {
        let shared = dirs(&["/env", "/lib", "/usr/lib"]);
        let runpath = dirs(&["/env", "/opt/a/lib", "/lib", "/usr/lib"]);
        assert_eq!(own_part(runpath, &shared), dirs(&["/env", "/opt/a/lib"]));
        let rpath = dirs(&["/opt/b", "/opt/a", "/env", "/lib", "/usr/lib"]);
        assert_eq!(own_part(rpath, &shared), dirs(&["/opt/b", "/opt/a"]));
        assert!(own_part(shared.clone(), &shared).is_empty());
    }

    #[test]
    fn origin_is_expanded_in_both_spellings() {
        let got = expand(b"$ORIGIN/../lib/libx.so", b"/opt/app/bin").unwrap();
        assert_eq!(got.as_bytes(), b"/opt/app/bin/../lib/libx.so");
        let got = expand(b"${ORIGIN}/liby.so", b"/opt/app").unwrap();
        assert_eq!(got.as_bytes(), b"/opt/app/liby.so");
        assert!(expand(b"$LIB/libz.so", b"/opt").is_none());
    }

    #[test]
    fn this_binary_searches_ld_library_path_like_every_caller() {
        // Cargo runs tests with LD_LIBRARY_PATH set (its own and the toolchain's libraries).
        let var = std::env::var_os("LD_LIBRARY_PATH").expect("cargo sets LD_LIBRARY_PATH");
        // SAFETY: the program's own handle.
        let handle = unsafe { libc::dlopen(std::ptr::null(), libc::RTLD_LAZY) };
        let list = serinfo(handle);
        let first = var
            .as_encoded_bytes()
            .split(|&b| b == b':')
            .find(|d| !d.is_empty())
            .unwrap();
        let first = first.strip_suffix(b"/").unwrap_or(first);
        assert!(list.iter().any(|d| d == first), "{list:?}");
        // The test binary names no search path of its own: nothing is its own.
        assert!(own_part(list, shared()).is_empty());
    }
}
