//! Static descriptions of blocking operations.

/// Whether an operation always blocks the host or only under some conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyncKind {
    /// The operation can block the host (for example a copy into pageable host memory, or an
    /// allocation that may trigger an implicit synchronisation).
    May,
    /// The operation always blocks the host until the device catches up.
    Does,
}

impl SyncKind {
    /// The lowercase name used in reports: `may` or `does`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SyncKind::May => "may",
            SyncKind::Does => "does",
        }
    }
}

/// A blocking operation, described once in a `static` and passed to [`declare_sync`](crate::declare_sync).
///
/// ```
/// use nosync::SyncSite;
/// static SYNCHRONIZE: SyncSite =
///     SyncSite::does("Stream::synchronize", "waits for all work on the stream");
/// assert_eq!(SYNCHRONIZE.api, "Stream::synchronize");
/// ```
///
/// Sites are identified by address: keep each one in a `static`, never in a `const`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SyncSite {
    /// The blocking API as users know it, e.g. `Stream::synchronize`.
    pub api: &'static str,
    /// Why it blocks, e.g. `waits for all work on the stream`.
    pub reason: &'static str,
    /// Whether it always blocks or only may.
    pub kind: SyncKind,
}

impl SyncSite {
    /// A site of the given kind.
    pub const fn new(api: &'static str, reason: &'static str, kind: SyncKind) -> Self {
        SyncSite { api, reason, kind }
    }

    /// A site that may block the host.
    pub const fn may(api: &'static str, reason: &'static str) -> Self {
        Self::new(api, reason, SyncKind::May)
    }

    /// A site that always blocks the host.
    pub const fn does(api: &'static str, reason: &'static str) -> Self {
        Self::new(api, reason, SyncKind::Does)
    }
}
