//! The pass over the loaded objects: every import slot naming a call nosync stands in for gets
//! the wrapper that calls what the slot held before (`slot.rs`), once per object. The loader's
//! counter of unloaded objects tells when an address may hold another object than before, and
//! then every object is looked at again.
//!
//! New objects are pinned before the kernel's page protections are read: the loader lists an
//! object another thread is still loading before it is relocated (its RELRO pages still
//! writable), and a pin waits for that load to end. While an install is pending, every rewrite
//! is journaled and every object stays pinned, so that a failed install puts back every slot
//! it wrote. What was left alone, and why, is kept for the coverage.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use super::elf::{self, Object};
use super::names::{self, Names};
use super::protect::{self, Maps};
use super::slot::{Pin, Rewrite, Written};
use crate::hook::common::coverage::{PatchedObject, Skipped};

/// The passes' state.
#[derive(Debug, Default)]
pub(super) struct State {
    /// Passes run (an install is pending or done, and not failed since).
    on: bool,
    /// Objects patched, by base, valid while the loader's `subs` stays `subs`.
    seen: HashSet<usize>,
    subs: u64,
    /// The rewrites of a pending install, and its objects, pinned until it ends.
    journal: Option<(Vec<Rewrite>, Vec<Pin>)>,
    pub(super) objects: Vec<PatchedObject>,
    pub(super) skipped: Vec<Skipped>,
    /// How many of `skipped` the user was told of.
    pub(super) told_skipped: usize,
}

// SAFETY: the journal's slot addresses are only written under the state's lock.
unsafe impl Send for State {}

static STATE: Mutex<Option<State>> = Mutex::new(None);

pub(super) fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The state if no one holds it now.
pub(super) fn try_state() -> Result<MutexGuard<'static, Option<State>>, ()> {
    match STATE.try_lock() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        Err(TryLockError::WouldBlock) => Err(()),
    }
}

/// Starts the passes for an install: every loaded object; the rewrites are journaled until
/// [`commit`] or [`abort`]. How many slots were rewritten.
pub(super) fn begin(names: &Names) -> usize {
    let mut pins = Vec::new();
    let mut guard = state();
    let state = guard.get_or_insert_with(State::default);
    state.on = true;
    state.journal = Some((Vec::new(), Vec::new()));
    let count = pass(names, state, &mut pins);
    if let Some((_, kept)) = state.journal.as_mut() {
        kept.append(&mut pins);
    }
    drop(guard);
    drain();
    count
}

/// The install succeeded: its rewrites stay.
pub(super) fn commit() {
    let journal = state().as_mut().and_then(|s| s.journal.take());
    drop(journal); // outside the lock: giving back the last reference runs destructors
    drain();
}

/// The install failed: every slot it wrote holds again what it held, and no pass runs.
pub(super) fn abort() {
    let mut guard = state();
    let Some(state) = guard.as_mut() else { return };
    let (rewrites, pins) = state.journal.take().unwrap_or_default();
    let maps = Maps::read().unwrap_or_default();
    for rw in rewrites.into_iter().rev() {
        // The objects are pinned; a slot another pass wrote since is left to that pass.
        // SAFETY: an aligned slot (checked when it was written) of a pinned object.
        if unsafe { protect::load(rw.at) } == rw.new {
            // SAFETY: as above; `old` is what the loader had put in it.
            let _ = unsafe { protect::store(&maps, rw.at, rw.old) };
        }
    }
    state.on = false;
    state.seen.clear();
    state.objects.clear();
    state.skipped.clear();
    drop(guard);
    drop(pins);
}

/// Set by a pass that could not run now: the next one to hold the lock runs it.
static PENDING: AtomicBool = AtomicBool::new(false);

/// After a `dlopen` returned an object: patch what is new. Never waits for the lock: this may
/// run inside another `dlopen` (an object's constructor loading another), holding the loader's
/// lock, while a pass on another thread waits for that lock. Inside a hooked `dlopen`
/// (`nested`), the pass is left to the outermost one.
pub(super) fn after_dlopen(nested: bool) {
    PENDING.store(true, SeqCst);
    if !nested {
        drain();
    }
    if super::wrappers::ACTIVE.load(Relaxed) {
        tell_once();
    }
}

/// Runs the passes asked for, while no one else holds the lock (whoever does runs them when it
/// lets go: every holder calls this after).
pub(super) fn drain() {
    let Some(names) = names::names() else { return };
    while PENDING.load(SeqCst) {
        let Ok(mut guard) = try_state() else { return };
        let mut pins = Vec::new();
        match guard.as_mut() {
            Some(state) if state.on => {
                pass(names, state, &mut pins);
                if let Some((_, kept)) = state.journal.as_mut() {
                    kept.append(&mut pins);
                }
            }
            _ => PENDING.store(false, SeqCst),
        }
        drop(guard);
        drop(pins);
    }
}

