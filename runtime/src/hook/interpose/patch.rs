//! The pass over the loaded objects: every import slot naming a call nosync stands in for gets
//! the wrapper that calls what the slot held before (bound, or what the loader would bind it
//! to), once per object. Each object is pinned while its tables are read and its slots written,
//! so that no `dlclose` unmaps it meanwhile; the loader's counter of unloaded objects tells when
//! an address may hold another object than before, and then every object is looked at again.
//!
//! While an install is pending, every rewrite is journaled, so that a failed install puts back
//! every slot it wrote. What was left alone, and why, is kept for the coverage.

use std::collections::HashSet;
use std::ffi::{CString, c_void};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use super::elf::{self, Object};
use super::names::{self, Names, Stand};
use super::protect::{self, Maps};
use crate::hook::coverage::{PatchedObject, Skipped};

/// One slot written: where, what it held, what it holds.
#[derive(Debug)]
struct Rewrite {
    at: *mut usize,
    old: usize,
    new: usize,
}

/// The passes' state.
#[derive(Debug, Default)]
pub(super) struct State {
    /// Passes run (an install is pending or done, and not failed since).
    on: bool,
    /// Objects patched, by base, valid while the loader's `subs` stays `subs`.
    seen: HashSet<usize>,
    subs: u64,
    /// The rewrites of a pending install.
    journal: Option<Vec<Rewrite>>,
    pub(super) objects: Vec<PatchedObject>,
    pub(super) skipped: Vec<Skipped>,
    /// The CUDA runtime's library, once loaded (and whether the user was told).
    pub(super) runtime: Option<(String, bool)>,
    /// How many of `skipped` the user was told of.
    pub(super) told_skipped: usize,
}

// SAFETY: the journal's slot addresses are only written under the state's lock.
unsafe impl Send for State {}

static STATE: Mutex<Option<State>> = Mutex::new(None);

pub(super) fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A reference to a loaded object, taken through the loader (`RTLD_NOLOAD`), so that it stays
/// mapped; dropped, it is given back.
#[derive(Debug)]
pub(super) struct Pin(*mut c_void);

impl Pin {
    /// Pins `object` if the loader knows it by its name in this namespace at its base.
    pub(super) fn new(object: &Object) -> Result<Pin, &'static str> {
        let name = CString::new(object.name.as_str()).map_err(|_| "its name holds a NUL")?;
        let file = if object.name.is_empty() {
            std::ptr::null()
        } else {
            name.as_ptr()
        };
        let handle = names::dlopen(file, libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if handle.is_null() {
            return Err(
                "the loader does not know it by its name here (another link-map namespace, or unloaded meanwhile)",
            );
        }
        let pin = Pin(handle);
        let mut map: *const usize = std::ptr::null();
        // SAFETY: a handle from the loader; `RTLD_DI_LINKMAP` writes a `struct link_map *`,
        // whose first field is the load base.
        let ok = unsafe { libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&raw mut map).cast()) } == 0;
        // SAFETY: the link map of a loaded object.
        if !ok || map.is_null() || unsafe { *map } != object.base {
            return Err("another object of that name is loaded at another address");
        }
        Ok(pin)
    }

    /// The handle, for lookups in the object's scope.
    pub(super) fn handle(&self) -> *mut c_void {
        self.0
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        // SAFETY: the handle `new` got from the loader, given back once.
        unsafe { libc::dlclose(self.0) };
    }
}

/// Starts the passes for an install: every loaded object; the rewrites are journaled until
/// [`commit`] or [`abort`]. How many slots were rewritten.
pub(super) fn begin(names: &Names) -> usize {
    let mut pins = Vec::new();
    let mut guard = state();
    let state = guard.get_or_insert_with(State::default);
    state.on = true;
    state.journal = Some(Vec::new());
    let count = pass(names, state, &mut pins);
    drop(guard);
    drop(pins); // outside the lock: giving back the last reference runs destructors
    count
}

