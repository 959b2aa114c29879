//! Paths as URIs (SARIF's artifact locations, and the file in a fingerprint): relative paths
//! are relative URIs against `%SRCROOT%`, absolute ones `file://` URIs.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use std::path::Path;

/// A relative path becomes a relative URI against `%SRCROOT%`; an absolute one a `file://` URI.
pub(crate) fn file_uri(path: &Path) -> (String, Option<&'static str>) {
    let text = path.to_string_lossy().replace('\\', "/");
    if path.is_absolute() {
        let text = if text.starts_with('/') {
            text
        } else {
            format!("/{text}")
        };
        (format!("file://{}", percent_encode(&text)), None)
    } else {
        let text = text.strip_prefix("./").unwrap_or(&text);
        (percent_encode(text), Some("%SRCROOT%"))
    }
}

/// A directory as a `file://` URI ending in `/` (SARIF's `%SRCROOT%`).
pub(crate) fn directory_uri(path: &Path) -> String {
    let (mut uri, _) = file_uri(path);
    if !path.is_absolute() {
        uri = format!("file:///{uri}");
    }
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// What a URI path keeps as is: RFC 3986's unreserved characters and `/`.
const URI_PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// Percent-encodes every byte outside RFC 3986's unreserved set and `/`.
fn percent_encode(text: &str) -> String {
    utf8_percent_encode(text, URI_PATH).to_string()
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
            file_uri(Path::new("/users/u/.cargo/x.rs")),
            ("file:///users/u/.cargo/x.rs".to_owned(), None)
        );
        assert_eq!(directory_uri(Path::new("/w/repo")), "file:///w/repo/");
    }
}
