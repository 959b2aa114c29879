//! Time waited: how long the host spent in each blocking call the hook sees, from the call's
//! entry to its exit, and the process-wide table of sync sites ranked by that time.
//!
//! At a call's entry the callback packs what its exit needs (the row, the site, whether a
//! forbid scope was open, the start time) into the 64-bit slot CUPTI keeps for that one call
//! (`CUpti_CallbackData::correlationData`), so no per-thread state is kept between the two. The
//! exit unpacks it ([`finish`]): the wait goes to the innermost `count_syncs` report, and, with
//! `NOSYNC_REPORT` on, to the [`WaitTable`] under its site and calling stack.
//!
//! Pure: the clock and the stacks are arguments; `summary.rs` owns the process-wide table.

// With `--cfg nosync_off` the callback does nothing and these go unused.
#![cfg_attr(nosync_off, allow(dead_code))]

use std::collections::HashMap;
use std::fmt;
use std::panic::Location;
use std::time::Duration;

use super::table::HOOKED;
use crate::guard::report::Millis;
use crate::{Frame, SyncSite};

/// The slot's tag (bits 9..16): a slot written by an entry carries it, so an exit never trusts
/// a slot its entry did not write.
const TAG: u64 = 0x5a;
/// Bits of the start time kept (the rest wraps: 2^48 ns is 78 hours, longer than any call).
const TIME_BITS: u32 = 48;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;

/// The slot of a call whose entry reported a capture break: its exit does not report the
/// driver's refusal (900) a second time. Row 0 keeps it from being taken for a wait.
pub(crate) const BROKEN: u64 = TAG << 9;

/// What a timed call's entry hands to its exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entered {
    /// The row of [`HOOKED`].
    pub(crate) row: usize,
    /// The row's `may` site was declared (else its `does` site).
    pub(crate) may: bool,
    /// A forbid scope was open (and checks enabled) at the entry.
    pub(crate) forbidden: bool,
    /// Nanoseconds since the clock's origin.
    pub(crate) start_ns: u64,
}

impl Entered {
    /// The slot's value: row + 1 (bits 0..7), may (7), forbidden (8), tag (9..16), start (16..).
    pub(crate) fn pack(self) -> u64 {
        debug_assert!(self.row < HOOKED.len() && HOOKED.len() < 127);
        (self.row as u64 + 1)
            | u64::from(self.may) << 7
            | u64::from(self.forbidden) << 8
            | TAG << 9
            | (self.start_ns & TIME_MASK) << 16
    }

    /// The entry a slot holds, if an entry wrote it.
    pub(crate) fn unpack(slot: u64) -> Option<Entered> {
        let row = (slot & 0x7f) as usize;
        if (slot >> 9) & 0x7f != TAG || row == 0 || row > HOOKED.len() {
            return None;
        }
        Some(Entered {
            row: row - 1,
            may: slot & 1 << 7 != 0,
            forbidden: slot & 1 << 8 != 0,
            start_ns: slot >> 16,
        })
    }

    /// The declared site.
    pub(crate) fn site(self) -> &'static SyncSite {
        let row = &HOOKED[self.row];
        if self.may { &row.may } else { &row.does }
    }
}

/// One finished wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wait {
    pub(crate) site: &'static SyncSite,
    pub(crate) forbidden: bool,
    /// When the call began (nanoseconds since the clock's origin, wrapped to 48 bits).
    pub(crate) start_ns: u64,
    pub(crate) waited: Duration,
}

/// The wait a call's exit closes, from the slot its entry wrote and the time now.
pub(crate) fn finish(slot: u64, now_ns: u64) -> Option<Wait> {
    let entered = Entered::unpack(slot)?;
    let elapsed = (now_ns & TIME_MASK).wrapping_sub(entered.start_ns) & TIME_MASK;
    Some(Wait {
        site: entered.site(),
        forbidden: entered.forbidden,
        start_ns: entered.start_ns,
        waited: Duration::from_nanos(elapsed),
    })
}

/// Count, total and longest of some waits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Waited {
    /// How many.
    pub count: usize,
    /// Their sum.
    pub total: Duration,
    /// The longest.
    pub max: Duration,
}

impl Waited {
    fn add(&mut self, waited: Duration) {
        self.count += 1;
        self.total += waited;
        self.max = self.max.max(waited);
    }
}

/// The forbid scope a wait was in: a `#[no_sync]` fn (named) or a `forbid` block (located).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitScope {
    /// The `#[no_sync]` fn's name, as the attribute gives it (`step`); `None` for a block.
    pub function: Option<&'static str>,
    /// Where the scope was opened.
    pub location: Option<&'static Location<'static>>,
}

