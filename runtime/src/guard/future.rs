//! Forbid scopes for async code: set during each `poll`, cleared between polls.
//!
//! A guard held across `.await` would be wrong twice over: the executor may resume the task on
//! another thread (whose flag was never set), and the thread it left runs other tasks under a flag
//! that is not theirs. [`NoSync`] opens the scope inside `poll` and closes it before returning.

use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project_lite::pin_project! {
    /// A future whose every `poll` runs inside a forbid scope. Created by [`FutureExt::no_sync`]
    /// or by `#[no_sync]` on an `async fn`.
    #[must_use = "futures do nothing unless polled"]
    pub struct NoSync<F> {
        #[pin]
        future: F,
        location: &'static Location<'static>,
        function: Option<&'static str>,
    }
}

impl<F> NoSync<F> {
    pub(crate) fn new(
        future: F,
        location: &'static Location<'static>,
        function: Option<&'static str>,
    ) -> Self {
        NoSync {
            future,
            location,
            function,
        }
    }

    /// The wrapped future.
    pub fn into_inner(self) -> F {
        self.future
    }
}

impl<F: Future> Future for NoSync<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _scope = crate::guard::scope::forbid_at(this.location, *this.function);
        this.future.poll(cx)
    }
}

impl<F> fmt::Debug for NoSync<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NoSync")
            .field("location", &self.location)
            .field("function", &self.function)
            .finish_non_exhaustive()
    }
}

/// Adds [`no_sync`](FutureExt::no_sync) to every future.
pub trait FutureExt: Future + Sized {
    /// Runs every `poll` of this future inside a forbid scope that began here.
    #[track_caller]
    fn no_sync(self) -> NoSync<Self> {
        NoSync::new(self, Location::caller(), None)
    }
}

impl<F: Future> FutureExt for F {}