/// The install succeeded: its rewrites stay.
pub(super) fn commit() {
    if let Some(state) = state().as_mut() {
        state.journal = None;
    }
}

/// The install failed: every slot it wrote holds again what it held, and no pass runs.
pub(super) fn abort() {
    let mut guard = state();
    let Some(state) = guard.as_mut() else { return };
    let maps = Maps::read().unwrap_or_default();
    for rw in state.journal.take().unwrap_or_default().into_iter().rev() {
        // A `dlclose` on another thread may have unloaded the object since: the slot is put
        // back only while its page is mapped and it still holds what this install wrote.
        // SAFETY: an aligned slot (checked when it was written), read only while mapped.
        if maps.protection(rw.at as usize).is_some() && unsafe { protect::load(rw.at) } == rw.new {
            // SAFETY: the slot's object is loaded (its page holds the wrapper written there),
            // and `old` is what the loader had put in it.
            let _ = unsafe { protect::store(&maps, rw.at, rw.old) };
        }
    }
    state.on = false;
    state.seen.clear();
    state.objects.clear();
    state.skipped.clear();
}

/// Set by an `after_dlopen` that found a pass running: the pass runs once more before it ends.
static PENDING: AtomicBool = AtomicBool::new(false);

/// After a `dlopen` returned an object: patch what is new. Never waits for the lock: this may
/// run inside another `dlopen` (an object's constructor loading another), holding the loader's
/// lock, while a pass on another thread waits for that lock; the running pass goes round again.
pub(super) fn after_dlopen() {
    let Some(names) = names::names() else { return };
    let Ok(mut guard) = try_state() else {
        PENDING.store(true, SeqCst);
        return;
    };
    let mut pins = Vec::new();
    if let Some(state) = guard.as_mut().filter(|s| s.on) {
        pass(names, state, &mut pins);
    }
    drop(guard);
    drop(pins);
    if super::ACTIVE.load(Relaxed) {
        super::tell_once();
    }
}

/// Patches every object not patched since the loader last unloaded one; how many slots.
/// The objects stay pinned until the caller drops `pins`, after it let go of the lock.
fn pass(names: &Names, state: &mut State, pins: &mut Vec<Pin>) -> usize {
    let mut count = pass_once(names, state, pins);
    while PENDING.swap(false, SeqCst) {
        count += pass_once(names, state, pins);
    }
    count
}

fn pass_once(names: &Names, state: &mut State, pins: &mut Vec<Pin>) -> usize {
    let census = elf::census();
    if census.subs != state.subs {
        state.seen.clear();
        state.subs = census.subs;
    }
    let maps = match Maps::read() {
        Ok(maps) => maps,
        Err(e) => {
            let reason =
                format!("/proc/self/maps could not be read ({e}): no page's protection is known");
            skip(state, "", "*", reason);
            return 0;
        }
    };
    let mut count = 0;
    for object in &census.objects {
        if elf::is_exempt(&object.name) || state.seen.contains(&object.base) {
            continue;
        }
        state.seen.insert(object.base);
        count += patch_object(names, object, &maps, state, pins);
    }
    count
}

fn patch_object(
    names: &Names,
    object: &Object,
    maps: &Maps,
    state: &mut State,
    pins: &mut Vec<Pin>,
) -> usize {
    let pin = match Pin::new(object) {
        Ok(pin) => pin,
        Err(why) => {
            skip(state, &object.name, "*", why.to_owned());
            return 0;
        }
    };
    if elf::is_cuda_runtime(&object.name) && state.runtime.is_none() {
        state.runtime = Some((object.name.clone(), false));
    }
    let own = object.base == names.own.base;
    let (mut count, mut held) = (0, 0);
    // SAFETY: the object is pinned until the caller drops `pins`.
    for slot in unsafe { elf::slots(object) } {
        let Some(stand) = names.get(slot.name.to_bytes()) else {
            continue;
        };
        // SAFETY: as above.
        match unsafe { rewrite(object, &pin, own, slot, stand, maps) } {
            Ok(Written::NotHere) => {}
            Ok(Written::Held) => held += 1,
            Ok(Written::New(rw)) => {
                count += 1;
                if let Some(journal) = state.journal.as_mut() {
                    journal.push(rw);
                }
            }
            Err(why) => skip(state, &object.name, &slot.name.to_string_lossy(), why),
        }
    }
    pins.push(pin);
    state.objects.retain(|o| o.name != object.name);
    state.objects.push(PatchedObject {
        name: object.name.clone(),
        slots: count + held,
    });
    count
}

