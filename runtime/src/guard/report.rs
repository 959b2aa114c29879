//! Test support: `count_syncs` records every declared site; `assert_no_sync` demands none.

use std::fmt;
use std::time::Duration;

use crate::{SyncKind, SyncSite};

/// How often one site was declared inside a [`count_syncs`], and how long the host waited in
/// it (the CUPTI hook times the calls it sees, from the call's entry to its exit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteCount {
    site: &'static SyncSite,
    count: usize,
    forbidden: usize,
    timed: usize,
    waited: Duration,
    max_wait: Duration,
}

impl SiteCount {
    /// The declared site.
    pub fn site(&self) -> &'static SyncSite {
        self.site
    }

    /// How many times it was declared.
    pub fn count(&self) -> usize {
        self.count
    }

    /// How many of those were violations: inside a forbid scope with checks enabled (whatever
    /// the mode did about it, including from `Drop`).
    pub fn forbidden(&self) -> usize {
        self.forbidden
    }

    /// How many were not: outside any forbid scope, in an allow scope, or with checks disabled.
    pub fn allowed(&self) -> usize {
        self.count - self.forbidden
    }

    /// How many of the declarations were timed: the blocking CUDA calls the CUPTI hook saw
    /// (a `declare_sync` of your own, or of `nosync::gpu`, is counted but not timed).
    pub fn timed(&self) -> usize {
        self.timed
    }

    /// The total time the host waited in the timed calls (entry to exit of the CUDA call).
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// The longest single wait among the timed calls.
    pub fn max_wait(&self) -> Duration {
        self.max_wait
    }

    fn merge(&mut self, other: &SiteCount) {
        self.count += other.count;
        self.forbidden += other.forbidden;
        self.timed += other.timed;
        self.waited += other.waited;
        self.max_wait = self.max_wait.max(other.max_wait);
    }
}

/// Every site declared inside a [`count_syncs`], in order of first declaration. `Display` writes
/// one line per site under a summary line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    sites: Vec<SiteCount>,
}

impl SyncReport {
    /// The sites, in order of first declaration.
    pub fn sites(&self) -> &[SiteCount] {
        &self.sites
    }

    /// Whether nothing declared a sync.
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// How many syncs were declared in all.
    pub fn total(&self) -> usize {
        self.sites.iter().map(|s| s.count).sum()
    }

    /// How many declared syncs were violations (see [`SiteCount::forbidden`]).
    pub fn forbidden(&self) -> usize {
        self.sites.iter().map(|s| s.forbidden).sum()
    }

    /// How many declared syncs were not violations.
    pub fn allowed(&self) -> usize {
        self.total() - self.forbidden()
    }

    /// The total time the host waited in the calls the CUPTI hook timed.
    pub fn waited(&self) -> Duration {
        self.sites.iter().map(|s| s.waited).sum()
    }

    /// How many declared syncs were of this kind.
    pub fn of_kind(&self, kind: SyncKind) -> usize {
        self.sites
            .iter()
            .filter(|s| s.site.kind == kind)
            .map(|s| s.count)
            .sum()
    }

    /// How many times this very site (compared by address) was declared.
    pub fn count(&self, site: &'static SyncSite) -> usize {
        self.find(site).map_or(0, |s| s.count)
    }

    /// How many times sites with this API name were declared.
    pub fn count_api(&self, api: &str) -> usize {
        self.sites
            .iter()
            .filter(|s| s.site.api == api)
            .map(|s| s.count)
            .sum()
    }

    fn find(&self, site: &'static SyncSite) -> Option<&SiteCount> {
        self.sites.iter().find(|s| std::ptr::eq(s.site, site))
    }

    /// Adds `delta` to its site's entry (a new entry, last, for a site not seen yet).
    #[cfg_attr(nosync_off, allow(dead_code))]
    fn add(&mut self, delta: &SiteCount) {
        match self
            .sites
            .iter_mut()
            .find(|s| std::ptr::eq(s.site, delta.site))
        {
            Some(entry) => entry.merge(delta),
            None => self.sites.push(*delta),
        }
    }
}

impl SiteCount {
    #[cfg_attr(nosync_off, allow(dead_code))]
    fn declared(site: &'static SyncSite, forbidden: bool) -> SiteCount {
        SiteCount {
            site,
            count: 1,
            forbidden: usize::from(forbidden),
            timed: 0,
            waited: Duration::ZERO,
            max_wait: Duration::ZERO,
        }
    }

    #[cfg_attr(not(all(feature = "hook", not(nosync_off))), allow(dead_code))]
    fn wait(site: &'static SyncSite, waited: Duration) -> SiteCount {
        SiteCount {
            site,
            count: 0,
            forbidden: 0,
            timed: 1,
            waited,
            max_wait: waited,
        }
    }
}

