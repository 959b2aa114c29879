//! `set_enabled` and `set_mode` change the whole process, so this test binary has one test.
#![cfg(not(nosync_off))]

use nosync::{Mode, SyncSite};

static WAIT: SyncSite = SyncSite::does("Stream::synchronize", "waits for all work on the stream");

fn forbidden_sync_is_reported() -> bool {
    nosync::with_mode(Mode::Error, || {
        nosync::no_sync(|| nosync::declare_sync(&WAIT).is_err())
    })
}

#[test]
fn set_enabled_and_set_mode_are_process_wide() {
    // set_enabled: off everywhere, counting goes on, violations do not.
    assert!(nosync::is_enabled() && forbidden_sync_is_reported());
    nosync::set_enabled(false);
    assert!(!nosync::is_enabled());
    assert!(!forbidden_sync_is_reported());
    let other = std::thread::spawn(forbidden_sync_is_reported)
        .join()
        .expect("join");
    assert!(!other, "disabled for every thread");
    let (inside, report) = nosync::count_syncs(|| {
        nosync::no_sync(|| {
            let _ = nosync::declare_sync(&WAIT);
            nosync::is_forbidden()
        })
    });
    assert!(!inside, "is_forbidden is false while checks are off");
    assert_eq!((report.total(), report.forbidden()), (1, 0));
    nosync::set_enabled(true);
    assert!(forbidden_sync_is_reported());

    // set_mode: the process default, seen by other threads; with_mode still wins on its thread.
    let before = nosync::mode();
    nosync::set_mode(Mode::Allow);
    assert_eq!(nosync::mode(), Mode::Allow);
    assert_eq!(
        std::thread::spawn(nosync::mode).join().expect("join"),
        Mode::Allow
    );
    assert!(nosync::no_sync(|| nosync::declare_sync(&WAIT)).is_ok());
    assert!(
        forbidden_sync_is_reported(),
        "with_mode(Error) overrides set_mode"
    );
    nosync::set_mode(before);
    assert_eq!(nosync::mode(), before);
}
