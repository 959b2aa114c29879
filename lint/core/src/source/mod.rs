//! Source text: every file is read once, through a [`Loader`], and kept here with its
//! line index (`line-index`), so that byte offsets become `line:col` spans and renderers can show
//! snippets. The file ids and byte spans every later stage carries are defined here. The
//! [`SourceMap`] is a table of files and nothing else: which files a run need not read (the
//! stamp table) and the caches are the run's [`crate::incremental::Incremental`].

mod cache;
mod loader;
mod spans;
mod text;

pub use cache::{Key, KeyWriter, LoweredCache, SharedCache};
pub use loader::{DiskLoader, Loader, MemLoader, Stamp};
pub use spans::{
    SpanCtx, span_ctx, with_fixed_span, with_span_ctx, with_span_file, with_span_file_at,
};

use crate::diagnostics::Span;
use crate::paths;
use line_index::LineIndex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
pub use text::{Known, Reader, Staleness, Text, hash as text_hash};

/// Index of a file in the [`SourceMap`].
pub type FileId = u32;

/// A byte range of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SpanIr {
    pub file: FileId,
    pub lo: u32,
    pub hi: u32,
}

/// One source file: its absolute path, the path diagnostics print, its text (read late
/// when the stamp table vouches for it, see [`Text`]) and the hash of its text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub display: PathBuf,
    pub text: Text,
    pub hash: u128,
    /// Built on the first span into the file: most files of a run (a warm one, above all)
    /// never have one, and indexing every file was a twentieth of a warm run.
    index: OnceLock<LineIndex>,
    lines: usize,
}

impl SourceFile {
    fn new(path: PathBuf, display: PathBuf, text: String) -> Self {
        let indexed = &text[..indexed_len(&text)];
        let lines = newlines(indexed.as_bytes()) + 1;
        SourceFile {
            path,
            display,
            hash: text::hash(&text),
            text: Text::read(text),
            index: OnceLock::new(),
            lines,
        }
    }

    /// A file known by an earlier run's read of it: its text read by `read` when needed.
    fn late(path: PathBuf, display: PathBuf, known: Known, late: (Reader, &Staleness)) -> Self {
        SourceFile {
            text: Text::late(&path, late.0, known.hash, late.1),
            path,
            display,
            hash: known.hash,
            index: OnceLock::new(),
            lines: usize::try_from(known.lines).unwrap_or(usize::MAX),
        }
    }

    fn index(&self) -> &LineIndex {
        let index = || LineIndex::new(&self.text[..indexed_len(&self.text)]);
        self.index.get_or_init(index)
    }

    /// 1-based line and 1-based column (in chars, as rustc counts them) of a byte offset
    /// (one past the end, or inside a char, counts as the end, or the start of that char).
    pub fn line_col(&self, byte: usize) -> (usize, usize) {
        if byte == 0 {
            // Every text starts at 1:1 (a late text is not read for it).
            return (1, 1);
        }
        crate::diagnostics::line_col(self.index(), &self.text, byte)
    }

    /// Number of lines (for statistics): of the indexed text, as its line index counts them.
    pub fn lines(&self) -> usize {
        self.lines
    }
}

/// The `\n` bytes of `bytes`, counted in blocks of 255 whose `u8` sums cannot overflow,
/// which the compiler vectorises 32 bytes at a time (a plain `filter().count()` took 4: a
/// fiftieth of a warm run, which reads every file).
fn newlines(bytes: &[u8]) -> usize {
    let block = |b: &[u8]| b.iter().map(|&c| u8::from(c == b'\n')).sum::<u8>();
    bytes.chunks(255).map(|b| usize::from(block(b))).sum()
}

/// How much of `text` is indexed (and spanned): spans are `u32` offsets, so a larger file
/// is indexed to that size.
fn indexed_len(text: &str) -> usize {
    floor_char(text, u32::MAX as usize)
}

/// The largest char boundary of `text` at or before `at`.
fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A file read (or known by an earlier run's read, and read late), to be added to a
/// [`SourceMap`] ([`SourceMap::prepare`], [`SourceMap::prepare_late`]).
#[derive(Debug)]
pub struct ReadFile(SourceFile);

impl ReadFile {
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// The hash of its text.
    pub fn hash(&self) -> u128 {
        self.0.hash
    }

    /// Its number of lines.
    pub fn lines(&self) -> usize {
        self.0.lines
    }
}

/// All files the lint read, addressed by `FileId` or by their printed path.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
    by_display: HashMap<PathBuf, FileId>,
    by_path: HashMap<PathBuf, FileId>,
    root: PathBuf,
}

impl SourceMap {
    /// A map whose printed paths are relative to `root` (the analysed workspace root).
    pub fn new(root: &Path) -> Self {
        SourceMap {
            root: root.to_path_buf(),
            ..SourceMap::default()
        }
    }

    /// How many files' texts are in memory (read with the file, or late), of how many.
    pub fn texts_read(&self) -> (usize, usize) {
        let read = self.files.iter().filter(|f| f.text.is_read()).count();
        (read, self.files.len())
    }

    /// Adds a file already read; returns its id (the same id if added twice).
    pub fn add(&mut self, path: PathBuf, text: String) -> FileId {
        if let Some(&id) = self.by_path.get(&path) {
            return id;
        }
        let file = self.prepare(path, text);
        self.insert(file)
    }