impl fmt::Display for SyncReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("no syncs declared");
        }
        let (total, forbidden) = (self.total(), self.forbidden());
        let (does, may) = (self.of_kind(SyncKind::Does), self.of_kind(SyncKind::May));
        write!(f, "{total} sync{} declared ", plural(total))?;
        write!(
            f,
            "({does} does, {may} may; {forbidden} inside a forbid scope):"
        )?;
        for s in &self.sites {
            let site = s.site;
            write!(
                f,
                "\n  {} x `{}` [{}]",
                s.count,
                site.api,
                site.kind.as_str()
            )?;
            write!(f, " ({} forbidden)", s.forbidden)?;
            if s.timed > 0 {
                write!(
                    f,
                    ", waited {} (max {})",
                    Millis(s.waited),
                    Millis(s.max_wait)
                )?;
            }
            write!(f, ": {}", site.reason)?;
        }
        Ok(())
    }
}

/// A duration in milliseconds with three decimals (`12.345 ms`).
pub(crate) struct Millis(pub(crate) Duration);

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} ms", self.0.as_secs_f64() * 1e3)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Runs `f` and reports every sync declared on this thread meanwhile, violation or not, in any
/// mode, with checks enabled or not. Syncs declared on other threads are not seen. Nested calls
/// work: an inner report also counts towards the outer one. With `--cfg nosync_off` the report is
/// always empty.
pub fn count_syncs<R>(f: impl FnOnce() -> R) -> (R, SyncReport) {
    #[cfg(not(nosync_off))]
    {
        let recording = recording::Recording::start();
        let r = f();
        (r, recording.finish())
    }
    #[cfg(nosync_off)]
    {
        (f(), SyncReport::default())
    }
}

/// Runs `f` and panics with the report if anything declared a sync on this thread meanwhile,
/// allowed or not.
#[track_caller]
pub fn assert_no_sync<R>(f: impl FnOnce() -> R) -> R {
    let (r, report) = count_syncs(f);
    if !report.is_empty() {
        panic!("assert_no_sync: {report}");
    }
    r
}

#[cfg(not(nosync_off))]
pub(crate) use recording::record;
#[cfg(all(feature = "hook", not(nosync_off)))]
pub(crate) use recording::record_wait;

#[cfg(not(nosync_off))]
mod recording {
    use std::cell::Cell;

    use super::{SiteCount, SyncReport};
    use crate::SyncSite;
    use crate::guard::state::{self, RECORD};

    thread_local! {
        /// One report per active `count_syncs` on this thread, innermost last.
        static REPORTS: Cell<Vec<SyncReport>> = const { Cell::new(Vec::new()) };
    }

    fn with_reports<R>(f: impl FnOnce(&mut Vec<SyncReport>) -> R) -> Option<R> {
        REPORTS
            .try_with(|cell| {
                let mut reports = cell.take();
                let r = f(&mut reports);
                cell.set(reports);
                r
            })
            .ok()
    }

    /// Counts one declaration in the innermost active report.
    pub(crate) fn record(site: &'static SyncSite, forbidden: bool) {
        with_reports(|reports| {
            if let Some(report) = reports.last_mut() {
                report.add(&SiteCount::declared(site, forbidden));
            }
        });
    }

    /// Adds one timed wait at `site` to the innermost active report (the hook counted the call
    /// at its entry with [`record`]).
    #[cfg(feature = "hook")]
    pub(crate) fn record_wait(site: &'static SyncSite, waited: std::time::Duration) {
        with_reports(|reports| {
            if let Some(report) = reports.last_mut() {
                report.add(&SiteCount::wait(site, waited));
            }
        });
    }

    /// An active `count_syncs`; dropping it (also by unwinding) closes it.
    pub(super) struct Recording {
        finished: bool,
        /// Keeps the observer's demand (the hook's callbacks on) while recording.
        _demand: crate::guard::seam::Demand,
    }

    impl Recording {
        pub(super) fn start() -> Recording {
            state::catch_up();
            if with_reports(|reports| reports.push(SyncReport::default())).is_some() {
                state::set_flag(RECORD, true);
            }
            Recording {
                finished: false,
                _demand: crate::guard::seam::demand(),
            }
        }

        pub(super) fn finish(mut self) -> SyncReport {
            self.finished = true;
            close()
        }
    }

    impl Drop for Recording {
        fn drop(&mut self) {
            if !self.finished {
                close();
            }
        }
    }

    /// Pops the innermost report, adds it to its parent, and stops recording after the outermost.
    fn close() -> SyncReport {
        state::catch_up();
        let (report, outermost) = with_reports(|reports| {
            let report = reports.pop().unwrap_or_default();
            if let Some(parent) = reports.last_mut() {
                for s in &report.sites {
                    parent.add(s);
                }
            }
            (report, reports.is_empty())
        })
        .unwrap_or((SyncReport::default(), true));
        if outermost {
            state::set_flag(RECORD, false);
        }
        report
    }
}
