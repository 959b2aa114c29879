//! A file's text, read with the file or, for a file whose [`Stamp`] says it is unchanged
//! since the run that last read it, the first time something needs it: a warm run looks
//! up every file's lowering by its text's hash, which the stamp table keeps, and needs the
//! text itself only for the few files it lowers, walks into or reports on.
//!
//! A text read late is checked against the hash it was known by. A file changed on disk
//! between its stamp and that read makes its [`Staleness`] flag go up: what the run built
//! from the old text no longer matches the new one, and the edge runs again, reading every
//! file (`engine/edge.rs`).

use super::loader::Stamp;
use std::fmt;
use std::io;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// How a late text is read: the loader's own reading of a file ([`super::Loader::reader`]).
pub type Reader = Arc<dyn Fn(&Path) -> io::Result<String> + Send + Sync>;

/// Whether a text read late was not the one its file was known by (shared by the files
/// of one source map).
pub type Staleness = Arc<AtomicBool>;

/// The hash a file's text is known by (the cache of lowered files' key, the walks' texts).
pub fn hash(text: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128(text.as_bytes())
}

/// A file's text; `&Text` derefs to `&str` (reading a late text then).
#[derive(Clone)]
pub struct Text(Arc<Inner>);

struct Inner {
    text: OnceLock<String>,
    late: Option<Late>,
}

/// What reads a text the first time it is needed, and what it must hash to.
struct Late {
    path: PathBuf,
    read: Reader,
    hash: u128,
    stale: Staleness,
}

impl Text {
    /// A text read with its file.
    pub fn read(text: String) -> Text {
        Text(Arc::new(Inner {
            text: OnceLock::from(text),
            late: None,
        }))
    }

    /// The text of `path`, known by `hash`, read by `read` when first needed.
    pub fn late(path: &Path, read: Reader, hash: u128, stale: &Staleness) -> Text {
        let late = Late {
            path: path.to_path_buf(),
            read,
            hash,
            stale: stale.clone(),
        };
        Text(Arc::new(Inner {
            text: OnceLock::new(),
            late: Some(late),
        }))
    }

    /// Whether the text is in memory (read with its file, or since).
    pub fn is_read(&self) -> bool {
        self.0.text.get().is_some()
    }
}

impl Late {
    /// The file's text now; a file that cannot be read, or whose text is not the one it was
    /// known by, raises the staleness flag (and an unreadable one reads as empty).
    fn read(&self) -> String {
        let text = (self.read)(&self.path).ok();
        if text.as_deref().map(hash) != Some(self.hash) {
            self.stale.store(true, Ordering::Relaxed);
        }
        text.unwrap_or_default()
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        let read = || self.0.late.as_ref().map(Late::read).unwrap_or_default();
        self.0.text.get_or_init(read)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0.text.get(), &self.0.late) {
            (Some(text), _) => fmt::Debug::fmt(text, f),
            (None, Some(late)) => write!(f, "<not read: {}>", late.path.display()),
            (None, None) => f.write_str("<none>"),
        }
    }
}

/// What the stamp table keeps of a file read by an earlier run: its stamp then, and its
/// text's hash, line count and the shipped flags' setters it names
/// ([`crate::known::models::setters`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Known {
    pub stamp: Stamp,
    pub hash: u128,
    pub lines: u64,
    pub setters: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(text: &'static str) -> Reader {
        Arc::new(move |_: &Path| Ok(text.to_owned()))
    }

    #[test]
    fn a_late_text_is_read_once_when_needed_and_checked() {
        let stale = Staleness::default();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = calls.clone();
        let read: Reader = Arc::new(move |_: &Path| {
            counted.fetch_add(1, Ordering::Relaxed);
            Ok("fn a() {}".to_owned())
        });
        let text = Text::late(Path::new("/w/a.rs"), read, hash("fn a() {}"), &stale);
        assert!(!text.is_read());
        assert_eq!(format!("{text:?}"), "<not read: /w/a.rs>");
        assert_eq!((&*text, &*text.clone()), ("fn a() {}", "fn a() {}"));
        assert!(text.is_read());
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        assert!(!stale.load(Ordering::Relaxed));
    }

    #[test]
    fn a_late_text_changed_or_gone_makes_the_run_stale() {
        let stale = Staleness::default();
        let changed = Text::late(Path::new("/w/a.rs"), reader("fn b() {}"), hash("x"), &stale);
        assert_eq!(&*changed, "fn b() {}");
        assert!(stale.load(Ordering::Relaxed));
        let stale = Staleness::default();
        let gone: Reader = Arc::new(|_: &Path| Err(io::Error::from(io::ErrorKind::NotFound)));
        let text = Text::late(Path::new("/w/a.rs"), gone, hash(""), &stale);
        assert_eq!(&*text, "");
        assert!(stale.load(Ordering::Relaxed), "unreadable");
    }
}
