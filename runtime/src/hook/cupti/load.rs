//! Loading the CUDA driver and libcupti with `libloading`, and resolving the entry points of
//! [`ffi`](crate::hook::check::ffi). Nothing is called before a library and every symbol it must have are
//! found, so a missing piece is a [`HookError`] naming where it looked, never a panic. The
//! interposer needs the driver only; CUPTI's hook both.
//!
//! The driver is `libcuda.so.1` (the name the driver package installs; `libcuda.so` too). In a
//! program that links the driver (cudarc's `dynamic-linking`, as candle asks for) loading it
//! again returns the library already mapped. libcupti is rarely on the loader's path (it lives
//! under the CUDA toolkit, e.g. `/usr/local/cuda-13.0/targets/x86_64-linux/lib`): when its names
//! do not find it, it is loaded by its full path from `NOSYNC_CUPTI` and the usual toolkit
//! directories. Any CUPTI of CUDA 11 to 13 serves: the hook uses the callback API only.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library;

use crate::hook::check::ffi::{Cupti, Driver};
use crate::hook::common::HookError;

use crate::guard::env::{self, CUPTI_ENV};

/// The driver's names, asked of the loader in order.
pub(in crate::hook) const DRIVER_NAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

/// libcupti's names, asked of the loader in order (the unversioned name is what a toolkit's
/// `lib64` on `LD_LIBRARY_PATH` or the loader's cache provides).
pub(in crate::hook) const CUPTI_NAMES: [&str; 4] = [
    "libcupti.so",
    "libcupti.so.13",
    "libcupti.so.12",
    "libcupti.so.11.8",
];

/// The driver and its entry points, loaded once and kept for the life of the process.
#[derive(Debug)]
pub(in crate::hook) struct DriverLib {
    pub(in crate::hook) driver: Driver,
    pub(in crate::hook) library: Library,
}

/// libcupti and its entry points, loaded once and kept for the life of the process.
#[derive(Debug)]
pub(in crate::hook) struct CuptiLib {
    pub(in crate::hook) cupti: Cupti,
    /// Where libcupti was found (its name on the loader's path, or the file).
    pub(in crate::hook) from: String,
    _library: Library,
}

static DRIVER: OnceLock<DriverLib> = OnceLock::new();
static CUPTI: OnceLock<CuptiLib> = OnceLock::new();

/// libcupti's entry points, once [`cupti_lib`] succeeded.
#[inline]
pub(in crate::hook) fn cupti() -> Option<&'static CuptiLib> {
    CUPTI.get()
}

/// Loads the driver (once; a failure is retried on the next call).
pub(in crate::hook) fn driver_lib() -> Result<&'static DriverLib, HookError> {
    if let Some(loaded) = DRIVER.get() {
        return Ok(loaded);
    }
    let (library, from) = open_by_name(&DRIVER_NAMES).ok_or_else(|| HookError::NoDriver {
        looked_for: DRIVER_NAMES.iter().map(|n| n.to_string()).collect(),
    })?;
    let driver = driver_symbols(&library, &from)?;
    let loaded = DRIVER.get_or_init(|| DriverLib { driver, library });
    crate::hook::check::callback::driver_loaded(&loaded.driver);
    Ok(loaded)
}

/// Loads libcupti (once; a failure is retried on the next call).
pub(in crate::hook) fn cupti_lib() -> Result<&'static CuptiLib, HookError> {
    if let Some(loaded) = CUPTI.get() {
        return Ok(loaded);
    }
    let (library, from) = open_cupti()?;
    let cupti = cupti_symbols(&library, &from)?;
    Ok(CUPTI.get_or_init(|| CuptiLib {
        cupti,
        from,
        _library: library,
    }))
}

/// The first of `names` the loader opens, with the name that did.
fn open_by_name(names: &[&str]) -> Option<(Library, String)> {
    names.iter().find_map(|name| {
        // SAFETY: loading the driver or libcupti runs their initialisers, which only set up
        // their own state.
        let lib = unsafe { Library::new(*name) }.ok()?;
        Some((lib, (*name).to_owned()))
    })
}

/// libcupti by name, else by path from the search directories.
fn open_cupti() -> Result<(Library, String), HookError> {
    if let Some(found) = open_by_name(&CUPTI_NAMES) {
        return Ok(found);
    }
    let dirs = search_dirs(env::path(CUPTI_ENV));
    let found = dirs.iter().flat_map(|d| cupti_files(d)).find_map(|file| {
        // SAFETY: a libcupti found on disk: loading it runs its initialisers, which only set up
        // its own state.
        let lib = unsafe { Library::new(&file) }.ok()?;
        Some((lib, file.display().to_string()))
    });
    found.ok_or_else(|| HookError::NoCupti {
        looked_for: CUPTI_NAMES.iter().map(|n| n.to_string()).collect(),
        searched: dirs,
    })
}

