//! Every `NOSYNC_*` variable the runtime reads, and the one line it writes when it cannot act
//! on one.
//!
//! The variables are read here only ([`var`]). One policy for a value nosync does not know: an
//! [`EnvError`] that names the variable, the value and what it takes, written as one line on
//! stderr ([`say`]: a logger may not be installed yet), and the default stands.
//! `hook::install()` returns `NOSYNC_HOOK`'s as a `HookError` too. The hook's variables are
//! named here, below the hook, so that one module reads them all.

use std::fmt;
use std::io::Write;

/// The mode of the checks (`allow|log|warn|error|panic`), read once.
pub const MODE_ENV: &str = "NOSYNC_MODE";
/// The process-wide default granularity (`declared` or `actual`), read once.
#[cfg_attr(
    not(any(feature = "cuda", feature = "hook")),
    allow(dead_code, unreachable_pub)
)]
pub const GRANULARITY_ENV: &str = "NOSYNC_GRANULARITY";
/// `1` (or `auto`, `cupti`, `interpose`) installs the hook when the first forbid scope opens
/// (and keeps it for the process); `0` or unset does nothing. `cupti` and `interpose` also pick
/// the backend of every `hook::install` (which does not name one); any other value makes
/// `install` an error.
#[cfg_attr(not(feature = "hook"), allow(dead_code, unreachable_pub))]
pub const HOOK_ENV: &str = "NOSYNC_HOOK";
/// The report of host waits: `summary`, `trace:PATH`, `json:PATH` (comma-separated), or `off`.
#[cfg_attr(not(feature = "hook"), allow(dead_code, unreachable_pub))]
pub const REPORT_ENV: &str = "NOSYNC_REPORT";
/// Where to look for libcupti when the loader does not find it: a file or a directory.
#[cfg_attr(not(feature = "hook"), allow(dead_code, unreachable_pub))]
pub const CUPTI_ENV: &str = "NOSYNC_CUPTI";

/// The value of `name`, trimmed; `None` when unset or empty. A value that is not UTF-8 is read
/// lossily: it then names nothing nosync knows, and is reported as such.
pub(crate) fn var(name: &'static str) -> Option<String> {
    let value = std::env::var_os(name)?;
    let value = value.to_string_lossy().trim().to_owned();
    (!value.is_empty()).then_some(value)
}

/// A variable's value that nosync does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvError {
    /// The variable.
    pub(crate) var: &'static str,
    /// Its value, or the part of it that is wrong.
    pub(crate) value: String,
    /// What it takes, for the message.
    pub(crate) takes: &'static str,
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: `{}` is none of {}",
            self.var, self.value, self.takes
        )
    }
}

impl std::error::Error for EnvError {}

/// Reads `name` and parses it; an unknown value is one line on stderr, and `default` stands.
pub(crate) fn read<T>(
    name: &'static str,
    parse: impl FnOnce(&str) -> Result<T, EnvError>,
    default: T,
    fallback: &str,
) -> T {
    match var(name).map(|v| parse(&v)) {
        None => default,
        Some(Ok(value)) => value,
        Some(Err(e)) => {
            say(&format!("{e}; {fallback}"));
            default
        }
    }
}

/// One line for the user on stderr, `nosync: {message}`: where no logger may be installed yet.
/// Written to a locked stderr, whose errors are ignored: it never panics.
pub(crate) fn say(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "nosync: {message}");
}

/// The value of `name` as a path (not trimmed, any bytes); `None` when unset or empty.
#[cfg_attr(not(feature = "hook"), allow(dead_code, unreachable_pub))]
pub(crate) fn path(name: &'static str) -> Option<std::path::PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
}