/// One sync site of the table: a blocking call reached through one calling stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitSite {
    /// The hooked call and its rule's site.
    pub site: &'static SyncSite,
    /// The first frames outside the driver, cudarc and nosync (empty without symbols).
    pub frames: Vec<Frame>,
    /// The forbid scope of its first wait inside one (`None` while it has none).
    pub scope: Option<WaitScope>,
    /// Its waits inside forbid scopes.
    pub forbidden: Waited,
    /// Its waits elsewhere.
    pub allowed: Waited,
}

impl WaitSite {
    /// Every wait of the site.
    pub fn total(&self) -> Duration {
        self.forbidden.total + self.allowed.total
    }

    /// How many waits.
    pub fn count(&self) -> usize {
        self.forbidden.count + self.allowed.count
    }

    /// The longest wait.
    pub fn max(&self) -> Duration {
        self.forbidden.max.max(self.allowed.max)
    }
}

/// Every wait of the process by sync site: a site is a hooked call with the hash of the stack
/// that reached it, so two lines of code that make the same call are two sites.
#[derive(Debug, Default)]
pub(in crate::hook) struct WaitTable {
    sites: Vec<WaitSite>,
    index: HashMap<(usize, u64), usize>,
}

impl WaitTable {
    /// Adds a wait reached through the stack `stack` (a hash), in the forbid scope `scope` (if
    /// forbidden); `frames` is called once per new site, to name it.
    pub(crate) fn add(
        &mut self,
        wait: &Wait,
        stack: u64,
        scope: Option<WaitScope>,
        frames: impl FnOnce() -> Vec<Frame>,
    ) {
        let key = (std::ptr::from_ref(wait.site) as usize, stack);
        let i = *self.index.entry(key).or_insert_with(|| {
            self.sites.push(WaitSite {
                site: wait.site,
                frames: frames(),
                scope: None,
                forbidden: Waited::default(),
                allowed: Waited::default(),
            });
            self.sites.len() - 1
        });
        let site = &mut self.sites[i];
        if wait.forbidden && site.scope.is_none() {
            site.scope = scope;
        }
        let side = if wait.forbidden {
            &mut site.forbidden
        } else {
            &mut site.allowed
        };
        side.add(wait.waited);
    }

    /// The first frame of a site, if it has one.
    pub(crate) fn frame_of(&self, site: &'static SyncSite, stack: u64) -> Option<&Frame> {
        let i = self
            .index
            .get(&(std::ptr::from_ref(site) as usize, stack))?;
        self.sites[*i].frames.first()
    }

    /// The sites, the longest total wait first (ties: the one seen first).
    pub(in crate::hook) fn ranked(&self) -> Vec<&WaitSite> {
        let mut sites: Vec<&WaitSite> = self.sites.iter().collect();
        sites.sort_by_key(|s| std::cmp::Reverse(s.total()));
        sites
    }

    /// The table as text, its first `top` sites with their frames.
    pub(in crate::hook) fn render(&self, top: usize) -> String {
        Summary { table: self, top }.to_string()
    }
}

/// The table's text: a header line, one line per site and its frames below it.
struct Summary<'a> {
    table: &'a WaitTable,
    top: usize,
}

impl fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ranked = self.table.ranked();
        let all: Duration = ranked.iter().map(|s| s.total()).sum();
        let inside: Duration = ranked.iter().map(|s| s.forbidden.total).sum();
        let waits: usize = ranked.iter().map(|s| s.count()).sum();
        write!(
            f,
            "nosync: host waits by total time: {waits} waits at {} sync sites, {} in all, {} inside forbid scopes",
            ranked.len(),
            Millis(all),
            Millis(inside)
        )?;
        if ranked.is_empty() {
            return Ok(());
        }
        write!(
            f,
            "\n  #      total  waits        max  forbidden: waits      total  call"
        )?;
        for (i, s) in ranked.iter().take(self.top).enumerate() {
            write!(
                f,
                "\n{:>3} {:>10} {:>6} {:>10} {:>17} {:>10}  `{}` [{}]",
                i + 1,
                Ms(s.total()),
                s.count(),
                Ms(s.max()),
                s.forbidden.count,
                Ms(s.forbidden.total),
                s.site.api,
                s.site.kind.as_str()
            )?;
            for frame in s.frames.iter().take(super::frame::MAX_FRAMES) {
                write!(f, "\n        at {frame}")?;
            }
        }
        if ranked.len() > self.top {
            write!(f, "\n  ({} more sites)", ranked.len() - self.top)?;
        }
        Ok(())
    }
}

/// Milliseconds for a table column: `12.345` (the header says ms).
struct Ms(Duration);