/// Patches every object not patched since the loader last unloaded one; how many slots. The
/// objects stay pinned until the caller drops `pins`, after it let go of the lock.
fn pass(names: &Names, state: &mut State, pins: &mut Vec<Pin>) -> usize {
    PENDING.store(false, SeqCst);
    let census = elf::census();
    if census.subs != state.subs {
        state.seen.clear();
        state.subs = census.subs;
    }
    let mut fresh = Vec::new();
    for object in &census.objects {
        if elf::is_exempt(&object.name) || !state.seen.insert(object.base) {
            continue;
        }
        match Pin::new(object) {
            Ok(pin) => fresh.push((object, pin)),
            Err(why) => skip(state, &object.name, "*", why.to_owned()),
        }
    }
    if fresh.is_empty() {
        return 0;
    }
    let maps = match Maps::read() {
        Ok(maps) => maps,
        Err(e) => {
            let why =
                format!("/proc/self/maps could not be read ({e}): no page's protection is known");
            skip(state, "", "*", why);
            return 0;
        }
    };
    let mut count = 0;
    for (object, pin) in fresh {
        count += patch_object(names, object, &pin, &maps, state);
        pins.push(pin);
    }
    count
}

fn patch_object(
    names: &Names,
    object: &Object,
    pin: &Pin,
    maps: &Maps,
    state: &mut State,
) -> usize {
    let own = object.base == names.own.base;
    let (mut count, mut held) = (0, 0);
    // SAFETY: the object is pinned (`pin`).
    for slot in unsafe { elf::slots(object) } {
        let Some(stand) = names.get(slot.name.to_bytes()) else {
            continue;
        };
        // SAFETY: as above.
        match unsafe { super::slot::rewrite(object, pin, own, slot, stand, maps) } {
            Ok(Written::NotHere) => {}
            Ok(Written::Held) => held += 1,
            Ok(Written::New(rw)) => {
                count += 1;
                if let Some((journal, _)) = state.journal.as_mut() {
                    journal.push(rw);
                }
            }
            Err(why) => skip(state, &object.name, &slot.name.to_string_lossy(), why),
        }
    }
    state.objects.retain(|o| o.name != object.name);
    let slots = count + held;
    state.objects.push(PatchedObject {
        name: object.name.clone(),
        slots,
    });
    count
}

fn skip(state: &mut State, object: &str, symbol: &str, reason: String) {
    let s = Skipped {
        object: object.to_owned(),
        symbol: symbol.to_owned(),
        reason,
    };
    if !state.skipped.contains(&s) {
        state.skipped.push(s);
    }
}

/// Lookups answered without a wrapper. Kept apart from the passes' state: a lookup may run
/// inside the loader (an object's constructor) while a pass waits for the loader's lock.
static LOOKUPS: Mutex<Vec<Skipped>> = Mutex::new(Vec::new());

/// A lookup answered without a wrapper: listed in the coverage.
pub(super) fn unseen_lookup(name: &[u8], why: &str) {
    let mut lookups = LOOKUPS.lock().unwrap_or_else(PoisonError::into_inner);
    let s = Skipped {
        object: String::from("(lookup)"),
        symbol: String::from_utf8_lossy(name).into_owned(),
        reason: why.to_owned(),
    };
    if !lookups.contains(&s) {
        lookups.push(s);
    }
}

/// What the passes left alone, then the lookups answered without a wrapper.
pub(super) fn skipped() -> Vec<Skipped> {
    let mut out = state()
        .as_ref()
        .map(|s| s.skipped.clone())
        .unwrap_or_default();
    out.extend(
        LOOKUPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned(),
    );
    out
}

/// Whether nosync's own slot of `name` holds `hook`.
pub(super) fn holds_hook(names: &Names, name: &[u8], hook: usize) -> bool {
    // SAFETY: nosync's own object stays loaded while its code runs.
    let slots = unsafe { elf::slots(&names.own) };
    slots
        .iter()
        .filter(|s| s.name.to_bytes() == name && protect::aligned(s.at))
        .any(|s| {
            // SAFETY: an aligned slot of nosync's object.
            (unsafe { protect::load(s.at) }) == hook
        })
}

/// Tells the user, once per new lot, on stderr (no logger needed) of the slots and lookups the
/// interposer left alone: calls through them are not seen. Called at the install and after
/// each later pass.
pub(super) fn tell_once() {
    // Never waits: this may run inside the loader (see `patch::after_dlopen`); the next call tells.
    let Ok(mut guard) = try_state() else {
        return;
    };
    let Some(state) = guard.as_mut() else { return };
    let skipped = state.skipped.len();
    if skipped <= state.told_skipped {
        return;
    }
    state.told_skipped = skipped;
    drop(guard);
    crate::guard::env::say(&format!(
        "hook: the interposer left {skipped} import slots or lookups alone, so calls through them are not seen (Hook::coverage() says which and why; NOSYNC_HOOK=cupti sees every call)"
    ));
}
