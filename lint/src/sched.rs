//! Sharing the CPU with `cargo metadata`: while cargo runs, the speculative analysis
//! (`engine/speculate.rs`) does its parallel work on one thread fewer than the machine has.
//!
//! Cargo's metadata run is one thread of serial work (0.4–0.7 s on candle), and the lint
//! cannot answer before it. With the analysis' pool on every core beside it, the kernel
//! shares the cores three ways and cargo's run stretches (on 2 cores: 0.45 s alone, 1.0–1.3
//! s beside two busy threads), so the whole command waits on it. A [`Throttle`] admits at
//! most `cap` leaf jobs at once (a file lowered, a lazy body lowered, a fn walked); when
//! cargo has answered, [`Throttle::open`] lifts the cap and the pool uses every core.
//!
//! Only leaf jobs take a permit, and a leaf job runs no parallel work of its own, so a
//! worker that waits for a permit holds nothing another worker needs: no deadlock, whatever
//! the pool's work stealing does. A worker already inside a job runs a nested one
//! without a second permit. Only the timing changes, never a result.

use std::cell::{Cell, RefCell};
use std::sync::{Arc, Condvar, Mutex};

/// At most `cap` jobs at once until opened.
#[derive(Debug)]
pub struct Throttle {
    /// (jobs running, cap).
    state: Mutex<(usize, usize)>,
    freed: Condvar,
}

impl Throttle {
    pub fn new(cap: usize) -> Arc<Throttle> {
        Arc::new(Throttle {
            state: Mutex::new((0, cap.max(1))),
            freed: Condvar::new(),
        })
    }

    /// No cap from now on (cargo has answered, or the run is called off).
    pub fn open(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.1 = usize::MAX;
        }
        self.freed.notify_all();
    }

    fn acquire(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        while s.0 >= s.1 {
            s = match self.freed.wait(s) {
                Ok(s) => s,
                Err(_) => return,
            };
        }
        s.0 += 1;
    }

    fn release(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.0 = s.0.saturating_sub(1);
        }
        self.freed.notify_one();
    }
}

thread_local! {
    /// The throttle of the pool this thread works for (set by the pool's start handler).
    static CURRENT: RefCell<Option<Arc<Throttle>>> = const { RefCell::new(None) };
    /// Whether this thread is inside a job already.
    static IN_JOB: Cell<bool> = const { Cell::new(false) };
}

/// Makes `throttle` the current thread's: the speculative thread's own, then each worker
/// of the pool it builds (whose start handler passes on the builder's, [`current`]).
pub fn install(throttle: Option<Arc<Throttle>>) {
    CURRENT.with(|c| *c.borrow_mut() = throttle);
}

/// The current thread's throttle.
pub fn current() -> Option<Arc<Throttle>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs one leaf job `f`, within the current thread's throttle if it has one.
pub fn job<R>(f: impl FnOnce() -> R) -> R {
    let Some(t) = current().filter(|_| !IN_JOB.with(Cell::get)) else {
        return f();
    };
    t.acquire();
    IN_JOB.with(|j| j.set(true));
    let _permit = Permit(t);
    f()
}

/// Gives the permit back when the job ends, or unwinds.
struct Permit(Arc<Throttle>);

impl Drop for Permit {
    fn drop(&mut self) {
        IN_JOB.with(|j| j.set(false));
        self.0.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// At most `cap` jobs run at once until the throttle opens; then all of them may.
    #[test]
    fn a_throttle_admits_cap_jobs_until_it_opens() {
        let t = Throttle::new(1);
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .start_handler({
                let t = Arc::clone(&t);
                move |_| install(Some(Arc::clone(&t)))
            })
            .build()
            .unwrap();
        let work = || {
            use rayon::prelude::*;
            (0..64).into_par_iter().for_each(|_| {
                job(|| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    // A nested job takes no second permit (it would wait forever).
                    job(|| std::thread::sleep(std::time::Duration::from_millis(1)));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
            })
        };
        pool.install(work);
        assert_eq!(most.load(Ordering::SeqCst), 1);
        t.open();
        most.store(0, Ordering::SeqCst);
        pool.install(work);
        assert!(most.load(Ordering::SeqCst) > 1);
    }
}