/// One entry point of `lib`, copied out as a plain function pointer (valid while `lib` is
/// loaded: the libraries are kept for the process).
///
/// # Safety
/// `T` is the symbol's C signature.
unsafe fn symbol<T: Copy>(lib: &Library, from: &str, name: &'static str) -> Result<T, HookError> {
    // SAFETY: `T` is the symbol's C signature (this fn's contract); `name` is NUL-free ASCII.
    // The pointer copied out stays valid: `lib` stays loaded for the process (`Loaded`).
    match unsafe { lib.get::<T>(name.as_bytes()) } {
        Ok(sym) => Ok(*sym),
        Err(_) => Err(HookError::MissingSymbol {
            library: from.to_owned(),
            symbol: name,
        }),
    }
}

fn driver_symbols(lib: &Library, from: &str) -> Result<Driver, HookError> {
    // SAFETY: each type is the function's signature in `cuda.h`.
    unsafe {
        Ok(Driver {
            init: symbol(lib, from, "cuInit")?,
            get_version: symbol(lib, from, "cuDriverGetVersion")?,
            error_name: symbol(lib, from, "cuGetErrorName")?,
            pointer_attribute: symbol(lib, from, "cuPointerGetAttribute")?,
            ctx_current: symbol(lib, from, "cuCtxGetCurrent")?,
        })
    }
}

fn cupti_symbols(lib: &Library, from: &str) -> Result<Cupti, HookError> {
    // SAFETY: each type is the function's signature in `cupti_callbacks.h`/`cupti_result.h`.
    unsafe {
        Ok(Cupti {
            subscribe: symbol(lib, from, "cuptiSubscribe")?,
            unsubscribe: symbol(lib, from, "cuptiUnsubscribe")?,
            enable_callback: symbol(lib, from, "cuptiEnableCallback")?,
            result_string: symbol(lib, from, "cuptiGetResultString")?,
        })
    }
}

/// `NOSYNC_CUPTI` (a file's directory, or a directory), then `CUDA_HOME`, `CUDA_PATH`,
/// `/usr/local/cuda` and every `/usr/local/cuda-*` (newest name first), each with the
/// toolkit's library subdirectories. Only directories that exist.
pub(in crate::hook) fn search_dirs(env: Option<PathBuf>) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(env) = env {
        dirs.push(if env.is_file() {
            env.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            env
        });
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        roots.extend(std::env::var_os(var).map(PathBuf::from));
    }
    roots.push(PathBuf::from("/usr/local/cuda"));
    let mut versioned: Vec<PathBuf> = std::fs::read_dir("/usr/local")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cuda-"))
        .map(|e| e.path())
        .collect();
    versioned.sort();
    roots.extend(versioned.into_iter().rev());
    for root in roots {
        for sub in SUBDIRS {
            dirs.push(root.join(sub));
        }
    }
    dirs.retain(|d| d.is_dir());
    dirs.dedup();
    dirs
}

const SUBDIRS: [&str; 5] = [
    "targets/x86_64-linux/lib",
    "targets/sbsa-linux/lib",
    "extras/CUPTI/lib64",
    "lib64",
    "lib",
];

/// The `libcupti.so*` files of a directory, the unversioned name first.
fn cupti_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libcupti.so"))
        })
        .collect();
    files.sort_by_key(|p| p.as_os_str().len());
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_env_directory_comes_first_and_missing_ones_are_dropped() {
        let dir = std::env::temp_dir().join(format!("nosync-cupti-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("libcupti.so.13"), b"").unwrap();
        std::fs::write(dir.join("libcupti.so"), b"").unwrap();
        std::fs::write(dir.join("libother.so"), b"").unwrap();
        let dirs = search_dirs(Some(dir.join("libcupti.so")));
        assert_eq!(dirs.first(), Some(&dir));
        assert!(dirs.iter().all(|d| d.is_dir()));
        let files = cupti_files(&dir);
        assert_eq!(files, [dir.join("libcupti.so"), dir.join("libcupti.so.13")]);
        let missing = search_dirs(Some(dir.join("no-such-dir")));
        assert!(!missing.contains(&dir.join("no-such-dir")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
