//! Where the lint's files come from: every file the analysis reads, and every question
//! about which files exist, goes through a [`Loader`], as rust-analyzer's VFS is the
//! only way its analysis sees the disk. [`DiskLoader`] is the file system (used at the
//! edges: `engine::analyze`, the CLI); [`MemLoader`] is a set of files in memory (unit
//! tests, fuzzing, benchmarks over generated crates).

use super::Reader;
use crate::paths;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A source of files. Shared by the parsing threads, so `Sync`.
pub trait Loader: Sync {
    /// The text of the file `path` (an error when there is none, or it is not UTF-8).
    fn read(&self, path: &Path) -> io::Result<String>;

    /// The one name of the file `path` names (`.` and `..` resolved, see
    /// `paths::normalize`), or `None` when no file is there (nothing, or a directory).
    fn file(&self, path: &Path) -> Option<PathBuf>;

    /// What the file `path`'s metadata says of its contents now (`Stamp`), for the stamp
    /// table (`incremental`); `None` (the default) when the loader has none: its files are
    /// always read.
    fn stamp(&self, _path: &Path) -> Option<Stamp> {
        None
    }

    /// How a file vouched for by its stamp is read when its text is needed after all: the
    /// way [`Loader::read`] reads, as a function the source map keeps. `None` (the
    /// default): such files are read at once.
    fn reader(&self) -> Option<Reader> {
        None
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

    fn stamp(&self, path: &Path) -> Option<Stamp> {
        Stamp::of(path)
    }

    fn reader(&self) -> Option<Reader> {
        Some(Arc::new(|path: &Path| std::fs::read_to_string(path)))
    }
}

/// What a file's metadata says of its contents: its length, its modification and status
/// change times, its inode and device (git's index keeps the same), and when the stamp
/// was taken. Times are nanoseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamp {
    pub len: u64,
    pub modified: i128,
    pub changed: i128,
    pub inode: u64,
    pub device: u64,
    pub taken: i128,
}

/// How long before a stamp was taken its file must have last changed for the stamp to
/// vouch for it: a write in the same tick of the file system's clock as the stamp leaves
/// the times as they were (git's "racily clean" entries), and some file systems count
/// whole seconds, or two.
const SETTLED_NS: i128 = 3_000_000_000;

impl Stamp {
    /// The stamp of the file `path` now (`None` where it has none: not a file, or not
    /// a Unix system).
    #[cfg(unix)]
    pub fn of(path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        use std::time::{SystemTime, UNIX_EPOCH};
        // Taken before the metadata is read: a change after it is newer than the stamp.
        let taken = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
        let m = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Some(Stamp {
            len: m.len(),
            modified: ns(m.mtime(), m.mtime_nsec()),
            changed: ns(m.ctime(), m.ctime_nsec()),
            inode: m.ino(),
            device: m.dev(),
            taken: i128::try_from(taken.as_nanos()).ok()?,
        })
    }

    /// No stamps off Unix: every file is read.
    #[cfg(not(unix))]
    pub fn of(_path: &Path) -> Option<Stamp> {
        None
    }

    /// Whether this stamp, taken when the file was read, vouches that the file stamped
    /// `now` has the same text: the same length, times, inode and device, and the file
    /// had last changed well before this stamp was taken ([`SETTLED_NS`]).
    pub fn vouches_for(&self, now: &Stamp) -> bool {
        let same = (
            self.len,
            self.modified,
            self.changed,
            self.inode,
            self.device,
        ) == (now.len, now.modified, now.changed, now.inode, now.device);
        same && self.modified.max(self.changed) + SETTLED_NS <= self.taken
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

    #[test]
    fn a_stamp_vouches_only_for_the_same_metadata_long_settled() {
        let then = Stamp {
            len: 10,
            modified: 1_000,
            changed: 2_000,
            inode: 7,
            device: 1,
            taken: 2_000 + SETTLED_NS,
        };
        let now = Stamp {
            taken: then.taken + 99,
            ..then
        };
        assert!(then.vouches_for(&now));
        let others = [
            Stamp { len: 11, ..now },
            Stamp {
                modified: 1_001,
                ..now
            },
            Stamp {
                changed: 2_001,
                ..now
            },
            Stamp { inode: 8, ..now },
            Stamp { device: 2, ..now },
        ];
        assert!(others.iter().all(|other| !then.vouches_for(other)));
        // Changed too shortly before the stamp: a later write in that tick may not show.
        let racy = Stamp {
            taken: then.taken - 1,
            ..then
        };
        assert!(!racy.vouches_for(&Stamp {
            taken: now.taken,
            ..racy
        }));
    }

    #[cfg(unix)]
    #[test]
    fn the_disk_stamps_files_and_nothing_else() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("a.rs");
        std::fs::write(&file, "fn a() {}").expect("written");
        let stamp = DiskLoader.stamp(&file).expect("a file's stamp");
        assert_eq!(stamp.len, 9);
        // Written just now: its own stamp does not vouch for it yet (racily clean).
        assert!(!stamp.vouches_for(&stamp));
        assert_eq!(DiskLoader.stamp(dir.path()), None, "a directory");
        assert_eq!(DiskLoader.stamp(&dir.path().join("none.rs")), None);
        let read = DiskLoader.reader().expect("the disk reads late");
        assert_eq!(read(&file).expect("read"), "fn a() {}");
    }
}
