//! `NOSYNC_HOOK`: which backend `install()` takes, and the install on the first forbid scope.

use std::sync::Once;

use super::{Backend, HOOK_ENV, HookError, REPORT_ENV, install_with, say};

/// What `NOSYNC_HOOK` says: `None` for "do not install on the first scope" (unset, empty, `0`),
/// else the backend it asks for.
pub(super) fn env_backend() -> Result<Option<Backend>, HookError> {
    let value = std::env::var(HOOK_ENV).unwrap_or_default();
    match value.trim() {
        "" | "0" => Ok(None),
        "1" | "auto" => Ok(Some(Backend::Auto)),
        "cupti" => Ok(Some(Backend::Cupti)),
        "interpose" => Ok(Some(Backend::Interpose)),
        _ => Err(HookError::Env { value }),
    }
}

/// `NOSYNC_HOOK=1`: install on the first forbid scope, once per process. A failure is one line
/// on stderr (a logger may not be installed yet), like an invalid `NOSYNC_MODE`.
#[inline]
pub(crate) fn install_from_env_once() {
    static ONCE: Once = Once::new();
    if !ONCE.is_completed() {
        ONCE.call_once(install_from_env);
    }
}

#[cold]
fn install_from_env() {
    // A report asks for the hook too.
    let report = std::env::var_os(REPORT_ENV).is_some_and(|v| !v.is_empty());
    if std::env::var(HOOK_ENV).is_ok_and(|v| v.trim() == "0") {
        return;
    }
    let message = match env_backend() {
        Ok(None) if !report => return,
        Ok(backend) => match install_with(backend.unwrap_or(Backend::Auto)) {
            Ok(hook) => {
                std::mem::forget(hook); // kept for the process
                return;
            }
            Err(e) if backend.is_none() => {
                format!("{REPORT_ENV} is set but the hook was not installed: {e}")
            }
            Err(e) => {
                let value = std::env::var(HOOK_ENV).unwrap_or_default();
                format!(
                    "{HOOK_ENV}={} but the hook was not installed: {e}",
                    value.trim()
                )
            }
        },
        Err(e) => format!("{e}; the hook was not installed"),
    };
    say(&message);
}
