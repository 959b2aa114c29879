//! Every mode inside a forbid scope, the panicking and `Drop` paths, and the log records.
//! `Mode::Warn` writes to stderr, so it is tested in a subprocess by `env.rs`.
#![cfg(not(nosync_off))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, Once, PoisonError};

use nosync::{Mode, SyncSite};

/// Captures `log` records of target `nosync` (the logger is process-wide; tests filter by site).
struct Capture;

static RECORDS: Mutex<Vec<(log::Level, String)>> = Mutex::new(Vec::new());

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        if record.target() == "nosync" {
            let line = record.args().to_string();
            RECORDS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((record.level(), line));
        }
    }
    fn flush(&self) {}
}

/// Installs the capturing logger. A test that checks log records calls this before it logs
/// anything: records are written once per site, so one logged before the logger is installed
/// is lost for good (whether another test installed it first depends on test order).
fn install_logger() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        log::set_logger(&Capture).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Trace);
    });
}

/// The captured `nosync` records that name `api`.
fn logged(api: &str) -> Vec<(log::Level, String)> {
    install_logger();
    let records = RECORDS.lock().unwrap_or_else(PoisonError::into_inner);
    let needle = format!("`{api}`");
    records
        .iter()
        .filter(|(_, l)| l.contains(&needle))
        .cloned()
        .collect()
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

#[test]
fn the_default_mode_follows_debug_assertions_or_the_environment() {
    // `env.rs` sets NOSYNC_MODE in subprocesses; here it is normally unset.
    let build = if cfg!(debug_assertions) {
        Mode::Panic
    } else {
        Mode::Log
    };
    assert_eq!(Mode::default(), build);
    let from_env = std::env::var("NOSYNC_MODE")
        .ok()
        .and_then(|v| v.parse().ok());
    assert_eq!(nosync::mode(), from_env.unwrap_or(build));
}

#[test]
fn allow_mode_ignores_the_violation() {
    static SITE: SyncSite = SyncSite::does("allow_mode_site", "blocks");
    install_logger();
    let r = nosync::with_mode(Mode::Allow, || {
        nosync::no_sync(|| nosync::declare_sync(&SITE))
    });
    assert!(r.is_ok());
    assert!(logged("allow_mode_site").is_empty());
}

#[test]
fn log_mode_logs_once_per_site() {
    static FIRST: SyncSite = SyncSite::may("log_mode_first", "may block");
    static SECOND: SyncSite = SyncSite::does("log_mode_second", "blocks");
    install_logger();
    nosync::with_mode(Mode::Log, || {
        let _forbid = nosync::forbid();
        for _ in 0..3 {
            assert!(nosync::declare_sync(&FIRST).is_ok());
        }
        assert!(nosync::declare_sync(&SECOND).is_ok());
    });
    let first = logged("log_mode_first");
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0].0, log::Level::Warn);
    assert!(
        first[0]
            .1
            .contains("(may block) inside a nosync::forbid() scope"),
        "{first:?}"
    );
    assert_eq!(logged("log_mode_second").len(), 1);
}

#[test]
fn error_mode_returns_the_violation() {
    static SITE: SyncSite = SyncSite::does("error_mode_site", "blocks");
    let r = nosync::with_mode(Mode::Error, || {
        nosync::no_sync(|| nosync::declare_sync(&SITE))
    });
    let v = r.expect_err("a forbidden sync in Mode::Error");
    assert_eq!(v.site().api, "error_mode_site");
    let as_error: Box<dyn std::error::Error> = Box::new(v.clone());
    assert_eq!(as_error.to_string(), v.to_string());
    assert!(!v.to_string().contains('\n'), "one line");
}

#[test]
fn error_mode_panics_where_the_error_cannot_be_returned() {
    static SITE: SyncSite = SyncSite::does("or_panic_site", "blocks");
    let r = catch_unwind(|| {
        nosync::with_mode(Mode::Error, || {
            nosync::no_sync(|| nosync::__private::declare_sync_or_panic(&SITE));
        });
    });
    let message = panic_message(&*r.expect_err("declare_sync_or_panic panics in Mode::Error"));
    assert!(
        message.starts_with("`or_panic_site` blocks the host (blocks)"),
        "{message}"
    );
}

