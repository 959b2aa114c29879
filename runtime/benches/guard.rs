//! Cost of the checks, each beside an empty `#[inline(never)]` call measured in the same run.
//!
//! ```text
//! cargo bench -p nosync --no-default-features --bench guard
//! RUSTFLAGS="--cfg nosync_off" CARGO_TARGET_DIR=target/nosync-off \
//!     cargo bench -p nosync --no-default-features --bench guard
//! ```
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

#[inline(never)]
fn empty_unit_call() {
    black_box(());
}

fn declare_sync(c: &mut Criterion) {
    let mut g = c.benchmark_group("declare_sync");
    g.bench_function("empty_call", |b| b.iter(|| empty_call(black_box(&SITE))));
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
