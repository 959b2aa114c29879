//! Path names, written once: `.`/`..` resolved as cargo does, and the name diagnostics
//! print (relative to the workspace root). Below every stage, so that the workspace stage
//! (which names crate roots) and the loader (which names module files) agree.

use std::path::{Component, Path, PathBuf};

/// `path` with its `.` and `..` components resolved lexically (`a/b/../c` → `a/c`),
/// as cargo does, so that a file reached by two routes (`src/x.rs` and
/// `benches/../src/x.rs`) has one name. Where lexical resolution would name a
/// different file than the path itself (a symlinked directory before a `..`), the path
/// is kept as written: it is checked against the file system only in that case.
///
/// The one function here that touches the file system: only the edges call it (the
/// workspace stage and [`crate::source::DiskLoader`]); the core names files through its
/// loader.
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

/// How diagnostics print `path`: relative to `root` (the workspace root) when inside it,
/// else as given.
pub fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn relative_to_the_root_when_inside_it() {
        let root = Path::new("/w");
        assert_eq!(
            relative(root, Path::new("/w/src/a.rs")),
            PathBuf::from("src/a.rs")
        );
        assert_eq!(
            relative(root, Path::new("/x/a.rs")),
            PathBuf::from("/x/a.rs")
        );
    }
}
