//! The hooked callbacks are enabled only while the process needs them: while some thread is in a
//! forbid scope or a `count_syncs`, or something keeps them on ([`keep_enabled`]). Outside,
//! CUPTI does not call nosync at all, and code outside every scope pays only for CUPTI being
//! attached.
//!
//! Enabling and disabling cost one `cuptiEnableCallback` per hooked row, so they are not done
//! at every scope: a scope entry that finds the callbacks off enables them before it returns
//! (the scope's first call is seen); a watcher thread disables them once no scope has been open
//! or opened for a whole [`IDLE`] tick, and then sleeps until the next enable. A loop that opens a
//! scope per step keeps them on; a program that leaves its hot loop stops paying within two ticks.
//!
//! Scopes are counted once a hook is installed (one atomic add and one load when a forbid scope
//! or a `count_syncs` opens, one add when it ends); a scope already open on another thread when
//! `install` runs is counted from its next entry, and its calls are seen until the first idle
//! tick. The count also tells device-runner threads whether a wait of theirs matters
//! ([`checking`]).
//!
//! The switches themselves are the backend's (one `cuptiEnableCallback` per row, above this
//! room): the front hands them in at install ([`installed`]), fn pointers this file calls
//! without knowing who answers. Before the first install there is no switch, and nothing to
//! switch.

// With `--cfg nosync_off` no scope asks for the callbacks.
#![cfg_attr(nosync_off, allow(dead_code))]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// How long the watcher waits between its checks of the demand.
pub const IDLE: Duration = Duration::from_millis(20);

/// Bits 0..20: open demands (counted scopes, `count_syncs`, keep-enabled pins, captures). Bits
/// 20..40: how many of them check waits (forbid scopes and `count_syncs`: a device runner's waits
/// are recorded for them, see `runner.rs`). Bits 40..64: entries so far (wrapping).
static DEMAND: AtomicU64 = AtomicU64::new(0);
const ONE_ENTRY: u64 = (1 << 40) + 1;
const ONE_CHECKING: u64 = 1 << 20;
const OPEN: u64 = (1 << 40) - 1;
/// Whether scope entries are counted: set when a hook is installed.
static COUNTING: AtomicBool = AtomicBool::new(false);
/// Whether the callbacks are (being) kept on; false once the watcher decided to disable them.
static ON: AtomicBool = AtomicBool::new(false);

/// The watcher's state: whether it must run.
static WATCH: Mutex<bool> = Mutex::new(false);
static WAKE: Condvar = Condvar::new();

/// The installed backend's switches, handed down by the front at install.
#[derive(Debug, Clone, Copy)]
pub(in crate::hook) struct Switches {
    /// Enables (`true`) or disables every hooked callback.
    pub callbacks: fn(bool),
    /// A capture or a `capture_safe` scope began (`true`) or ended: the watched calls follow.
    pub watched: fn(bool),
}

/// Handed in by the first install.
static SWITCHES: OnceLock<Switches> = OnceLock::new();

/// Enables (`true`) or disables the callbacks through the installed backend, if any.
fn set_callbacks(on: bool) {
    if let Some(s) = SWITCHES.get() {
        (s.callbacks)(on);
    }
}

/// A capture began (`true`) or one ended: the installed backend watches its calls accordingly.
pub(in crate::hook) fn set_watched(on: bool) {
    if let Some(s) = SWITCHES.get() {
        (s.watched)(on);
    }
}

/// A counted demand for the callbacks; dropping it ends the demand.
#[derive(Debug)]
pub(crate) struct Demand {
    /// What it added to the open counts (0: not counted).
    open: u64,
}

/// Counts the entry of a forbid scope or a `count_syncs` (when a hook is installed) and makes
/// sure the callbacks are on.
#[inline]
pub(crate) fn demand() -> Demand {
    if !COUNTING.load(std::sync::atomic::Ordering::Relaxed) {
        return Demand { open: 0 };
    }
    DEMAND.fetch_add(ONE_ENTRY + ONE_CHECKING, SeqCst);
    if !ON.load(SeqCst) {
        switch_on();
    }
    Demand {
        open: 1 + ONE_CHECKING,
    }
}

impl Drop for Demand {
    #[inline]
    fn drop(&mut self) {
        if self.open != 0 {
            DEMAND.fetch_sub(self.open, SeqCst);
        }
    }
}