impl fmt::Display for Ms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = format!("{:.3}ms", self.0.as_secs_f64() * 1e3);
        f.pad(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(api: &str) -> usize {
        HOOKED.iter().position(|r| r.does.api == api).expect(api)
    }

    #[test]
    fn an_entry_survives_the_slot_and_a_foreign_slot_is_refused() {
        let entered = Entered {
            row: row("cuStreamSynchronize"),
            may: false,
            forbidden: true,
            start_ns: 123_456_789,
        };
        assert_eq!(Entered::unpack(entered.pack()), Some(entered));
        let may = Entered {
            may: true,
            forbidden: false,
            ..entered
        };
        assert_eq!(Entered::unpack(may.pack()), Some(may));
        assert!(std::ptr::eq(may.site(), &HOOKED[entered.row].may));
        for foreign in [0, u64::MAX, 1, 0x5a << 9, entered.pack() ^ 1 << 10] {
            assert_eq!(Entered::unpack(foreign), None, "{foreign:#x}");
        }
    }

    #[test]
    fn the_exit_measures_from_the_entry_across_the_wrap() {
        let r = row("cuMemcpyDtoHAsync_v2");
        let slot = |start_ns| {
            Entered {
                row: r,
                may: false,
                forbidden: false,
                start_ns,
            }
            .pack()
        };
        let wait = finish(slot(1_000), 5_001_000).expect("an entry wrote it");
        assert_eq!(wait.waited, Duration::from_millis(5));
        assert_eq!(wait.site.api, "cuMemcpyDtoHAsync_v2");
        assert!(!wait.forbidden);
        let near_wrap = (1 << 48) - 10;
        let wrapped = finish(slot(near_wrap), (1 << 48) + 20).unwrap();
        assert_eq!(wrapped.waited, Duration::from_nanos(30));
        assert_eq!(finish(0, 10), None);
        assert_eq!(finish(BROKEN, 10), None);
    }

    fn wait(api: &str, ms: u64, forbidden: bool) -> Wait {
        Wait {
            site: &HOOKED[row(api)].does,
            forbidden,
            start_ns: 0,
            waited: Duration::from_millis(ms),
        }
    }

    fn frame(function: &str, line: u32) -> Frame {
        Frame {
            function: function.to_owned(),
            file: Some("src/main.rs".to_owned()),
            line: Some(line),
        }
    }

    #[test]
    fn sites_are_ranked_by_total_wait_and_split_by_scope() {
        let mut table = WaitTable::default();
        let mut named = 0;
        let mut add = |table: &mut WaitTable, w: Wait, stack: u64, f: Frame| {
            table.add(&w, stack, None, || {
                named += 1;
                vec![f]
            });
        };
        // The same call from two stacks is two sites; many short waits lose to a few long ones.
        for _ in 0..3 {
            add(
                &mut table,
                wait("cuStreamSynchronize", 1, false),
                1,
                frame("app::tail", 9),
            );
        }
        for _ in 0..2 {
            add(
                &mut table,
                wait("cuMemcpyDtoHAsync_v2", 40, true),
                2,
                frame("app::step", 4),
            );
        }
        add(
            &mut table,
            wait("cuMemcpyDtoHAsync_v2", 5, false),
            2,
            frame("unused", 0),
        );
        add(
            &mut table,
            wait("cuStreamSynchronize", 2, true),
            3,
            frame("app::end", 20),
        );
        assert_eq!(named, 3, "frames are taken once per site");
        let ranked = table.ranked();
        let apis: Vec<(&str, usize)> = ranked
            .iter()
            .map(|s| (s.site.api, s.frames[0].line.unwrap() as usize))
            .collect();
        assert_eq!(
            apis,
            [
                ("cuMemcpyDtoHAsync_v2", 4),
                ("cuStreamSynchronize", 9),
                ("cuStreamSynchronize", 20)
            ]
        );
        let top = ranked[0];
        assert_eq!(
            (top.count(), top.total(), top.max()),
            (3, Duration::from_millis(85), Duration::from_millis(40))
        );
        assert_eq!((top.forbidden.count, top.allowed.count), (2, 1));
        assert_eq!(top.allowed.total, Duration::from_millis(5));
    }

    #[test]
    fn the_summary_lists_the_top_sites_with_their_frames() {
        let mut table = WaitTable::default();
        assert_eq!(
            table.render(10),
            "nosync: host waits by total time: 0 waits at 0 sync sites, 0.000 ms in all, 0.000 ms inside forbid scopes"
        );
        table.add(&wait("cuMemcpyDtoHAsync_v2", 40, true), 2, None, || {
            vec![frame("app::step", 4), frame("app::main", 30)]
        });
        table.add(&wait("cuStreamSynchronize", 1, false), 1, None, Vec::new);
        let expected = "\
nosync: host waits by total time: 2 waits at 2 sync sites, 41.000 ms in all, 40.000 ms inside forbid scopes
  #      total  waits        max  forbidden: waits      total  call
  1   40.000ms      1   40.000ms                 1   40.000ms  `cuMemcpyDtoHAsync_v2` [does]
        at `app::step` (src/main.rs:4)
        at `app::main` (src/main.rs:30)
  (1 more sites)";
        assert_eq!(table.render(1), expected);
    }
}
