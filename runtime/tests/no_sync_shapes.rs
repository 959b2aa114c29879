//! `#[no_sync]` on fns returning `Result`: the body runs in a closure (so that a violation the
//! CUPTI hook kept for the scope can become the `Err`); every shape that compiled before still
//! compiles and behaves the same: borrows of `&mut self`, generic errors, `?` conversions, early
//! returns, errors that cannot take a violation, `impl Trait`, `unsafe` and `#[track_caller]`.
#![cfg(not(nosync_off))]

use nosync::{Mode, SyncSite, SyncViolation, no_sync};

static WAIT: SyncSite = SyncSite::does("wait", "blocks");

struct Counter(u32);

impl Counter {
    #[no_sync]
    fn bump(&mut self, by: u32) -> Result<&mut u32, String> {
        if by == 0 {
            return Err("zero".to_owned());
        }
        self.0 += by;
        Ok(&mut self.0)
    }
}

#[derive(Debug, PartialEq)]
struct AppError(String);

impl From<std::num::ParseIntError> for AppError {
    fn from(e: std::num::ParseIntError) -> Self {
        AppError(e.to_string())
    }
}

#[no_sync]
fn parse(s: &str) -> Result<u8, AppError> {
    let v: u8 = s.parse()?;
    Ok(v)
}

#[no_sync]
fn generic<E: From<String>>(fail: bool) -> Result<u8, E> {
    if fail {
        Err(String::from("failed"))?;
    }
    Ok(1)
}

#[no_sync]
fn lazy(n: u8) -> Result<impl Iterator<Item = u8>, String> {
    Ok(0..n)
}

#[no_sync]
#[track_caller]
fn tracked() -> Result<u32, String> {
    Ok(std::panic::Location::caller().line())
}

/// # Safety
/// None needed; `unsafe` only checks that the attribute keeps the body in the fn.
#[no_sync]
unsafe fn raw(p: *const u8) -> Result<u8, String> {
    // SAFETY: the caller passes a valid pointer.
    Ok(unsafe { *p })
}

#[no_sync]
fn declares() -> Result<(), SyncViolation> {
    nosync::declare_sync(&WAIT)?;
    Ok(())
}

#[test]
fn result_fns_keep_their_meaning() {
    let mut c = Counter(1);
    *c.bump(2).unwrap() += 10;
    assert_eq!(c.0, 13);
    assert_eq!(c.bump(0), Err("zero".to_owned()));
    assert_eq!(parse("7"), Ok(7));
    assert!(parse("x").unwrap_err().0.contains("invalid digit"));
    assert_eq!(generic::<String>(true), Err("failed".to_owned()));
    assert_eq!(generic::<String>(false), Ok(1));
    assert_eq!(lazy(3).unwrap().sum::<u8>(), 3);
    let line = line!() + 1;
    assert_eq!(tracked(), Ok(line), "#[track_caller] still sees the caller");
    // SAFETY: a valid pointer.
    assert_eq!(unsafe { raw(&5) }, Ok(5));
}

#[test]
fn the_scope_is_open_in_the_closure_and_declared_syncs_still_return() {
    let err = nosync::with_mode(Mode::Error, declares).unwrap_err();
    assert_eq!(err.scope_function(), Some("declares"));
    assert!(!nosync::is_forbidden(), "the scope ended with the fn");
    let (_, report) = nosync::count_syncs(|| nosync::with_mode(Mode::Log, declares));
    assert_eq!(report.forbidden(), 1, "{report}");
    no_sync(|| assert!(parse("1").is_ok()));
}
