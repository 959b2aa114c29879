//! `count_syncs` and `assert_no_sync`.
#![cfg(not(nosync_off))]

use std::panic::catch_unwind;

use nosync::{Mode, SyncKind, SyncSite};

static COPY: SyncSite = SyncSite::may("CudaSlice::to_vec", "copies to pageable host memory");
static WAIT: SyncSite = SyncSite::does("Stream::synchronize", "waits for all work on the stream");

fn declare(site: &'static SyncSite) {
    let _ = nosync::declare_sync(site);
}

#[test]
fn counts_every_site_split_by_kind_and_scope() {
    let (value, report) = nosync::count_syncs(|| {
        declare(&COPY);
        declare(&WAIT);
        declare(&COPY);
        nosync::with_mode(Mode::Allow, || nosync::no_sync(|| declare(&WAIT)));
        7
    });
    assert_eq!(value, 7);
    assert_eq!(
        (report.total(), report.forbidden(), report.allowed()),
        (4, 1, 3)
    );
    assert_eq!(
        (
            report.of_kind(SyncKind::May),
            report.of_kind(SyncKind::Does)
        ),
        (2, 2)
    );
    assert_eq!((report.count(&COPY), report.count(&WAIT)), (2, 2));
    assert_eq!(report.count_api("Stream::synchronize"), 2);
    let sites: Vec<_> = report
        .sites()
        .iter()
        .map(|s| (s.site().api, s.count(), s.forbidden()))
        .collect();
    assert_eq!(
        sites,
        [("CudaSlice::to_vec", 2, 0), ("Stream::synchronize", 2, 1)]
    );
    assert_eq!(
        report.to_string(),
        "4 syncs declared (2 does, 2 may; 1 inside a forbid scope):\n  \
         2 x `CudaSlice::to_vec` [may] (0 forbidden): copies to pageable host memory\n  \
         2 x `Stream::synchronize` [does] (1 forbidden): waits for all work on the stream"
    );
}

#[test]
fn an_empty_report_says_so() {
    let ((), report) = nosync::count_syncs(|| ());
    assert!(report.is_empty());
    assert_eq!(report.to_string(), "no syncs declared");
    // Recording has stopped: a later declaration is not counted anywhere.
    declare(&WAIT);
    assert_eq!(report.total(), 0);
}

#[test]
fn nested_counts_see_their_own_syncs_and_the_outer_sees_all() {
    let (inner, outer) = nosync::count_syncs(|| {
        declare(&COPY);
        let ((), inner) = nosync::count_syncs(|| declare(&WAIT));
        declare(&COPY);
        inner
    });
    assert_eq!((inner.count(&WAIT), inner.count(&COPY)), (1, 0));
    assert_eq!((outer.count(&WAIT), outer.count(&COPY)), (1, 2));
}

#[test]
fn a_panic_inside_a_nested_count_still_reaches_the_outer_report() {
    let ((), outer) = nosync::count_syncs(|| {
        let r = catch_unwind(|| {
            nosync::count_syncs(|| {
                declare(&WAIT);
                panic!("inside count_syncs");
            })
        });
        assert!(r.is_err());
    });
    assert_eq!(outer.count(&WAIT), 1);
}

#[test]
fn counting_is_per_thread() {
    let ((), report) = nosync::count_syncs(|| {
        std::thread::spawn(|| declare(&WAIT)).join().expect("join");
    });
    assert!(report.is_empty(), "{report}");
}

#[test]
fn assert_no_sync_passes_through_a_clean_closure() {
    assert_eq!(nosync::assert_no_sync(|| 3), 3);
}

#[test]
fn assert_no_sync_panics_with_the_report_even_for_allowed_syncs() {
    let r = catch_unwind(|| nosync::assert_no_sync(|| nosync::allow_sync(|| declare(&COPY))));
    let payload = r.expect_err("a declared sync");
    let message = payload
        .downcast_ref::<String>()
        .expect("a formatted message");
    assert_eq!(
        message,
        "assert_no_sync: 1 sync declared (0 does, 1 may; 0 inside a forbid scope):\n  \
         1 x `CudaSlice::to_vec` [may] (0 forbidden): copies to pageable host memory"
    );
}
