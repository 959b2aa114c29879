//! Forbid/allow scopes: nesting, unwinding, out-of-order drops, threads, and where scopes began.
#![cfg(not(nosync_off))]

use std::panic::{AssertUnwindSafe, catch_unwind};

use nosync::{Mode, SyncSite, SyncViolation};

static WAIT: SyncSite = SyncSite::does("Stream::synchronize", "waits for all work on the stream");

/// Declares `WAIT` in `Mode::Error` and returns the violation, if any.
#[track_caller]
fn violation() -> Option<SyncViolation> {
    nosync::with_mode(Mode::Error, || nosync::declare_sync(&WAIT).err())
}

#[test]
fn outside_any_scope_nothing_is_forbidden() {
    assert!(!nosync::is_forbidden());
    assert!(violation().is_none());
}

#[test]
fn allow_inside_forbid_allows_and_forbid_inside_allow_forbids() {
    let _outer = nosync::forbid();
    assert!(nosync::is_forbidden());
    assert!(violation().is_some());
    {
        let _allow = nosync::allow();
        assert!(!nosync::is_forbidden());
        assert!(violation().is_none());
        {
            let _inner = nosync::forbid();
            assert!(nosync::is_forbidden());
            assert!(violation().is_some());
        }
        assert!(!nosync::is_forbidden());
    }
    assert!(nosync::is_forbidden());
}

#[test]
fn closure_forms_nest_the_same_way() {
    let seen = nosync::no_sync(|| {
        let inner = nosync::allow_sync(|| {
            (
                nosync::is_forbidden(),
                nosync::no_sync(nosync::is_forbidden),
            )
        });
        (nosync::is_forbidden(), inner)
    });
    assert_eq!(seen, (true, (false, true)));
    assert!(!nosync::is_forbidden());
}

#[test]
fn unwinding_through_guards_restores_the_previous_state() {
    let _outer = nosync::allow();
    let caught = catch_unwind(|| {
        let _forbid = nosync::forbid();
        assert!(nosync::is_forbidden());
        panic!("unwinding through a forbid scope");
    });
    assert!(caught.is_err());
    assert!(!nosync::is_forbidden());

    let _forbid = nosync::forbid();
    let caught = catch_unwind(|| nosync::allow_sync(|| panic!("unwinding through an allow scope")));
    assert!(caught.is_err());
    assert!(nosync::is_forbidden());
}

#[test]
fn dropping_guards_out_of_order_keeps_the_innermost_live_scope() {
    let outer = nosync::forbid();
    let middle = nosync::allow();
    let inner = nosync::forbid();
    drop(middle); // the innermost live scope is still `inner`
    assert!(nosync::is_forbidden());
    drop(inner); // now `outer`, not the dropped `middle`
    assert!(nosync::is_forbidden());
    drop(outer);
    assert!(!nosync::is_forbidden());

    let a = nosync::allow();
    let b = nosync::forbid();
    drop(a);
    assert!(nosync::is_forbidden());
    drop(b);
    assert!(!nosync::is_forbidden());
}

#[test]
fn chains_of_out_of_order_drops_resolve_to_the_innermost_live_scope() {
    let outer = nosync::allow();
    let a = nosync::forbid();
    let b = nosync::allow();
    drop(a);
    assert!(!nosync::is_forbidden(), "b is innermost");
    let line = line!() + 1;
    let c = nosync::forbid();
    drop(b);
    assert!(nosync::is_forbidden(), "c is innermost");
    assert_eq!(violation().map(|v| v.scope_location().line()), Some(line));
    drop(c);
    assert!(
        !nosync::is_forbidden(),
        "back to `outer`, skipping the dead a and b"
    );
    drop(outer);
    let _again = nosync::forbid();
    assert!(nosync::is_forbidden());
}

