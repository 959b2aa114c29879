//! On a GPU: the table is true. For each operation, queue a ~100 ms spin kernel, call the
//! operation, and measure whether the host waited (elapsed >= 80 ms); it must have waited
//! exactly when the choke point declared `Does` (granularity `Actual`). Setup operations and
//! extra facts are measured and printed. Skipped visibly without a GPU.
#![cfg(feature = "cuda")]
// `keep(op()?)` keeps whatever an op returns, `()` included.
#![allow(clippy::unit_arg)]

#[path = "../gpu_support/mod.rs"]
mod gpu_support;

use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpu_support::{exclusive, gpu, say, with_granularity};
use nosync::SyncKind;
use nosync::gpu::{Error, Gpu, Granularity, Kernels, LaunchConfig, Module, PinnedBuffer, Stream};

const SPIN: Duration = Duration::from_millis(100);
const WAITED: Duration = Duration::from_millis(80);
const DID_NOT_WAIT: Duration = Duration::from_millis(30);
const MIB: usize = 1 << 20;
const USER_SRC: &str = r#"
extern "C" __global__ void add_one(float* x, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"#;

type Keep = Box<dyn Any>;
type Op = Box<dyn FnOnce() -> Result<Keep, Error>>;

struct Env {
    gpu: Gpu,
    k: Arc<Kernels>,
    s: Stream,
}

impl Env {
    fn busy(&self) -> Result<(), Error> {
        self.k.spin(&self.s, SPIN)
    }
}

/// `Checked`: the measured wait must equal the choke point's decision. `Info`: printed only
/// (setup operations whose cost is the driver or compiler, and extra facts).
#[derive(PartialEq, Clone, Copy)]
enum Kind {
    Checked,
    Info,
}

struct Scenario {
    name: &'static str,
    kind: Kind,
    make: fn(&Env) -> Result<Op, Error>,
}

fn keep<T: 'static>(t: T) -> Keep {
    Box::new(t)
}

fn f32s(bytes: usize) -> Vec<f32> {
    vec![1.0; bytes / 4]
}

macro_rules! scenario {
    ($kind:ident, $name:literal, |$e:ident| $body:block) => {
        Scenario {
            name: $name,
            kind: Kind::$kind,
            make: |$e: &Env| -> Result<Op, Error> { $body },
        }
    };
}

// After the macro: `scenario!` is in scope by text.
mod scenarios;
use scenarios::{copies, info, launches_and_modules, pinned_and_memory};

fn pending_pinned(e: &Env, len: usize) -> Result<PinnedBuffer<f32>, Error> {
    let src = e.s.alloc_zeros::<f32>(len)?;
    let mut p = PinnedBuffer::new(&e.gpu, len)?;
    e.busy()?;
    src.to_host_async(&mut p)?;
    Ok(p)
}

fn scenarios() -> Vec<Scenario> {
    let mut v = vec![
        scenario!(Checked, "Stream::synchronize", |e| {
            e.busy()?;
            let s = e.s.clone();
            Ok(Box::new(move || Ok(keep(s.synchronize()?))))
        }),
        scenario!(
            Checked,
            "Gpu::synchronize (spin on a created stream)",
            |e| {
                let s2 = e.gpu.new_stream()?;
                e.k.spin(&s2, SPIN)?;
                let g = e.gpu.clone();
                Ok(Box::new(move || Ok(keep((g.synchronize()?, s2)))))
            }
        ),
        scenario!(Checked, "Gpu::new_stream (first in the context)", |e| {
            let fresh = Gpu::new(0)?;
            e.busy()?;
            Ok(Box::new(move || Ok(keep((fresh.new_stream()?, fresh)))))
        }),
        scenario!(Checked, "Gpu::new_stream (not the first)", |e| {
            let fresh = Gpu::new(0)?;
            let first = fresh.new_stream()?;
            e.busy()?;
            Ok(Box::new(move || {
                Ok(keep((fresh.new_stream()?, first, fresh)))
            }))
        }),
        scenario!(Checked, "Event::synchronize", |e| {
            let ev = e.gpu.new_event(false)?;
            e.busy()?;
            ev.record(&e.s)?;
            Ok(Box::new(move || Ok(keep(ev.synchronize()?))))
        }),
        scenario!(Checked, "Event::elapsed_ms", |e| {
            let (a, b) = (e.gpu.new_event(true)?, e.gpu.new_event(true)?);
            a.record(&e.s)?;
            e.busy()?;
            b.record(&e.s)?;
            Ok(Box::new(move || Ok(keep(a.elapsed_ms(&b)?))))
        }),
        scenario!(Checked, "DeviceBuffer::to_vec (4 bytes)", |e| {
            let b = e.s.alloc_zeros::<f32>(1)?;
            e.busy()?;
            Ok(Box::new(move || Ok(keep(b.to_vec()?))))
        }),
    ];
    v.extend(copies());
    v.extend(pinned_and_memory());
    v.extend(launches_and_modules());
    v.extend(info());
    v
}

