//! The attributes end to end: every accepted form does at run time what its docs say, and every
//! rejection is a located compile error (trybuild cases in `runtime/ui/`).
#![cfg(not(nosync_off))]

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use nosync::{Mode, SyncKind, SyncViolation, allow_sync, no_sync, synchronizes};

thread_local! {
    /// How many times a `#[synchronizes]` body below actually ran on this thread.
    static BODY_RUNS: Cell<u32> = const { Cell::new(0) };
}

fn body_runs() -> u32 {
    BODY_RUNS.with(Cell::get)
}

fn ran() {
    BODY_RUNS.with(|c| c.set(c.get() + 1));
}

const SINK_LINE: u32 = line!() + 1;
#[synchronizes]
fn sink() -> Result<u32, SyncViolation> {
    ran();
    Ok(7)
}

#[synchronizes(reason = "copies the buffer to the host")]
fn download() -> Vec<u8> {
    ran();
    vec![1, 2]
}

#[synchronizes(maybe, reason = "waits only when the queue is full")]
fn maybe_wait() -> Result<(), SyncViolation> {
    Ok(())
}

const HOT_LINE: u32 = line!() + 1;
#[no_sync]
fn hot() -> Result<u32, SyncViolation> {
    assert!(nosync::is_forbidden());
    sink()
}

/// Runs `f` in `mode` and returns its panic message, or `None` if it did not panic.
fn panic_message(mode: Mode, f: impl FnOnce()) -> Option<String> {
    let payload = nosync::with_mode(mode, || catch_unwind(AssertUnwindSafe(f))).err()?;
    let text = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()));
    Some(text.unwrap_or_default())
}

#[test]
fn no_sync_forbids_while_the_body_runs_and_names_the_function() {
    assert!(!nosync::is_forbidden());
    let before = body_runs();
    let violation = nosync::with_mode(Mode::Error, hot).unwrap_err();
    assert!(!nosync::is_forbidden(), "the scope ends with the body");
    assert_eq!(
        body_runs(),
        before,
        "the sink's body must not run after its check failed"
    );
    assert_eq!(violation.scope_function(), Some("hot"));
    assert!(violation.scope_location().file().ends_with("macros.rs"));
    assert_eq!(
        violation.scope_location().line(),
        HOT_LINE,
        "points at #[no_sync]"
    );
    assert_eq!(
        violation.location().line(),
        SINK_LINE,
        "points at #[synchronizes]"
    );
    let site = violation.site();
    assert_eq!((site.api, site.kind), ("sink", SyncKind::Does));
    assert_eq!(site.reason, "declared #[synchronizes]");
    let message = violation.to_string();
    assert!(message.contains("`sink` blocks the host"), "{message}");
    assert!(message.contains("#[no_sync] `hot`"), "{message}");
}

#[test]
fn synchronizes_outside_a_scope_just_runs() {
    let before = body_runs();
    let result = nosync::with_mode(Mode::Error, sink);
    assert_eq!(result.unwrap(), 7);
    assert_eq!(nosync::with_mode(Mode::Panic, download), vec![1, 2]);
    assert_eq!(body_runs(), before + 2);
}

#[test]
fn synchronizes_on_a_non_result_fn_panics_in_error_mode() {
    let before = body_runs();
    let message = panic_message(Mode::Error, || {
        nosync::no_sync(download);
    });
    let message = message.expect("Mode::Error must panic when the fn cannot return the error");
    assert!(message.contains("`download` blocks the host"), "{message}");
    assert!(
        message.contains("copies the buffer to the host"),
        "{message}"
    );
    assert_eq!(body_runs(), before);
    assert!(!nosync::is_forbidden(), "unwinding closes the scope");
}

#[test]
fn synchronizes_on_a_result_fn_panics_in_panic_mode_and_is_quiet_in_allow_mode() {
    let message = panic_message(Mode::Panic, || {
        let _ = hot();
    });
    assert!(message.expect("Mode::Panic panics").contains("`sink`"));
    assert_eq!(nosync::with_mode(Mode::Allow, hot).unwrap(), 7);
}

#[test]
fn maybe_declares_a_may_site() {
    let violation = nosync::with_mode(Mode::Error, || nosync::no_sync(maybe_wait)).unwrap_err();
    assert_eq!(violation.site().kind, SyncKind::May);
    assert_eq!(violation.site().reason, "waits only when the queue is full");
    let ((), report) = nosync::count_syncs(|| maybe_wait().unwrap());
    assert_eq!(
        (
            report.of_kind(SyncKind::May),
            report.of_kind(SyncKind::Does)
        ),
        (1, 0)
    );
    assert_eq!(report.count_api("maybe_wait"), 1);
}

#[derive(Debug)]
enum AppError {
    Sync(SyncViolation),
    Other,
}

impl From<SyncViolation> for AppError {
    fn from(v: SyncViolation) -> Self {
        AppError::Sync(v)
    }
}

#[synchronizes(reason = "reads a flag the device writes")]
fn poll_flag(fail: bool) -> std::result::Result<bool, AppError> {
    if fail {
        return Err(AppError::Other);
    }
    Ok(true)
}

