//! Process-wide "first time" sets: call sites of `allow_sync_once`, and sites already logged.

use std::collections::HashSet;
use std::panic::Location;
use std::sync::{Mutex, PoisonError};

type Key = (&'static str, u32, u32);

static ONCE_SITES: Mutex<Option<HashSet<Key>>> = Mutex::new(None);

/// `true` the first time it is called with this location (compared by file, line and column).
pub(crate) fn first_time(loc: &'static Location<'static>) -> bool {
    let key = (loc.file(), loc.line(), loc.column());
    let mut set = ONCE_SITES.lock().unwrap_or_else(PoisonError::into_inner);
    set.get_or_insert_with(HashSet::new).insert(key)
}

/// The channels a violation is reported on once per site.
#[cfg(not(nosync_off))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Channel {
    /// `Mode::Log`: a `log::warn!` record.
    Log,
    /// `Mode::Warn`: a stderr line.
    Warn,
    /// `declare_sync_in_drop` in `Mode::Error`/`Mode::Panic`: a `log::error!` record.
    InDrop,
    /// A would-be panic while the thread is already panicking: a `log::error!` record.
    Unwinding,
}

#[cfg(not(nosync_off))]
static REPORTED: Mutex<Option<HashSet<(usize, Channel)>>> = Mutex::new(None);

/// `true` the first time this site is reported on this channel (sites compared by address).
#[cfg(not(nosync_off))]
pub(crate) fn first_report(site: &'static crate::SyncSite, channel: Channel) -> bool {
    let key = (std::ptr::from_ref(site) as usize, channel);
    let mut set = REPORTED.lock().unwrap_or_else(PoisonError::into_inner);
    set.get_or_insert_with(HashSet::new).insert(key)
}