    /// `path` with its text `text`, its printed path and its line index, not added yet:
    /// the slow part of [`SourceMap::add`] (the index reads the whole text), which
    /// threads can do in parallel through `&self`; [`SourceMap::insert`] adds it.
    pub fn prepare(&self, path: PathBuf, text: String) -> ReadFile {
        let display = self.display(&path);
        ReadFile(SourceFile::new(path, display, text))
    }

    /// `path`, known by an earlier run's read of it (`known`), not read: its text is read
    /// by `read` the first time it is needed, and `stale` is raised when that text is not
    /// the one `known` says (see [`Text`]).
    pub fn prepare_late(
        &self,
        path: &Path,
        known: Known,
        (read, stale): (Reader, &Staleness),
    ) -> ReadFile {
        let display = self.display(path);
        ReadFile(SourceFile::late(
            path.to_path_buf(),
            display,
            known,
            (read, stale),
        ))
    }

    /// The id of the file `path`, when it is here.
    pub fn id(&self, path: &Path) -> Option<FileId> {
        self.by_path.get(path).copied()
    }

    /// Adds a prepared file; returns its id (the id it has already when it was added).
    pub fn insert(&mut self, file: ReadFile) -> FileId {
        let ReadFile(file) = file;
        if let Some(&id) = self.by_path.get(&file.path) {
            return id;
        }
        let id = self.files.len() as FileId;
        self.by_display.insert(file.display.clone(), id);
        self.by_path.insert(file.path.clone(), id);
        self.files.push(file);
        id
    }

    /// How diagnostics print `path`: relative to the workspace root when inside it.
    pub fn display(&self, path: &Path) -> PathBuf {
        paths::relative(&self.root, path)
    }

    /// Reads `path` through `files` and adds it (once: a file already here is not read again).
    pub fn load(&mut self, files: &dyn Loader, path: &Path) -> std::io::Result<FileId> {
        match self.read(files, path) {
            Ok(Ok(id)) => Ok(id),
            Ok(Err(file)) => Ok(self.insert(file)),
            Err(e) => Err(e),
        }
    }

    /// [`SourceMap::load`] through `&self`: the id of `path` when it is here already, else
    /// the file read through `files` and [prepared](SourceMap::prepare), for the caller to
    /// [insert](SourceMap::insert).
    pub fn read(
        &self,
        files: &dyn Loader,
        path: &Path,
    ) -> std::io::Result<Result<FileId, ReadFile>> {
        if let Some(&id) = self.by_path.get(path) {
            return Ok(Ok(id));
        }
        let text = files.read(path)?;
        Ok(Err(self.prepare(path.to_path_buf(), text)))
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id as usize]
    }

    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The text of a file by the path diagnostics print (relative or absolute).
    pub fn text(&self, path: &Path) -> Option<&str> {
        let id = self
            .by_display
            .get(path)
            .or_else(|| self.by_path.get(path))?;
        Some(&self.files[*id as usize].text)
    }

    /// The diagnostic span of an IR span.
    pub fn span(&self, s: SpanIr) -> Span {
        let f = self.file(s.file);
        let (line_start, column_start) = f.line_col(s.lo as usize);
        let (line_end, column_end) = f.line_col(s.hi as usize);
        Span {
            file: f.display.clone(),
            byte_start: s.lo as usize,
            byte_end: s.hi as usize,
            line_start,
            column_start,
            line_end,
            column_end,
        }
    }

    /// Where a diagnostic about no one file points: the start of the first file read, or
    /// of the workspace's `Cargo.toml` when none was.
    pub fn first_span(&self) -> Span {
        match self.files.first() {
            Some(_) => self.span_of(0, 0, 0),
            None => Span::start_of(PathBuf::from("Cargo.toml")),
        }
    }

    /// A span covering a byte range of a file given by id.
    pub fn span_of(&self, file: FileId, lo: usize, hi: usize) -> Span {
        self.span(SpanIr {
            file,
            lo: lo as u32,
            hi: hi as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_chars() {
        let mut map = SourceMap::new(Path::new("/w"));
        let id = map.add("/w/src/lib.rs".into(), "ab\né x\n".into());
        let f = map.file(id);
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(6), (2, 3));
        // Inside `é`: its start; past the end: the end.
        assert_eq!(f.line_col(4), (2, 1));
        assert_eq!(f.line_col(99), (3, 1));
        assert_eq!(f.lines(), 3);
        assert_eq!(f.display, PathBuf::from("src/lib.rs"));
        assert!(map.text(Path::new("src/lib.rs")).is_some());
        // As the line index counts them (`\r\n` ends a line at its `\n`, a last line
        // without one is a line).
        let long = "\n".repeat(600) + &"x\n".repeat(300);
        for text in ["", "a", "a\n", "a\r\nb", "\n\n\u{e9}\n x", &long] {
            let id = map.add(format!("/w/src/{}.rs", text.len()).into(), text.into());
            let f = map.file(id);
            let end = line_index::TextSize::new(text.len() as u32);
            let counted = LineIndex::new(text).line_col(end).line as usize + 1;
            assert_eq!((text, f.lines()), (text, counted));
        }
    }
}
