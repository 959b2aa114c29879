//! Cost of the checks, each beside an empty `#[inline(never)]` call measured in the same run
//! (`inlined_noop` is the floor: the benchmark loop alone).
//!
//! ```text
//! cargo bench -p nosync --no-default-features --bench guard
//! RUSTFLAGS="--cfg nosync_off" CARGO_TARGET_DIR=target/nosync-off \
//!     cargo bench -p nosync --no-default-features --bench guard
//! ```
//!
//! Measured 2026-11-30 (criterion median; the same binaries on an idle 16-core x86-64 host):
//!
//! | benchmark                              | checks on | `--cfg nosync_off` |
//! |----------------------------------------|-----------|--------------------|
//! | declare_sync/empty_call                | 1.57 ns   | 1.40 ns            |
//! | declare_sync/outside_any_scope         | 0.52 ns   | 0.38 ns            |
//! | declare_sync/inside_allow_scope        | 0.69 ns   | 0.37 ns            |
//! | declare_sync/forbidden_in_mode_allow   | 6.35 ns   | 0.40 ns            |
//! | guard/empty_call                       | 1.39 ns   | 1.49 ns            |
//! | guard/inlined_noop                     | 0.39 ns   | 0.40 ns            |
//! | guard/forbid_enter_exit                | 8.41 ns   | 0.38 ns            |
//! | guard/allow_enter_exit                 | 5.66 ns   | 0.39 ns            |
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use nosync::{Mode, SyncSite, SyncViolation};

static SITE: SyncSite = SyncSite::does("Stream::synchronize", "waits for all work on the stream");

/// The baseline: a call that does nothing, with the same signature as `declare_sync`.
#[inline(never)]
fn empty_call(site: &'static SyncSite) -> Result<(), SyncViolation> {
    black_box(site);
    Ok(())
}

/// What a compiled-out check should cost: nothing beyond the benchmark loop itself.
#[inline(always)]
fn inlined_noop(site: &'static SyncSite) -> Result<(), SyncViolation> {
    black_box(site);
    Ok(())
}

#[inline(never)]
fn empty_unit_call() {
    black_box(());
}

fn declare_sync(c: &mut Criterion) {
    let mut g = c.benchmark_group("declare_sync");
    g.bench_function("empty_call", |b| b.iter(|| empty_call(black_box(&SITE))));
    g.bench_function("inlined_noop", |b| {
        b.iter(|| inlined_noop(black_box(&SITE)))
    });
    g.bench_function("outside_any_scope", |b| {
        b.iter(|| nosync::declare_sync(black_box(&SITE)))
    });
    g.bench_function("inside_allow_scope", |b| {
        let _forbid = nosync::forbid();
        let _allow = nosync::allow();
        b.iter(|| nosync::declare_sync(black_box(&SITE)))
    });
    g.bench_function("forbidden_in_mode_allow", |b| {
        nosync::with_mode(Mode::Allow, || {
            let _forbid = nosync::forbid();
            b.iter(|| nosync::declare_sync(black_box(&SITE)))
        })
    });
    g.finish();
}

fn guards(c: &mut Criterion) {
    let mut g = c.benchmark_group("guard");
    g.bench_function("empty_call", |b| b.iter(empty_unit_call));
    g.bench_function("inlined_noop", |b| b.iter(|| black_box(())));
    g.bench_function("forbid_enter_exit", |b| {
        b.iter(|| drop(black_box(nosync::forbid())))
    });
    g.bench_function("allow_enter_exit", |b| {
        b.iter(|| drop(black_box(nosync::allow())))
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = declare_sync, guards
}
criterion_main!(benches);
