//! The safety net under every stage: a panic in the lint's own code becomes an
//! `internal-error` diagnostic that names the stage and the crate, item or root being
//! processed, and the rest of the workspace is still analysed.
//!
//! [`catch`] runs a closure under `catch_unwind`. While a thread is inside a net, the
//! panic hook installed here records the panic's message and location for that thread
//! instead of printing them (they go into the diagnostic); outside a net it defers to
//! the hook that was installed before, so tests and other panics behave as usual.

use crate::diagnostics::{Code, Diagnostic, Span};
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, PanicHookInfo};
use std::sync::Once;

thread_local! {
    /// How many nets this thread is inside.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The last panic caught on this thread: message and `file:line:col`.
    static LAST: RefCell<Option<Caught>> = const { RefCell::new(None) };
}

/// A panic caught by [`catch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caught {
    pub message: String,
    /// Where in the lint it panicked (`lint/core/src/resolve/scope.rs:71:53`), when known.
    pub location: Option<String>,
}

impl Caught {
    /// The `internal-error` diagnostic: `stage` is what the lint was doing ("resolving
    /// names"), `subject` what on ("crate `cubecl_core`"), `lost` what is therefore not
    /// analysed ("its items are not analysed").
    pub fn diagnostic(&self, stage: &str, subject: &str, lost: &str, at: Span) -> Diagnostic {
        let location = self
            .location
            .as_deref()
            .map_or_else(String::new, |l| format!(" at {l}"));
        Diagnostic::new(
            Code::InternalError,
            format!("internal error while {stage} {subject}; {lost}"),
            at,
        )
        .with_label("the lint failed here")
        .with_note(
            format!("the lint panicked{location}: {}", self.message),
            None,
        )
        .with_note(
            "this is a bug in nosync-lint, not in your code; everything else was analysed",
            None,
        )
    }
}

/// Unwinds again with a panic caught elsewhere (in a parallel task, on another thread):
/// the [`catch`] this thread is inside returns that panic, its message and location.
pub fn rethrow(caught: Caught) -> ! {
    LAST.with(|l| *l.borrow_mut() = Some(caught));
    std::panic::resume_unwind(Box::new("a panic caught in a parallel task"))
}

/// Runs `f`; a panic inside it is caught and returned as [`Caught`].
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Caught> {
    install_hook();
    DEPTH.with(|d| d.set(d.get() + 1));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get() - 1));
    result.map_err(|payload| {
        let recorded = LAST.with(|l| l.borrow_mut().take());
        recorded.unwrap_or_else(|| Caught {
            message: payload_text(payload.as_ref()),
            location: None,
        })
    })
}

/// [`catch`], with a caught panic pushed onto `diags` as its `internal-error`.
pub fn guard<T>(
    diags: &mut Vec<Diagnostic>,
    what: impl FnOnce(&Caught) -> Diagnostic,
    f: impl FnOnce() -> T,
) -> Option<T> {
    match catch(f) {
        Ok(v) => Some(v),
        Err(caught) => {
            diags.push(what(&caught));
            None
        }
    }
}

/// A fault-injection point for the nets' own tests (`panics/tests.rs`): in this crate's
/// unit-test build, an item named `nosync_lint_test_panic_in_<stage>` panics when `stage`
/// reaches it. In every other build (the lint's, its tests' and benches') this is an empty
/// inline fn: no feature turns it on, so no dependent can compile it in.
#[cfg(test)]
pub(crate) fn failpoint(stage: &str, name: &str) {
    if name.strip_prefix("nosync_lint_test_panic_in_") == Some(stage) {
        panic!("failpoint `{stage}` reached");
    }
}

#[cfg(not(test))]
#[inline(always)]
pub(crate) fn failpoint(_stage: &str, _name: &str) {}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if DEPTH.with(Cell::get) > 0 {
                LAST.with(|l| *l.borrow_mut() = Some(record(info)));
            } else {
                previous(info);
            }
        }));
    });
}

fn record(info: &PanicHookInfo<'_>) -> Caught {
    Caught {
        message: payload_text(info.payload()),
        location: info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column())),
    }
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_owned()
    }
}

#[cfg(test)]
mod tests;
