//! `NOSYNC_HOOK=1`: the install on the first forbid scope.

use std::sync::Once;

use super::common::{Backend, env_backend};
use super::{HOOK_ENV, REPORT_ENV, install_with};
use crate::guard::env::{self, say};

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