#[test]
fn the_violation_names_where_the_innermost_forbid_scope_began() {
    let _outer = nosync::forbid();
    let line = line!() + 1;
    let _inner = nosync::forbid();
    let v = violation().expect("inside a forbid scope");
    assert_eq!(v.scope_location().file(), file!());
    assert_eq!(v.scope_location().line(), line);
    assert_eq!(v.scope_function(), None);
    assert_eq!(v.location().file(), file!()); // `violation()` is #[track_caller]
    assert!(std::ptr::eq(v.site(), &WAIT));
}

#[test]
fn scopes_from_the_attribute_name_their_function() {
    let line = line!() + 1;
    let _scope = nosync::__private::forbid_fn("train_step");
    let v = violation().expect("inside a forbid scope");
    assert_eq!(v.scope_function(), Some("train_step"));
    let expected = format!(
        "`Stream::synchronize` blocks the host (waits for all work on the stream) inside \
         #[no_sync] `train_step` ({}:{line}) on thread `{}`; wrap it in nosync::allow_sync(..) \
         if this wait is intended",
        file!(),
        v.thread_name().expect("libtest names its threads"),
    );
    assert_eq!(v.to_string(), expected);
    let _allow = nosync::__private::allow_fn("warm_up", "first call compiles kernels");
    assert!(violation().is_none());
}

#[test]
fn threads_do_not_share_scopes_and_start_outside_any() {
    let _forbid = nosync::forbid();
    let child = std::thread::Builder::new()
        .name("child".into())
        .spawn(|| {
            let before = nosync::is_forbidden();
            let _inner = nosync::forbid();
            (
                before,
                violation().and_then(|v| v.thread_name().map(str::to_owned)),
            )
        })
        .expect("spawn");
    let (before, name) = child.join().expect("child thread");
    assert!(!before, "a spawned thread must start outside any scope");
    assert_eq!(name.as_deref(), Some("child"));
    assert!(
        nosync::is_forbidden(),
        "the child's scope must not leak into this thread"
    );
}

#[test]
fn std_scoped_threads_start_outside_any_scope_too() {
    let _forbid = nosync::forbid();
    let inside = std::thread::scope(|s| s.spawn(nosync::is_forbidden).join().expect("join"));
    assert!(!inside);
}

#[test]
fn allow_sync_once_allows_only_the_first_execution_per_call_site() {
    let _forbid = nosync::forbid();
    let mut results = Vec::new();
    for _ in 0..3 {
        results.push(nosync::allow_sync_once(violation).is_some());
    }
    assert_eq!(results, [false, true, true]);
    // A different call site gets its own first time.
    assert!(nosync::allow_sync_once(violation).is_none());
    assert!(nosync::allow_sync_once(violation).is_none());
}

#[test]
fn allow_sync_expr_keeps_question_mark_semantics() {
    fn step(fail: bool) -> Result<u8, SyncViolation> {
        let _forbid = nosync::forbid();
        let allowed = nosync::allow_sync_expr!(nosync::declare_sync(&WAIT).map(|()| 1)?);
        if fail {
            nosync::declare_sync(&WAIT)?;
        }
        Ok(allowed)
    }
    nosync::with_mode(Mode::Error, || {
        assert_eq!(step(false).expect("allowed"), 1);
        assert!(
            step(true).is_err(),
            "`?` must still propagate outside the escape"
        );
    });
}

#[test]
fn guards_are_not_send() {
    // Resolves only when exactly one impl applies, i.e. when the type is not `Send`.
    trait AmbiguousIfSend<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfSend<()> for T {}
    impl<T: ?Sized + Send> AmbiguousIfSend<u8> for T {}
    <nosync::ForbidGuard as AmbiguousIfSend<_>>::check();
    <nosync::AllowGuard as AmbiguousIfSend<_>>::check();
}

#[test]
fn a_panicking_closure_inside_no_sync_leaves_no_scope_behind() {
    let r = catch_unwind(AssertUnwindSafe(|| {
        nosync::no_sync(|| panic!("in a hot path"))
    }));
    assert!(r.is_err());
    assert!(!nosync::is_forbidden());
    assert!(violation().is_none());
}
