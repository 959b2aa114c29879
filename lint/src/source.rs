//! Source text: every file is read once and kept here, with its line starts, so that
//! byte offsets become `line:col` spans and renderers can show snippets.

use crate::diagnostics::Span;
use crate::parse::ir::{FileId, SpanIr};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// `path` with its `.` and `..` components resolved lexically (`a/b/../c` → `a/c`),
/// as cargo does, so that a file reached by two routes (`src/x.rs` and
/// `benches/../src/x.rs`) has one name. Where lexical resolution would name a
/// different file than the path itself (a symlinked directory before a `..`), the path
/// is kept as written: it is checked against the file system only in that case.
pub fn normalize(path: &Path) -> PathBuf {
    let lexical = lexical(path);
    if lexical.as_os_str() == path.as_os_str() || !path.exists() {
        return lexical;
    }
    match (std::fs::canonicalize(path), std::fs::canonicalize(&lexical)) {
        (Ok(a), Ok(b)) if a == b => lexical,
        _ => path.to_path_buf(),
    }
}

/// Lexical normalisation only (no file system access): `.` dropped, `..` pops the
/// previous normal component (kept when there is none to pop in a relative path,
/// dropped at the root of an absolute one).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            _ => out.push(c),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// One source file: its absolute path, the path diagnostics print, and its text.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub display: PathBuf,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    fn new(path: PathBuf, display: PathBuf, text: String) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            path,
            display,
            text,
            line_starts,
        }
    }

    /// 1-based line and 1-based column (in chars) of a byte offset.
    pub fn line_col(&self, byte: usize) -> (usize, usize) {
        let byte = byte.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= byte).max(1) - 1;
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..byte)
            .map_or(byte - start, |s| s.chars().count());
        (line + 1, col + 1)
    }

    /// Number of lines (for statistics).
    pub fn lines(&self) -> usize {
        self.line_starts.len()
    }
}

/// All files the lint read, addressed by [`FileId`] or by their printed path.
#[derive(Debug, Default)]
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

    /// Adds a file already read; returns its id (the same id if added twice).
    pub fn add(&mut self, path: PathBuf, text: String) -> FileId {
        if let Some(&id) = self.by_path.get(&path) {
            return id;
        }
        let display = path
            .strip_prefix(&self.root)
            .map_or_else(|_| path.clone(), Path::to_path_buf);
        let id = self.files.len() as FileId;
        self.by_display.insert(display.clone(), id);
        self.by_path.insert(path.clone(), id);
        self.files.push(SourceFile::new(path, display, text));
        id
    }

    /// How diagnostics print `path`: relative to the workspace root when inside it.
    pub fn display(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.root)
            .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
    }

    /// Reads `path` from disk and adds it.
    pub fn load(&mut self, path: &Path) -> std::io::Result<FileId> {
        if let Some(&id) = self.by_path.get(path) {
            return Ok(id);
        }
        let text = std::fs::read_to_string(path)?;
        Ok(self.add(path.to_path_buf(), text))
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
        assert_eq!(f.display, PathBuf::from("src/lib.rs"));
        assert!(map.text(Path::new("src/lib.rs")).is_some());
    }

    #[test]
    fn lexical_normalisation() {
        let cases = [
            (
                "/w/benches/../examples/e/model.rs",
                "/w/examples/e/model.rs",
            ),
            ("/w/./src/./a/../b.rs", "/w/src/b.rs"),
            ("/../x.rs", "/x.rs"),
            ("../a/../../b", "../../b"),
            ("a/..", "."),
            ("src/lib.rs", "src/lib.rs"),
        ];
        for (from, to) in cases {
            assert_eq!(lexical(Path::new(from)), PathBuf::from(to), "{from}");
        }
        // A path that does not exist is normalised lexically.
        let missing = Path::new("/nonexistent-nosync/a/../b.rs");
        assert_eq!(
            normalize(missing),
            PathBuf::from("/nonexistent-nosync/b.rs")
        );
    }
}