#[test]
fn panic_mode_panics_with_the_message_at_the_caller() {
    static SITE: SyncSite = SyncSite::does("panic_mode_site", "blocks");
    let r = catch_unwind(|| {
        nosync::with_mode(Mode::Panic, || {
            nosync::no_sync(|| nosync::declare_sync(&SITE))
        })
    });
    let message = panic_message(&*r.expect_err("Mode::Panic panics"));
    assert!(
        message.starts_with("`panic_mode_site` blocks the host (blocks) inside"),
        "{message}"
    );
    assert!(message.ends_with("wrap it in nosync::allow_sync(..) if this wait is intended"));
    assert!(!nosync::is_forbidden(), "unwinding restored the scope");
}

#[test]
fn the_mode_does_not_matter_outside_a_forbid_scope() {
    static SITE: SyncSite = SyncSite::does("outside_site", "blocks");
    for m in Mode::ALL {
        nosync::with_mode(m, || {
            assert!(nosync::declare_sync(&SITE).is_ok());
            nosync::__private::declare_sync_or_panic(&SITE);
            nosync::allow_sync(|| {
                nosync::no_sync(|| nosync::allow_sync(|| nosync::declare_sync(&SITE)))
            })
            .expect("allowed");
        });
    }
}

struct SyncsOnDrop(&'static SyncSite);

impl Drop for SyncsOnDrop {
    fn drop(&mut self) {
        nosync::declare_sync_in_drop(self.0);
    }
}

#[test]
fn declare_sync_in_drop_never_panics_but_is_recorded_and_logged() {
    static SITE: SyncSite = SyncSite::does("drop_site", "frees device memory synchronously");
    install_logger();
    for m in Mode::ALL {
        let ((), report) = nosync::count_syncs(|| {
            nosync::with_mode(m, || nosync::no_sync(|| drop(SyncsOnDrop(&SITE))));
        });
        assert_eq!(
            (report.count(&SITE), report.forbidden()),
            (1, 1),
            "{m}: {report}"
        );
    }
    let records = logged("drop_site");
    let errors: Vec<_> = records
        .iter()
        .filter(|(l, _)| *l == log::Level::Error)
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "logged once per site in Error and Panic modes: {records:?}"
    );
    assert!(errors[0].1.ends_with("(in Drop)"), "{errors:?}");
}

#[test]
fn never_panics_while_the_thread_is_already_panicking() {
    static SITE: SyncSite = SyncSite::does("unwinding_site", "blocks");
    install_logger();
    struct DeclaresWhileUnwinding;
    impl Drop for DeclaresWhileUnwinding {
        fn drop(&mut self) {
            // A panic here would abort the process: the test passing proves it did not.
            let r = nosync::declare_sync(&SITE);
            assert!(std::thread::panicking() && r.is_ok());
        }
    }
    let (r, report) = nosync::count_syncs(|| {
        catch_unwind(AssertUnwindSafe(|| {
            nosync::with_mode(Mode::Panic, || {
                let _forbid = nosync::forbid();
                let _declares = DeclaresWhileUnwinding;
                panic!("the first panic");
            })
        }))
    });
    assert_eq!(
        (report.count(&SITE), report.forbidden()),
        (1, 1),
        "{report}"
    );
    assert_eq!(
        panic_message(&*r.expect_err("the first panic")),
        "the first panic"
    );
    let records = logged("unwinding_site");
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0].1.ends_with("(while panicking)"), "{records:?}");
}

#[test]
fn with_mode_is_per_thread() {
    nosync::with_mode(Mode::Allow, || {
        let other = std::thread::spawn(nosync::mode).join().expect("join");
        assert_ne!(other, Mode::Allow);
        assert_eq!(nosync::mode(), Mode::Allow);
    });
}
