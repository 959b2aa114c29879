//! A dependency as a manifest declares it, and the key its source is compared by: the
//! facts the disk (the lock file, `[patch]`), the manifests and the resolver share.

use cargo_metadata::semver::VersionReq;
use std::path::PathBuf;

/// A dependency as a manifest declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct DepDecl {
    /// The name features and code use (the rename, else the package name).
    pub key: String,
    pub package: String,
    pub req: VersionReq,
    pub optional: bool,
    pub default_features: bool,
    pub features: Vec<String>,
    pub dev: bool,
    /// Whether it applies to the host: a dependency of another platform's
    /// `[target.X.*]` table is resolved all the same (cargo's dependency resolver, whose
    /// features `cargo metadata` reports, unifies every platform's), but is no edge of
    /// the graph (`--filter-platform`), and a package reached only through such edges is
    /// not in it.
    pub host: bool,
    /// A path dependency's directory.
    pub path: Option<PathBuf>,
    /// A git dependency's URL.
    pub git: Option<String>,
}

/// A git source as `[patch]` keys and dependencies compare it: without the `git+` of a
/// dependency's source, its `?rev=..` or `#commit`, a trailing `/` or `.git`, in lower
/// case (cargo canonicalises GitHub URLs so).
pub(super) fn source_key(url: &str) -> String {
    let url = url.strip_prefix("git+").unwrap_or(url);
    let url = url
        .split(['?', '#'])
        .next()
        .unwrap_or(url)
        .trim_end_matches('/');
    url.strip_suffix(".git").unwrap_or(url).to_ascii_lowercase()
}