/// What became of a slot nosync stands in for.
#[derive(Debug)]
enum Written {
    /// It holds a wrapper now.
    New(Rewrite),
    /// It held one already (an earlier pass).
    Held,
    /// It is not taken over in this object (`dlsym` outside nosync's).
    NotHere,
}

/// Writes the wrapper for one slot.
///
/// # Safety
/// `slot` is an import slot of `object`, pinned by `pin`.
unsafe fn rewrite(
    object: &Object,
    pin: &Pin,
    own: bool,
    slot: elf::Slot,
    stand: Stand,
    maps: &Maps,
) -> Result<Written, String> {
    if !protect::aligned(slot.at) {
        return Err(protect::Refused::Misaligned.to_string());
    }
    // SAFETY: an aligned slot of a pinned object.
    let held = unsafe { protect::load(slot.at) };
    let name = slot.name.to_bytes_with_nul();
    let wrapper = match stand {
        Stand::Call(entry) => wrap(&entry.targets, held, object, pin, name)?,
        Stand::GetProc(targets) => wrap(targets, held, object, pin, name)?,
        Stand::Loader(loader) if !(own || loader.everywhere()) => return Ok(Written::NotHere),
        Stand::Loader(loader) if held == loader.hook() => None,
        Stand::Loader(loader) => {
            // Not bound yet: the loader binds it as it bound nosync's own.
            let bound = held != 0 && !object.contains(held);
            let target = if bound { held } else { loader.real() };
            if target != loader.real() {
                return Err(String::from(
                    "bound to another function than nosync's object (another interposer's): left alone, so what it loads is patched at the next pass",
                ));
            }
            Some(loader.hook())
        }
    };
    let Some(wrapper) = wrapper else {
        return Ok(Written::Held);
    };
    // SAFETY: the slot names the function `wrapper` stands in for, with its signature.
    unsafe { protect::store(maps, slot.at, wrapper) }.map_err(|e| e.to_string())?;
    Ok(Written::New(Rewrite {
        at: slot.at,
        old: held,
        new: wrapper,
    }))
}

/// The wrapper for a slot holding `held`, `None` if it holds one already.
fn wrap(
    targets: &super::wrappers::Targets,
    held: usize,
    object: &Object,
    pin: &Pin,
    name: &[u8],
) -> Result<Option<usize>, String> {
    if targets.target_of_wrapper(held).is_some() {
        return Ok(None);
    }
    let target = bound(held, object, pin, name)?;
    targets.wrapper_for(target).map(Some).ok_or_else(|| {
        String::from(
            "bound to a fifth function: each of the four wrappers of this call calls another one",
        )
    })
}

/// What a slot holding `held` calls: `held` once bound; else (a lazy slot, whose value is the
/// object's own PLT code) what the loader would bind it to: the first definition in the global
/// scope, then in the object's own.
fn bound(held: usize, object: &Object, pin: &Pin, name: &[u8]) -> Result<usize, String> {
    if held != 0 && !object.contains(held) {
        return Ok(held);
    }
    [libc::RTLD_DEFAULT, pin.handle()]
        .into_iter()
        .map(|h| names::dlsym(h, name))
        .find(|&f| f != 0 && !object.contains(f))
        .ok_or_else(|| {
            String::from("not bound yet, and the loader finds no definition outside the object")
        })
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

/// The state if no one holds it now.
pub(super) fn try_state() -> Result<MutexGuard<'static, Option<State>>, ()> {
    match STATE.try_lock() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        Err(TryLockError::WouldBlock) => Err(()),
    }
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
