//! Lock crates that code uses in place of std's `Mutex` and `RwLock`: `parking_lot` and
//! `spin`. The lint does not read them (they reach no GPU crate), yet a value behind one of
//! their guards is the value a method call runs on: `self.inner.read().unwrap().step()`
//! or `fn borrow(&self) -> RwLockReadGuard<'_, Tensor>` then `x.borrow().to_vec()`. Their
//! paths are canonical from the first type on (`spin::mutex::Mutex` → `spin::Mutex`), their
//! guards deref to their one type argument, as std's do, and their locking methods give the
//! guard itself (they do not poison: no `LockResult` around it), whose drop drops no value.

/// The crates whose lock types are modelled here.
pub const LOCK_CRATES: &[&str] = &["parking_lot", "spin"];

/// Guards, by canonical path: they deref to their first type argument.
pub const GUARDS: &[&str] = &[
    "parking_lot::MutexGuard",
    "parking_lot::MappedMutexGuard",
    "parking_lot::ReentrantMutexGuard",
    "parking_lot::MappedReentrantMutexGuard",
    "parking_lot::RwLockReadGuard",
    "parking_lot::RwLockWriteGuard",
    "parking_lot::RwLockUpgradableReadGuard",
    "parking_lot::MappedRwLockReadGuard",
    "parking_lot::MappedRwLockWriteGuard",
    "spin::MutexGuard",
    "spin::RwLockReadGuard",
    "spin::RwLockWriteGuard",
    "spin::RwLockUpgradableGuard",
];

/// Locks, by canonical path, whose locking methods give the guarded value.
pub const LOCKS: &[&str] = &[
    "parking_lot::Mutex",
    "parking_lot::RwLock",
    "parking_lot::ReentrantMutex",
    "spin::Mutex",
    "spin::RwLock",
];

/// Methods of [`LOCKS`] that wait for the lock and give its guard.
pub const LOCKING: &[&str] = &["lock", "read", "write", "upgradable_read"];

/// Methods of [`LOCKS`] that give `Option<guard>`.
pub const TRY_LOCKING: &[&str] = &["try_lock", "try_read", "try_write", "try_upgradable_read"];

/// The guard a locking method `method` of lock `lock` (a canonical path of [`LOCKS`])
/// gives, by canonical path: `parking_lot::RwLock` and `read` give
/// `parking_lot::RwLockReadGuard`.
pub fn guard_of(lock: &str, method: &str) -> Option<String> {
    let (krate, ty) = lock.split_once("::")?;
    let method = method.trim_start_matches("try_");
    let guard = match (ty, method) {
        ("Mutex", "lock") => "MutexGuard",
        ("ReentrantMutex", "lock") => "ReentrantMutexGuard",
        ("RwLock", "read") => "RwLockReadGuard",
        ("RwLock", "write") => "RwLockWriteGuard",
        ("RwLock", "upgradable_read") if krate == "spin" => "RwLockUpgradableGuard",
        ("RwLock", "upgradable_read") => "RwLockUpgradableReadGuard",
        _ => return None,
    };
    Some(format!("{krate}::{guard}"))
}

/// Whether `name` is one of [`LOCK_CRATES`].
pub fn is_lock_crate(name: &str) -> bool {
    LOCK_CRATES.contains(&name)
}
