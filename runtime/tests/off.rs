//! With `--cfg nosync_off` every check is compiled out: same API, nothing happens.
//! Run: `RUSTFLAGS="--cfg nosync_off" cargo test -p nosync --no-default-features --test off`.
#![cfg(nosync_off)]

use std::future::Future;

use nosync::{FutureExt, Mode, SyncSite};

static WAIT: SyncSite = SyncSite::does("Stream::synchronize", "waits for all work on the stream");

#[test]
fn every_check_is_compiled_out() {
    assert_eq!(std::mem::size_of::<nosync::ForbidGuard>(), 0);
    assert_eq!(std::mem::size_of::<nosync::AllowGuard>(), 0);
    nosync::with_mode(Mode::Error, || {
        let _forbid = nosync::forbid();
        assert!(!nosync::is_forbidden());
        assert!(nosync::declare_sync(&WAIT).is_ok());
        nosync::declare_sync_in_drop(&WAIT);
        nosync::__private::declare_sync_or_panic(&WAIT);
        let _named = nosync::__private::forbid_fn("train_step");
        assert!(nosync::no_sync(|| nosync::declare_sync(&WAIT)).is_ok());
    });
    let ((), report) = nosync::count_syncs(|| {
        let _ = nosync::declare_sync(&WAIT);
    });
    assert!(report.is_empty());
    assert_eq!(nosync::assert_no_sync(|| nosync::allow_sync_once(|| 5)), 5);
}

#[test]
fn no_sync_futures_just_poll_the_inner_future() {
    let mut fut = Box::pin(async { nosync::is_forbidden() }.no_sync());
    let poll = fut
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()));
    assert_eq!(poll, std::task::Poll::Ready(false));
}
