//! Where the lint's files come from: every file the analysis reads, and every question
//! about which files exist, goes through a [`Loader`], as rust-analyzer's VFS is the
//! only way its analysis sees the disk. [`DiskLoader`] is the file system (used at the
//! edges: `engine::analyze`, the CLI); [`MemLoader`] is a set of files in memory (unit
//! tests, fuzzing, benchmarks over generated crates).

use super::LoweredCache;
use crate::paths;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

/// A source of files. Shared by the parsing threads, so `Sync`.
pub trait Loader: Sync {
    /// The text of the file `path` (an error when there is none, or it is not UTF-8).
    fn read(&self, path: &Path) -> io::Result<String>;

    /// The one name of the file `path` names (`.` and `..` resolved, see
    /// `paths::normalize`), or `None` when no file is there (nothing, or a directory).
    fn file(&self, path: &Path) -> Option<PathBuf>;

    /// Takes the cache of lowered files back once the core has lowered its last file (so
    /// that its entries do not outlive parsing); a loader that keeps one stores it. By
    /// default it is dropped.
    fn store_lowered(&self, cache: LoweredCache) {
        drop(cache);
    }

    /// Takes the cache of walks back once the call graph is built (the edge writes it
    /// meanwhile the analysis goes on). Dropped, by default.
    fn store_walks(&self, cache: LoweredCache) {
        drop(cache);
    }

    /// Whether the run reading through this loader has been called off (a speculative
    /// analysis that cargo's answer has already contradicted): the core then stops at its
    /// next stage, its result unused. Never, by default.
    fn cancelled(&self) -> bool {
        false
    }
}

/// The file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiskLoader;

impl Loader for DiskLoader {
    fn read(&self, path: &Path) -> io::Result<String> {
        std::fs::read_to_string(path)
    }

    fn file(&self, path: &Path) -> Option<PathBuf> {
        path.is_file().then(|| paths::normalize(path))
    }
}

/// Files held in memory, by their lexically normalised path; no directory exists but as
/// the parent of a file, so a `mod` looked up here is found only if its file was added.
#[derive(Debug, Clone, Default)]
pub struct MemLoader {
    files: HashMap<PathBuf, Vec<u8>>,
}

impl MemLoader {
    pub fn new() -> Self {
        MemLoader::default()
    }

    /// Adds (or replaces) the file `path` with `text`.
    pub fn insert(&mut self, path: impl AsRef<Path>, text: impl Into<Vec<u8>>) {
        self.files
            .insert(paths::lexical(path.as_ref()), text.into());
    }

    /// [`MemLoader::insert`], by value.
    pub fn with(mut self, path: impl AsRef<Path>, text: impl Into<Vec<u8>>) -> Self {
        self.insert(path, text);
        self
    }
}

impl Loader for MemLoader {
    fn read(&self, path: &Path) -> io::Result<String> {
        let Some(bytes) = self.files.get(&paths::lexical(path)) else {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        };
        String::from_utf8(bytes.clone()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        })
    }

    fn file(&self, path: &Path) -> Option<PathBuf> {
        let name = paths::lexical(path);
        self.files.contains_key(&name).then_some(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_files_have_one_name() {
        let mem = MemLoader::new()
            .with("/m/src/lib.rs", "mod a;")
            .with("/m/src/bad.rs", vec![0xff, 0xfe]);
        assert_eq!(
            mem.file(Path::new("/m/src/x/../lib.rs")),
            Some(PathBuf::from("/m/src/lib.rs"))
        );
        assert_eq!(mem.read(Path::new("/m/./src/lib.rs")).unwrap(), "mod a;");
        assert_eq!(mem.file(Path::new("/m/src")), None);
        let missing = mem.read(Path::new("/m/src/a.rs")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let bad = mem.read(Path::new("/m/src/bad.rs")).unwrap_err();
        assert_eq!(bad.kind(), io::ErrorKind::InvalidData);
    }
}
