//! One slot, one decision: what an import slot naming a call nosync stands in for gets, written
//! while its object is pinned (a reference taken through the loader, so that no `dlclose`
//! unmaps it meanwhile).

use std::ffi::{CString, c_void};

use super::elf::{self, Object};
use super::names::{self, Stand};
use super::protect::{self, Maps};

/// A reference to a loaded object, taken through the loader (`RTLD_NOLOAD`), so that it stays
/// mapped; dropped, it is given back.
#[derive(Debug)]
pub(super) struct Pin(*mut c_void);

// SAFETY: a loader handle is valid on any thread.
unsafe impl Send for Pin {}

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

/// One slot written: where, what it held, what it holds.
#[derive(Debug)]
pub(super) struct Rewrite {
    pub(super) at: *mut usize,
    pub(super) old: usize,
    pub(super) new: usize,
}

/// What became of a slot nosync stands in for.
#[derive(Debug)]
pub(super) enum Written {
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
pub(super) unsafe fn rewrite(
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
    if held == 0 {
        // A weak symbol no object defines: the object checks for it, and must keep seeing none.
        return Ok(Written::NotHere);
    }
    let name = slot.name.to_bytes_with_nul();
    let wrapper = match stand {
        Stand::Call(entry) => wrap(&entry.targets, held, object, pin, name)?,
        Stand::GetProc(targets) => wrap(targets, held, object, pin, name)?,
        Stand::Loader(loader) if !(own || loader.everywhere()) || loader.real() == 0 => {
            return Ok(Written::NotHere);
        }
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