#[synchronizes]
fn boxed() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    Ok(())
}

#[synchronizes]
fn io_alias() -> std::io::Result<()> {
    Ok(())
}

#[test]
fn result_fns_return_the_violation_through_from() {
    let r = nosync::with_mode(Mode::Error, || nosync::no_sync(|| poll_flag(false)));
    assert!(
        matches!(r, Err(AppError::Sync(ref v)) if v.site().api == "poll_flag"),
        "{r:?}"
    );
    let r = nosync::with_mode(Mode::Error, || poll_flag(true));
    assert!(
        matches!(r, Err(AppError::Other)),
        "the body's own errors pass: {r:?}"
    );
    let r = nosync::with_mode(Mode::Error, || nosync::no_sync(boxed));
    let err = r.unwrap_err();
    assert!(err.downcast_ref::<SyncViolation>().is_some(), "{err}");
}

#[test]
fn an_io_result_alias_is_not_seen_as_result_and_panics() {
    let message = panic_message(Mode::Error, || {
        let _ = nosync::no_sync(io_alias);
    });
    assert!(message.expect("aliases panic").contains("`io_alias`"));
}

#[allow_sync(reason = "copies the result once per epoch")]
fn epoch_end() -> Result<u32, SyncViolation> {
    assert!(!nosync::is_forbidden());
    let inner = nosync::with_mode(Mode::Error, hot);
    assert!(!nosync::is_forbidden(), "the inner #[no_sync] scope ended");
    assert!(
        inner.is_err(),
        "a #[no_sync] inside #[allow_sync] forbids again"
    );
    sink()
}

#[no_sync]
fn hot_with_epoch_end() -> Result<u32, SyncViolation> {
    let allowed = epoch_end()?;
    assert!(nosync::is_forbidden(), "back in the #[no_sync] scope");
    Ok(allowed + 1)
}

#[test]
fn allow_sync_allows_inside_no_sync_and_nests_both_ways() {
    let r = nosync::with_mode(Mode::Error, hot_with_epoch_end);
    assert_eq!(r.unwrap(), 8);
    let report = nosync::count_syncs(|| nosync::with_mode(Mode::Allow, hot_with_epoch_end)).1;
    assert_eq!((report.forbidden(), report.allowed()), (1, 1), "{report}");
}

#[no_sync]
fn inner_hot() -> Result<u32, SyncViolation> {
    sink()
}

#[no_sync]
fn outer_hot() -> (Result<u32, SyncViolation>, bool) {
    let inner = inner_hot();
    (inner, nosync::is_forbidden())
}

#[test]
fn nested_no_sync_names_the_innermost_function() {
    let (inner, still_forbidden) = nosync::with_mode(Mode::Error, outer_hot);
    assert_eq!(inner.unwrap_err().scope_function(), Some("inner_hot"));
    assert!(still_forbidden, "the outer scope outlives the inner one");
}

#[no_sync]
#[track_caller]
fn tracked_hot() -> Result<u32, SyncViolation> {
    sink()
}

#[test]
fn with_track_caller_the_scope_begins_at_the_caller() {
    let line = line!() + 1;
    let violation = nosync::with_mode(Mode::Error, || tracked_hot()).unwrap_err();
    assert_eq!(violation.scope_location().line(), line);
    assert!(violation.scope_location().file().ends_with("macros.rs"));
    assert_eq!(violation.scope_function(), Some("tracked_hot"));
}

#[no_sync]
fn panics_inside() {
    panic!("boom");
}

#[test]
fn unwinding_out_of_no_sync_closes_the_scope() {
    let message = panic_message(Mode::Panic, panics_inside);
    assert_eq!(message.as_deref(), Some("boom"));
    assert!(!nosync::is_forbidden());
}

struct Stream {
    queued: u32,
}

impl Stream {
    #[no_sync]
    fn launch(&mut self) -> bool {
        self.queued += 1;
        nosync::is_forbidden()
    }

    #[synchronizes(reason = "waits for all work on the stream")]
    fn synchronize(&self) -> Result<u32, SyncViolation> {
        Ok(self.queued)
    }

    #[no_sync]
    fn step(&mut self) -> Result<u32, SyncViolation> {
        self.launch();
        self.synchronize()
    }

    #[synchronizes]
    fn into_queued(self) -> u32 {
        self.queued
    }
}

trait Device {
    #[synchronizes(reason = "waits for the device")]
    fn wait(&self) -> Result<(), SyncViolation>;

    #[no_sync]
    fn hot_default(&self) -> Result<(), SyncViolation> {
        self.wait()
    }
}

struct Gpu;

impl Device for Gpu {
    #[synchronizes(reason = "waits for the device")]
    fn wait(&self) -> Result<(), SyncViolation> {
        Ok(())
    }
}

#[test]
fn methods_and_trait_default_bodies() {
    let mut stream = Stream { queued: 0 };
    assert!(stream.launch());
    assert_eq!(stream.synchronize().unwrap(), 1);
    let violation = nosync::with_mode(Mode::Error, || stream.step()).unwrap_err();
    assert_eq!(violation.scope_function(), Some("step"));
    assert_eq!(violation.site().api, "synchronize");
    assert_eq!(stream.queued, 2);
    assert_eq!(stream.into_queued(), 2);

    let violation = nosync::with_mode(Mode::Error, || Gpu.hot_default()).unwrap_err();
    assert_eq!(violation.scope_function(), Some("hot_default"));
    assert_eq!(violation.site().reason, "waits for the device");
}

