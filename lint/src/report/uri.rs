//! Paths as URIs (SARIF's artifact locations, and the file in a fingerprint): relative paths
//! are relative URIs against `%SRCROOT%`, absolute ones `file://` URIs, both encoded by
//! [`url`] (the WHATWG URL Standard's path encoding; a non-UTF-8 path's raw bytes on Unix).

use std::path::{Component, Path};
use url::Url;

/// The absolute directory a relative path is joined to, so that [`url`] encodes it as it
/// encodes a file path, and that the URI relative to it is the relative path's URI.
const ROOT: &str = if cfg!(windows) { r"C:\" } else { "/" };

/// A relative path becomes a relative URI against `%SRCROOT%`; an absolute one a `file://` URI.
pub(crate) fn file_uri(path: &Path) -> (String, Option<&'static str>) {
    if path.is_absolute() {
        (absolute(path).into(), None)
    } else {
        (relative(path), Some("%SRCROOT%"))
    }
}

/// A directory as a `file://` URI ending in `/` (SARIF's `%SRCROOT%`).
pub(crate) fn directory_uri(path: &Path) -> String {
    let url = if path.is_absolute() {
        Url::from_directory_path(path).ok()
    } else {
        Url::from_directory_path(Path::new(ROOT).join(path)).ok()
    };
    let mut uri: String = url.unwrap_or_else(|| segments(path)).into();
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// An absolute path's `file://` URL; [`segments`] where `url` has none for it (on Windows: a
/// non-UTF-8 path, a device path, a share whose server is not an ASCII host name).
fn absolute(path: &Path) -> Url {
    Url::from_file_path(path).unwrap_or_else(|()| segments(path))
}

/// A relative path's URI: its URL under [`ROOT`], relative to [`ROOT`]'s. A first segment
/// with a `:` gets `./` before it, or it would read as a scheme (RFC 3986, section 4.2).
fn relative(path: &Path) -> String {
    let root = Path::new(ROOT);
    let uri = Url::from_directory_path(root).ok().and_then(|base| {
        let url = Url::from_file_path(root.join(path)).ok()?;
        base.make_relative(&url)
    });
    let uri = uri.unwrap_or_else(|| segments(path).path().trim_start_matches('/').to_owned());
    match uri.split('/').next() {
        Some(first) if first.contains(':') => format!("./{uri}"),
        _ => uri,
    }
}

/// The last resort: `file:///` and the path's named components, each one a segment (its text,
/// U+FFFD for what is not UTF-8), the prefix of a Windows path included.
fn segments(path: &Path) -> Url {
    let mut url = Url::parse("file:///").expect("`file:///` is a URL");
    if let Ok(mut out) = url.path_segments_mut() {
        out.pop_if_empty()
            .extend(path.components().filter_map(|component| match component {
                Component::Prefix(prefix) => Some(prefix.as_os_str().to_string_lossy()),
                Component::Normal(name) => Some(name.to_string_lossy()),
                Component::RootDir | Component::CurDir | Component::ParentDir => None,
            }));
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_to_srcroot_or_file_uris() {
        assert_eq!(
            file_uri(Path::new("src/my file.rs")),
            ("src/my%20file.rs".to_owned(), Some("%SRCROOT%"))
        );
        assert_eq!(
            file_uri(Path::new("./src/lib.rs")),
            ("src/lib.rs".to_owned(), Some("%SRCROOT%"))
        );
        assert_eq!(directory_uri(Path::new("/w/repo")), "file:///w/repo/");
        assert_eq!(directory_uri(Path::new("/w/repo/")), "file:///w/repo/");
    }

    /// What the URL Standard's path encoding keeps (sub-delimiters, `+` of a registry
    /// directory's version) and what it encodes (space, `#`, `?`, `%`, non-ASCII).
    #[cfg(unix)]
    #[test]
    fn absolute_paths_are_file_urls_as_url_encodes_them() {
        let uri = |path: &str| file_uri(Path::new(path));
        assert_eq!(
            uri("/users/u/.cargo/x.rs"),
            ("file:///users/u/.cargo/x.rs".to_owned(), None)
        );
        assert_eq!(
            uri("/r/toml-1.2.2+spec-1.1.0/src/a b#c?d%e.rs"),
            (
                "file:///r/toml-1.2.2+spec-1.1.0/src/a%20b%23c%3Fd%25e.rs".to_owned(),
                None
            )
        );
        assert_eq!(
            uri("/é/ü.rs"),
            ("file:///%C3%A9/%C3%BC.rs".to_owned(), None)
        );
        assert_eq!(
            uri("src/a b#c.rs"),
            ("src/a%20b%23c.rs".to_owned(), Some("%SRCROOT%"))
        );
        assert_eq!(uri("a:b.rs"), ("./a:b.rs".to_owned(), Some("%SRCROOT%")));
        assert_eq!(uri("../x.rs"), ("../x.rs".to_owned(), Some("%SRCROOT%")));
    }

    /// A file name that is not UTF-8 keeps its bytes (as `url` writes them), relative or not.
    #[cfg(unix)]
    #[test]
    fn non_utf8_paths_keep_their_bytes() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let name = OsStr::from_bytes(b"src/caf\xe9.rs");
        assert_eq!(
            file_uri(Path::new(name)),
            ("src/caf%E9.rs".to_owned(), Some("%SRCROOT%"))
        );
        assert_eq!(
            file_uri(&Path::new("/w").join(name)),
            ("file:///w/src/caf%E9.rs".to_owned(), None)
        );
    }

    /// Windows paths: a drive is the URL's first segment, a share's server its host; `\` is
    /// a separator on Windows and a character of the name elsewhere.
    #[test]
    fn windows_paths() {
        if cfg!(windows) {
            assert_eq!(
                file_uri(Path::new(r"C:\w\src\lib.rs")),
                ("file:///C:/w/src/lib.rs".to_owned(), None)
            );
            assert_eq!(
                file_uri(Path::new(r"\\server\share\lib.rs")),
                ("file://server/share/lib.rs".to_owned(), None)
            );
            assert_eq!(
                file_uri(Path::new(r"src\lib.rs")),
                ("src/lib.rs".to_owned(), Some("%SRCROOT%"))
            );
            assert_eq!(directory_uri(Path::new(r"C:\w")), "file:///C:/w/");
        } else {
            assert_eq!(
                file_uri(Path::new(r"src\lib.rs")),
                ("src%5Clib.rs".to_owned(), Some("%SRCROOT%"))
            );
            assert_eq!(
                file_uri(Path::new(r"C:\w\lib.rs")),
                ("./C:%5Cw%5Clib.rs".to_owned(), Some("%SRCROOT%"))
            );
        }
    }

    /// The lock file keeps `url`'s IDNA back end at `idna_adapter` 1.0 (the workspace manifest
    /// says why), so that a `cargo update` does not bring ICU4X back unnoticed.
    #[test]
    fn the_lock_keeps_idna_without_unicode_data() {
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock"))
            .expect("the workspace's Cargo.lock");
        let versions: Vec<&str> = lock
            .split("[[package]]")
            .filter(|package| package.contains("\nname = \"idna_adapter\"\n"))
            .filter_map(|package| package.lines().find_map(|l| l.strip_prefix("version = ")))
            .collect();
        assert_eq!(
            versions,
            ["\"1.0.0\""],
            "restore it: `cargo update -p idna_adapter --precise 1.0.0`"
        );
    }
}