/// Whether some thread is in a forbid scope or a `count_syncs` (counted since the hook's install).
#[inline]
pub(crate) fn checking() -> bool {
    DEMAND.load(std::sync::atomic::Ordering::Relaxed) & (OPEN & !(ONE_CHECKING - 1)) != 0
}

/// Keeps the hook's callbacks on for the rest of the process, also outside every scope: for a
/// report of every wait in the process, or to spare the first scope after an idle period the
/// switch (one `cuptiEnableCallback` per hooked call). Counts as a scope that never ends.
pub fn keep_enabled() {
    std::mem::forget(demand_counted());
}

/// A demand counted even before any scope: used by `install` and [`keep_enabled`].
fn demand_counted() -> Demand {
    COUNTING.store(true, SeqCst);
    DEMAND.fetch_add(ONE_ENTRY, SeqCst);
    if !ON.load(SeqCst) {
        switch_on();
    }
    Demand { open: 1 }
}

/// A capture began (`true`) or the last one ended: the hooked calls are checked during a capture
/// outside forbid scopes too, so the callbacks stay on while one is live.
pub(in crate::hook) fn hold(on: bool) {
    if on {
        std::mem::forget(demand_counted());
    } else {
        DEMAND.fetch_sub(1, SeqCst);
    }
}

/// Called by `install` once subscribed, with the backend's switches: counting starts, and the
/// callbacks are on until the first idle tick.
pub(in crate::hook) fn installed(switches: Switches) {
    let _ = SWITCHES.set(switches);
    drop(demand_counted());
}

/// Enables the callbacks (if the watcher has not left them on) and starts the watcher.
#[cold]
fn switch_on() {
    let mut watching = WATCH.lock().unwrap_or_else(PoisonError::into_inner);
    set_callbacks(true);
    ON.store(true, SeqCst);
    if !*watching {
        *watching = true;
        WAKE.notify_all();
        spawn_watcher_once();
    }
}

fn spawn_watcher_once() {
    static SPAWNED: std::sync::Once = std::sync::Once::new();
    SPAWNED.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("nosync-hook-idle".into())
            .spawn(watch);
        if spawned.is_err() {
            // No watcher: the callbacks stay on, as before this optimisation.
            log::warn!(target: "nosync", "could not start the hook's idle watcher: callbacks stay on");
        }
    });
}

/// Disables the callbacks after a tick without demand, then sleeps until they are on again.
fn watch() {
    let mut last = DEMAND.load(SeqCst);
    loop {
        std::thread::sleep(IDLE);
        let now = DEMAND.load(SeqCst);
        let idle = now == last && now & OPEN == 0;
        last = now;
        if !idle {
            continue;
        }
        let mut watching = WATCH.lock().unwrap_or_else(PoisonError::into_inner);
        // Say "off" first, then look again: an entry after this sees "off" and re-enables (it
        // waits for this lock); an entry before it is seen here.
        ON.store(false, SeqCst);
        if DEMAND.load(SeqCst) != now {
            ON.store(true, SeqCst);
            continue;
        }
        set_callbacks(false);
        *watching = false;
        while !*watching {
            watching = WAKE.wait(watching).unwrap_or_else(PoisonError::into_inner);
        }
        last = DEMAND.load(SeqCst);
    }
}

/// Whether the callbacks are on now (for tests and the bench).
pub fn callbacks_on() -> bool {
    ON.load(SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs [`alone`] in a child process: the other tests of this binary open scopes, which count
    /// once a hook is installed and would keep the callbacks on.
    #[test]
    fn callbacks_follow_the_demand() {
        crate::hook::run_test_alone("hook::check::demand::tests::alone");
    }

    /// Without a subscription the front's switch does nothing, so this follows the switch alone:
    /// on at install, off after an idle tick, on again at the next scope, kept on while a scope
    /// stays open.
    #[test]
    #[ignore = "run alone in a child process by `callbacks_follow_the_demand`"]
    fn alone() {
        installed(crate::hook::SWITCHES);
        assert!(callbacks_on());
        let off = |limit: u32| {
            (0..limit).any(|_| {
                std::thread::sleep(IDLE);
                !callbacks_on()
            })
        };
        assert!(off(50), "still on after 50 idle ticks");
        let scope = crate::forbid();
        assert!(callbacks_on(), "a scope entry switches them on");
        assert!(!off(5), "switched off while a scope is open");
        drop(scope);
        assert!(off(50), "still on after the scope ended");
        let (_, _) = crate::count_syncs(|| {
            assert!(callbacks_on(), "count_syncs switches them on");
        });
    }
}
