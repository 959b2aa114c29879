//! `NoSync`: the forbid scope is set during each poll only, on whichever thread polls.
#![cfg(not(nosync_off))]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::thread::{self, ThreadId};

use nosync::{FutureExt, Mode, SyncSite};

static WAIT: SyncSite = SyncSite::does("Stream::synchronize", "waits for all work on the stream");

/// Returns `Pending` once, then `Ready`.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

type Seen = Vec<(ThreadId, bool)>;

async fn observe(steps: usize) -> Seen {
    let mut seen = Vec::new();
    for _ in 0..steps {
        seen.push((thread::current().id(), nosync::is_forbidden()));
        YieldOnce(false).await;
    }
    seen
}

#[test]
fn the_scope_follows_the_task_to_another_thread_and_never_leaks() {
    let mut task = Box::pin(observe(2).no_sync());
    let mut cx = Context::from_waker(Waker::noop());
    assert!(task.as_mut().poll(&mut cx).is_pending());
    assert!(
        !nosync::is_forbidden(),
        "cleared between polls on the first thread"
    );
    let seen = thread::spawn(move || {
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(seen) = task.as_mut().poll(&mut cx) {
                assert!(!nosync::is_forbidden(), "cleared after the last poll");
                return seen;
            }
            assert!(
                !nosync::is_forbidden(),
                "cleared between polls on the second thread"
            );
        }
    })
    .join()
    .expect("second thread");
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|&(_, forbidden)| forbidden), "{seen:?}");
    assert_ne!(seen[0].0, seen[1].0, "polled on two threads");
}

#[test]
fn violations_inside_a_no_sync_future_name_where_it_was_created() {
    let line = line!() + 1;
    let fut = nosync::__private::no_sync_future(async { nosync::declare_sync(&WAIT) }, "fetch");
    let mut fut = Box::pin(fut);
    let poll = nosync::with_mode(Mode::Error, || {
        fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    });
    let Poll::Ready(Err(v)) = poll else {
        panic!("expected a violation, got {poll:?}")
    };
    assert_eq!(v.scope_function(), Some("fetch"));
    assert_eq!(
        (v.scope_location().file(), v.scope_location().line()),
        (file!(), line)
    );
}

#[test]
fn an_allow_scope_inside_the_task_still_wins() {
    let mut fut = Box::pin(async { nosync::allow_sync(|| nosync::declare_sync(&WAIT)) }.no_sync());
    let poll = nosync::with_mode(Mode::Error, || {
        fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    });
    assert!(matches!(poll, Poll::Ready(Ok(()))), "{poll:?}");
}

fn migrated(seen: &Seen) -> bool {
    seen.windows(2).any(|w| w[0].0 != w[1].0)
}

/// The hot task: a `NoSync` future that waits on blocking-pool work at every step, so its wake-up
/// comes from outside the workers and any worker may resume it.
async fn hot_task() -> Seen {
    let mut seen = Vec::new();
    for step in 0..2000 {
        seen.push((thread::current().id(), nosync::is_forbidden()));
        if step >= 20 && migrated(&seen) {
            break;
        }
        tokio::task::spawn_blocking(|| ())
            .await
            .expect("blocking task");
    }
    seen
}

/// A bystander: an ordinary task that yields often, so the workers interleave it with the hot one.
async fn bystander(done: Arc<AtomicBool>) -> Seen {
    let mut seen = Vec::new();
    while !done.load(Ordering::Relaxed) {
        seen.push((thread::current().id(), nosync::is_forbidden()));
        tokio::task::yield_now().await;
    }
    seen
}

#[test]
fn tokio_moves_the_task_between_workers_and_other_tasks_are_unaffected() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .expect("runtime");
    let (hot, others) = rt.block_on(async {
        let done = Arc::new(AtomicBool::new(false));
        let others: Vec<_> = (0..4)
            .map(|_| tokio::spawn(bystander(done.clone())))
            .collect();
        let hot = tokio::spawn(hot_task().no_sync()).await.expect("hot task");
        done.store(true, Ordering::Relaxed);
        let mut seen = Vec::new();
        for task in others {
            seen.extend(task.await.expect("bystander"));
        }
        (hot, seen)
    });
    assert!(
        hot.iter().all(|&(_, forbidden)| forbidden),
        "forbidden on every poll: {hot:?}"
    );
    assert!(
        others.iter().all(|&(_, forbidden)| !forbidden),
        "bystanders never forbidden"
    );
    assert!(
        migrated(&hot),
        "the hot task stayed on one worker for {} polls although every wake-up came from the \
         blocking pool; tokio did not migrate it, so this run proves nothing about migration",
        hot.len()
    );
    let shared = others
        .iter()
        .filter(|(t, _)| hot.iter().any(|(h, _)| h == t))
        .count();
    assert!(
        shared > 0,
        "no bystander poll ran on a thread the hot task used"
    );
}