#[no_sync]
fn generic_hot<T: Clone + Default>(items: &[T]) -> impl Iterator<Item = T> + '_ {
    assert!(nosync::is_forbidden());
    items.iter().cloned().chain(std::iter::once(T::default()))
}

#[no_sync]
fn r#loop() -> Option<&'static str> {
    nosync::with_mode(Mode::Error, sink).err()?.scope_function()
}

#[test]
fn generic_fns_and_raw_identifiers() {
    let items: Vec<u8> = generic_hot(&[1, 2]).collect();
    assert_eq!(items, [1, 2, 0]);
    assert_eq!(r#loop(), Some("loop"));
}

#[derive(Debug, PartialEq)]
struct Odd(u32);

fn check_even(x: u32) -> Result<u32, Odd> {
    if x.is_multiple_of(2) {
        Ok(x)
    } else {
        Err(Odd(x))
    }
}

#[no_sync]
fn escape_hatch(x: u32) -> Result<u32, Odd> {
    let synced = nosync::allow_sync_expr!(sink().map_err(|_| Odd(0))?);
    let even = nosync::allow_sync_expr!(check_even(x)?);
    if x == 4 {
        return nosync::allow_sync_expr!(Ok(even * 10));
    }
    assert!(
        nosync::is_forbidden(),
        "the allow scope ends with the expression"
    );
    Ok(synced + even)
}

#[test]
fn allow_sync_expr_keeps_question_mark_and_return() {
    nosync::with_mode(Mode::Error, || {
        assert_eq!(escape_hatch(2), Ok(9));
        assert_eq!(
            escape_hatch(3),
            Err(Odd(3)),
            "`?` returns from the function"
        );
        assert_eq!(escape_hatch(4), Ok(40));
    });
}

mod asynchronous {
    use super::*;

    #[synchronizes(reason = "awaits a device event")]
    async fn event_wait() -> Result<(), SyncViolation> {
        Ok(())
    }

    struct Model {
        weights: Vec<u32>,
    }

    impl Model {
        /// Yields between checks so the task can move to another worker thread.
        #[no_sync]
        async fn forward(&self, scale: u32, sync: bool) -> Result<u32, SyncViolation> {
            let mut forbidden_at_every_poll = nosync::is_forbidden();
            for _ in 0..8 {
                tokio::task::yield_now().await;
                forbidden_at_every_poll &= nosync::is_forbidden();
            }
            assert!(forbidden_at_every_poll);
            if scale == 0 {
                return Ok(0);
            }
            if sync {
                nosync::with_mode(Mode::Error, sink)?;
            }
            Ok(self.weights.iter().sum::<u32>() * scale)
        }

        #[no_sync]
        async fn forward_mut(&mut self, extra: &u32) -> u32 {
            self.weights.push(*extra);
            self.weights.len() as u32
        }
    }

    #[no_sync]
    async fn hot_event() -> Result<(), SyncViolation> {
        nosync::with_mode(Mode::Error, || nosync::declare_sync(&EVENT))?;
        event_wait().await
    }

    static EVENT: nosync::SyncSite = nosync::SyncSite::may("event", "test site");

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn async_no_sync_forbids_during_polls_and_keeps_question_mark_and_return() {
        let mut model = Model {
            weights: vec![1, 2],
        };
        assert_eq!(model.forward(2, false).await.unwrap(), 6);
        assert_eq!(
            model.forward(0, true).await.unwrap(),
            0,
            "`return` in the body"
        );
        let err = model.forward(1, true).await.unwrap_err();
        assert_eq!(err.scope_function(), Some("forward"), "`?` in the body");
        assert!(
            !nosync::is_forbidden(),
            "nothing leaks to the awaiting task"
        );
        assert_eq!(model.forward_mut(&5).await, 3);

        let spawned = tokio::spawn(async move { model.forward(1, false).await });
        assert_eq!(spawned.await.unwrap().unwrap(), 8, "the future is Send");

        let err = hot_event().await.unwrap_err();
        assert_eq!(
            (err.site().api, err.scope_function()),
            ("event", Some("hot_event"))
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn async_synchronizes_checks_when_first_polled() {
        let fut = event_wait();
        let checked = nosync::with_mode(Mode::Error, || {
            let _scope = nosync::forbid();
            futures_poll_once(fut)
        });
        let err = checked.expect("ready at first poll").unwrap_err();
        assert_eq!(err.site().api, "event_wait");
        assert_eq!(err.site().reason, "awaits a device event");
    }

    /// Polls `fut` once on this thread with a no-op waker.
    fn futures_poll_once<F: std::future::Future>(fut: F) -> Option<F::Output> {
        let mut fut = std::pin::pin!(fut);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match fut.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(out) => Some(out),
            std::task::Poll::Pending => None,
        }
    }
}
