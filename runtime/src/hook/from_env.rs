//! `NOSYNC_HOOK`: which backend `install()` takes, and the install on the first forbid scope.

use std::sync::Once;

use super::{Backend, HOOK_ENV, HookError, REPORT_ENV, install_with};
use crate::guard::env::{self, EnvError, say};

/// What `NOSYNC_HOOK` takes, for its error.
const TAKES: &str = "0, 1, auto, cupti, interpose";

/// The error of a `NOSYNC_HOOK` value nosync does not know.
pub(super) fn env_error(value: &str) -> EnvError {
    EnvError {
        var: HOOK_ENV,
        value: value.to_owned(),
        takes: TAKES,
    }
}

/// What `NOSYNC_HOOK` says: `None` for "do not install on the first scope" (unset, empty, `0`),
/// else the backend it asks for.
pub(super) fn env_backend() -> Result<Option<Backend>, HookError> {
    match env::var(HOOK_ENV).as_deref() {
        None | Some("0") => Ok(None),
        Some("1" | "auto") => Ok(Some(Backend::Auto)),
        Some("cupti") => Ok(Some(Backend::Cupti)),
        Some("interpose") => Ok(Some(Backend::Interpose)),
        Some(value) => Err(HookError::Env {
            value: value.to_owned(),
        }),
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
    let report = env::var(REPORT_ENV).is_some();
    if env::var(HOOK_ENV).as_deref() == Some("0") {
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
                let value = env::var(HOOK_ENV).unwrap_or_default();
                format!("{HOOK_ENV}={value} but the hook was not installed: {e}")
            }
        },
        Err(e) => format!("{e}; the hook was not installed"),
    };
    say(&message);
}
