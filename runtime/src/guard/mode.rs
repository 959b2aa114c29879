//! What a violation does: the process-wide mode, its environment default and per-thread overrides.

use super::env::{self, EnvError};
use std::cell::Cell;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// The environment variable read (once) for the process-wide default mode.
pub use super::env::MODE_ENV;

/// What [`declare_sync`](crate::declare_sync) does when it runs inside a forbid scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Nothing: the violation is ignored (it still shows in [`count_syncs`](crate::count_syncs)).
    Allow,
    /// One `log` record (target `nosync`, level `warn`) per site, the first time it is hit.
    Log,
    /// One line on stderr per site, the first time it is hit.
    Warn,
    /// `declare_sync` returns `Err(SyncViolation)`.
    Error,
    /// `declare_sync` panics with the violation's message.
    Panic,
}

impl Mode {
    /// Every mode, in the order of [`Mode::NAMES`].
    pub const ALL: [Mode; 5] = [Mode::Allow, Mode::Log, Mode::Warn, Mode::Error, Mode::Panic];
    /// The accepted spellings, as in `NOSYNC_MODE`.
    pub const NAMES: [&'static str; 5] = ["allow", "log", "warn", "error", "panic"];

    /// The built-in default: `Panic` when the `nosync` crate is built with `debug_assertions`,
    /// `Log` without.
    pub const fn build_default() -> Mode {
        if cfg!(debug_assertions) {
            Mode::Panic
        } else {
            Mode::Log
        }
    }

    /// The lowercase name (`allow`, `log`, `warn`, `error`, `panic`).
    pub const fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    const fn to_u8(self) -> u8 {
        self as u8 + 1
    }

    fn from_u8(v: u8) -> Option<Mode> {
        Mode::ALL.get(usize::from(v).checked_sub(1)?).copied()
    }
}

impl Default for Mode {
    fn default() -> Self {
        Mode::build_default()
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no [`Mode`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseModeError {
    input: String,
}

impl fmt::Display for ParseModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = Mode::NAMES.join(", ");
        write!(
            f,
            "invalid nosync mode `{}`; expected one of: {names}",
            self.input
        )
    }
}

impl std::error::Error for ParseModeError {}

impl FromStr for Mode {
    type Err = ParseModeError;

    /// Case-insensitive, surrounding whitespace ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| ParseModeError {
                input: s.to_owned(),
            })
    }
}

/// 0: not set by `set_mode`, fall back to the environment default.
static PROCESS_MODE: AtomicU8 = AtomicU8::new(0);
static ENV_MODE: OnceLock<Mode> = OnceLock::new();

thread_local! {
    /// 0: no `with_mode` override on this thread.
    static THREAD_MODE: Cell<u8> = const { Cell::new(0) };
}

/// Sets the process-wide mode (overrides `NOSYNC_MODE`; `with_mode` overrides still win).
pub fn set_mode(m: Mode) {
    PROCESS_MODE.store(m.to_u8(), Ordering::Relaxed);
}

/// The mode in effect on this thread: the innermost [`with_mode`], else the last [`set_mode`],
/// else `NOSYNC_MODE` (read once), else [`Mode::build_default`].
pub fn mode() -> Mode {
    let thread = THREAD_MODE.with(Cell::get);
    Mode::from_u8(thread)
        .or_else(|| Mode::from_u8(PROCESS_MODE.load(Ordering::Relaxed)))
        .unwrap_or_else(env_mode)
}

/// Runs `f` with `m` as this thread's mode; the previous mode comes back afterwards, also when `f`
/// unwinds. Other threads are not affected.
pub fn with_mode<R>(m: Mode, f: impl FnOnce() -> R) -> R {
    let _restore = ThreadModeGuard {
        previous: THREAD_MODE.with(|c| c.replace(m.to_u8())),
    };
    f()
}

struct ThreadModeGuard {
    previous: u8,
}

impl Drop for ThreadModeGuard {
    fn drop(&mut self) {
        THREAD_MODE.with(|c| c.set(self.previous));
    }
}

fn env_mode() -> Mode {
    *ENV_MODE.get_or_init(|| {
        let default = Mode::build_default();
        env::read(
            MODE_ENV,
            parse_env,
            default,
            &format!("using the default `{default}`"),
        )
    })
}

/// `NOSYNC_MODE`'s value as a mode.
fn parse_env(value: &str) -> Result<Mode, EnvError> {
    value.parse().map_err(|_| EnvError {
        var: MODE_ENV,
        value: value.to_owned(),
        takes: "allow, log, warn, error, panic",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_name_case_insensitively() {
        for (m, name) in Mode::ALL.into_iter().zip(Mode::NAMES) {
            assert_eq!(name.parse::<Mode>(), Ok(m));
            assert_eq!(format!(" {} ", name.to_uppercase()).parse::<Mode>(), Ok(m));
            assert_eq!(m.to_string(), name);
            assert_eq!(Mode::from_u8(m.to_u8()), Some(m));
        }
        assert_eq!(Mode::from_u8(0), None);
        assert_eq!(Mode::from_u8(6), None);
    }

    #[test]
    fn invalid_names_list_the_valid_ones() {
        let e = "loud".parse::<Mode>().unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid nosync mode `loud`; expected one of: allow, log, warn, error, panic"
        );
    }

    #[test]
    fn env_values() {
        assert_eq!(parse_env("warn"), Ok(Mode::Warn));
        assert_eq!(parse_env("PANIC"), Ok(Mode::Panic));
        let e = parse_env("nope").unwrap_err();
        assert_eq!(
            e.to_string(),
            "NOSYNC_MODE: `nope` is none of allow, log, warn, error, panic"
        );
    }

    #[test]
    fn with_mode_nests_and_restores_on_unwind() {
        with_mode(Mode::Error, || {
            assert_eq!(mode(), Mode::Error);
            with_mode(Mode::Allow, || assert_eq!(mode(), Mode::Allow));
            let caught = std::panic::catch_unwind(|| with_mode(Mode::Warn, || panic!("boom")));
            assert!(caught.is_err());
            assert_eq!(mode(), Mode::Error);
        });
        assert_eq!(THREAD_MODE.with(Cell::get), 0);
    }
}