/// `count` pageable uploads of `bytes` each, back to back behind the spin.
fn uploads(e: &Env, count: usize, bytes: usize) -> Result<Op, Error> {
    uploads_of(e, &vec![bytes; count])
}

/// Pageable uploads of the given sizes, back to back behind the spin.
fn uploads_of(e: &Env, sizes: &[usize]) -> Result<Op, Error> {
    let mut work = Vec::new();
    for &bytes in sizes {
        work.push((e.s.alloc_zeros::<f32>(bytes / 4)?, f32s(bytes)));
    }
    e.busy()?;
    Ok(Box::new(move || {
        for (b, h) in &mut work {
            b.upload(h)?;
        }
        Ok(keep(work))
    }))
}

fn launches(e: &Env, count: usize) -> Result<Op, Error> {
    let (s, k) = (e.s.clone(), e.k.clone());
    let mut x = s.alloc_zeros::<f32>(256)?;
    e.busy()?;
    Ok(Box::new(move || {
        for _ in 0..count {
            k.scale(&s, &mut x, 1.0)?;
        }
        Ok(keep(x))
    }))
}

struct Row {
    name: &'static str,
    kind: Kind,
    declared_does: bool,
    elapsed: Duration,
}

impl Row {
    fn verdict(&self) -> &'static str {
        let waited = self.elapsed >= WAITED;
        let free = self.elapsed < DID_NOT_WAIT;
        match (&self.kind, waited, free, self.declared_does) {
            (Kind::Info, ..) => "info",
            (_, true, _, true) | (_, _, true, false) => "ok",
            (_, false, false, _) => "INCONCLUSIVE",
            _ => "MISMATCH",
        }
    }
}

fn measure(env: &Env, sc: &Scenario) -> Result<Row, Error> {
    env.gpu.synchronize()?;
    let op = (sc.make)(env)?;
    let t0 = Instant::now();
    let (kept, report) = nosync::count_syncs(op);
    let elapsed = t0.elapsed();
    let kept = kept?;
    env.gpu.synchronize()?;
    drop(kept);
    let declared_does = report.of_kind(SyncKind::Does) > 0;
    Ok(Row {
        name: sc.name,
        kind: sc.kind,
        declared_does,
        elapsed,
    })
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test -p nosync --test gpu_behaviour -- --include-ignored"]
fn the_table_is_true_on_this_gpu() -> Result<(), Error> {
    let _x = exclusive();
    let gpu = gpu("gpu_behaviour::the_table_is_true_on_this_gpu");
    let env = Env {
        k: gpu.kernels()?,
        s: gpu.default_stream(),
        gpu,
    };
    say(&format!(
        "device: {} (memory pools: {}), spin {SPIN:?}: waited >= {WAITED:?}, did not wait < {DID_NOT_WAIT:?}",
        env.gpu.name()?,
        env.gpu.has_memory_pools()
    ));
    let rows = with_granularity(Granularity::Actual, || {
        scenarios()
            .iter()
            .map(|sc| measure(&env, sc))
            .collect::<Result<Vec<_>, Error>>()
    })?;
    say("| operation | choke point: Does? | host elapsed (ms) | verdict |");
    say("| --- | --- | --- | --- |");
    for r in &rows {
        let ms = r.elapsed.as_secs_f64() * 1e3;
        say(&format!(
            "| {} | {} | {ms:.2} | {} |",
            r.name,
            r.declared_does,
            r.verdict()
        ));
    }
    let bad: Vec<_> = rows
        .iter()
        .filter(|r| !matches!(r.verdict(), "ok" | "info"))
        .map(|r| r.name)
        .collect();
    let checked = rows.iter().filter(|r| r.kind == Kind::Checked).count();
    say(&format!(
        "table verified: {} of {checked} checked rows agree",
        checked - bad.len()
    ));
    assert!(
        bad.is_empty(),
        "the measured behaviour disagrees with the choke point: {bad:?}"
    );
    Ok(())
}
