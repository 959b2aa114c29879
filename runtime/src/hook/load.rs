//! Finding the driver and libcupti before any cudarc call: cudarc's dynamic loading panics on
//! the first call when a library is missing, so both are looked for first.
//!
//! libcupti is rarely on the loader's path (it lives under the CUDA toolkit, e.g.
//! `/usr/local/cuda-13.0/targets/x86_64-linux/lib`). When cudarc's names do not find it, the
//! library is loaded by its full path from `NOSYNC_CUPTI` and the usual toolkit directories;
//! cudarc then finds it by its soname among the loaded libraries.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::HookError;

/// A file or directory to take libcupti from, tried first when the loader cannot find it.
pub const CUPTI_ENV: &str = "NOSYNC_CUPTI";

/// The library loaded by path, kept loaded for the life of the process.
static LOADED: OnceLock<libloading::Library> = OnceLock::new();

/// The names cudarc asks the loader for.
fn names(lib: &str) -> Vec<String> {
    cudarc::get_lib_name_candidates(lib)
}

/// The CUDA driver, or the error naming what was looked for.
pub(super) fn driver() -> Result<(), HookError> {
    // SAFETY: only tries to dlopen the library.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        return Ok(());
    }
    Err(HookError::NoDriver {
        looked_for: names("cuda"),
    })
}

/// libcupti, or the error naming every name and path tried.
pub(super) fn cupti() -> Result<(), HookError> {
    // SAFETY: only tries to dlopen the library.
    if unsafe { cudarc::cupti::sys::is_culib_present() } {
        return Ok(());
    }
    let dirs = search_dirs(std::env::var_os(CUPTI_ENV).map(PathBuf::from));
    let files: Vec<PathBuf> = dirs.iter().flat_map(|d| cupti_files(d)).collect();
    for file in &files {
        // SAFETY: loading libcupti runs its initialisers, which only register with the driver.
        let Ok(lib) = (unsafe { libloading::Library::new(file) }) else {
            continue;
        };
        let _ = LOADED.set(lib);
        // SAFETY: as above.
        if unsafe { cudarc::cupti::sys::is_culib_present() } {
            return Ok(());
        }
        return Err(HookError::CuptiName {
            loaded: file.clone(),
            looked_for: names("cupti"),
        });
    }
    Err(HookError::NoCupti {
        looked_for: names("cupti"),
        searched: dirs,
    })
}

/// `NOSYNC_CUPTI` (a file's directory, or a directory), then `CUDA_HOME`, `CUDA_PATH`,
/// `/usr/local/cuda` and every `/usr/local/cuda-*` (newest name first), each with the
/// toolkit's library subdirectories. Only directories that exist.
pub(super) fn search_dirs(env: Option<PathBuf>) -> Vec<PathBuf> {
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
