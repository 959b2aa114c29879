//! On a GPU: every blocking op under `forbid` produces the violation in every mode and both
//! granularities (or, under `Actual`, exactly when its arguments make the host wait); every
//! non-blocking op declares nothing. Skipped visibly without a GPU.
#![cfg(feature = "cuda")]
// `keep(op()?)` keeps whatever an op returns, `()` included.
#![allow(clippy::unit_arg)]

mod gpu_support;

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use gpu_support::{exclusive, gpu, say, with_granularity};
use nosync::gpu::{
    DeviceBuffer, Error, Gpu, Granularity, Kernels, LaunchConfig, Module, PinnedBuffer, Stream,
};
use nosync::{Mode, SyncKind};

const USER_SRC: &str = r#"
extern "C" __global__ void add_one(float* x, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"#;
const BIG: usize = 2 << 20; // f32 elements: 8 MiB, above the staging limit
const SMALL: usize = 1024; // 4 KiB

type Keep = Box<dyn Any>;
type Op = Box<dyn FnOnce() -> Result<Keep, Error>>;

struct Env {
    gpu: Gpu,
    k: Arc<Kernels>,
    s: Stream,
}

struct Case {
    name: &'static str,
    /// The op runs in a `Drop` (never panics, never returns the error).
    in_drop: bool,
    /// With these arguments the host waits (so `Actual` declares `Does`).
    waits: bool,
    /// Whether the op can block at all (has sites); `false` for the non-blocking ops.
    checked: bool,
    make: fn(&Env) -> Result<Op, Error>,
}

fn keep<T: 'static>(t: T) -> Keep {
    Box::new(t)
}

fn pending_copy(env: &Env) -> Result<PinnedBuffer<f32>, Error> {
    let src = env.s.alloc_zeros::<f32>(SMALL)?;
    let mut pinned = PinnedBuffer::new(&env.gpu, SMALL)?;
    env.k.spin(&env.s, Duration::from_millis(50))?;
    src.to_host_async(&mut pinned)?;
    // `src` is freed on the stream after the copy (stream-ordered).
    Ok(pinned)
}

fn checked(name: &'static str, waits: bool, make: fn(&Env) -> Result<Op, Error>) -> Case {
    Case {
        name,
        in_drop: false,
        waits,
        checked: true,
        make,
    }
}

fn in_drop(name: &'static str, waits: bool, make: fn(&Env) -> Result<Op, Error>) -> Case {
    Case {
        name,
        in_drop: true,
        waits,
        checked: true,
        make,
    }
}

fn free(name: &'static str, make: fn(&Env) -> Result<Op, Error>) -> Case {
    Case {
        name,
        in_drop: false,
        waits: false,
        checked: false,
        make,
    }
}

fn cases(pools: bool) -> Vec<Case> {
    vec![
        checked("Gpu::new", true, |_| {
            Ok(Box::new(|| Ok(keep(Gpu::new(0)?))))
        }),
        checked("Gpu::synchronize", true, |e| {
            let g = e.gpu.clone();
            Ok(Box::new(move || Ok(keep(g.synchronize()?))))
        }),
        checked("Gpu::new_stream", true, |_| {
            let fresh = Gpu::new(0)?; // a new cudarc context object: no stream yet
            Ok(Box::new(move || Ok(keep((fresh.new_stream()?, fresh)))))
        }),
        checked("Gpu::kernels", true, |_| {
            let fresh = Gpu::new(0)?;
            Ok(Box::new(move || Ok(keep((fresh.kernels()?, fresh)))))
        }),
        checked("Module::compile", true, |e| {
            let g = e.gpu.clone();
            Ok(Box::new(move || {
                Ok(keep(Module::compile(&g, "user", USER_SRC)?))
            }))
        }),
        in_drop("Module::drop", true, |e| {
            let m = Module::compile(&e.gpu, "user", USER_SRC)?;
            Ok(Box::new(move || Ok(keep(drop(m)))))
        }),
        in_drop("Kernel::drop", true, |e| {
            let k = Module::compile(&e.gpu, "user", USER_SRC)?.kernel("add_one")?;
            Ok(Box::new(move || Ok(keep(drop(k)))))
        }),
        checked("Stream::synchronize", true, |e| {
            let s = e.s.clone();
            Ok(Box::new(move || Ok(keep(s.synchronize()?))))
        }),
        checked("Stream::alloc_zeros", !pools, |e| {
            let s = e.s.clone();
            Ok(Box::new(move || Ok(keep(s.alloc_zeros::<f32>(SMALL)?))))
        }),
        checked("Stream::from_host", true, |e| {
            let (s, v) = (e.s.clone(), vec![1.0f32; BIG]);
            Ok(Box::new(move || Ok(keep(s.from_host(&v)?))))
        }),
        checked("Stream::from_host", !pools, |e| {
            let (s, v) = (e.s.clone(), vec![1.0f32; SMALL]);
            Ok(Box::new(move || Ok(keep(s.from_host(&v)?))))
        }),
        checked("Stream::from_pinned", !pools, |e| {
            let (s, p) = (e.s.clone(), PinnedBuffer::<f32>::new(&e.gpu, SMALL)?);
            Ok(Box::new(move || Ok(keep((s.from_pinned(&p)?, p)))))
        }),
        checked("DeviceBuffer::to_vec", true, |e| {
            let b = e.s.alloc_zeros::<f32>(SMALL)?;
            Ok(Box::new(move || Ok(keep(b.to_vec()?))))
        }),
        checked("DeviceBuffer::upload", true, |e| {
            let (mut b, v) = (e.s.alloc_zeros::<f32>(BIG)?, vec![2.0f32; BIG]);
            Ok(Box::new(move || Ok(keep((b.upload(&v)?, b)))))
        }),
        checked("DeviceBuffer::upload", false, |e| {
            let (mut b, v) = (e.s.alloc_zeros::<f32>(SMALL)?, vec![2.0f32; SMALL]);
            Ok(Box::new(move || Ok(keep((b.upload(&v)?, b)))))
        }),
        checked("DeviceBuffer::try_clone", !pools, |e| {
            let b = e.s.alloc_zeros::<f32>(SMALL)?;
            Ok(Box::new(move || Ok(keep((b.try_clone()?, b)))))
        }),
        in_drop("DeviceBuffer::drop", !pools, |e| {
            let b = e.s.alloc_zeros::<f32>(SMALL)?;
            Ok(Box::new(move || Ok(keep(drop(b)))))
        }),
        checked("PinnedBuffer::new", true, |e| {
            let g = e.gpu.clone();
            Ok(Box::new(move || {
                Ok(keep(PinnedBuffer::<f32>::new(&g, SMALL)?))
            }))
        }),
        checked("PinnedBuffer::read", true, |e| {
            let p = pending_copy(e)?;
            Ok(Box::new(move || Ok(keep((p.read()?.len(), p)))))
        }),
        checked("PinnedBuffer::read", false, |e| {
            let p = pending_copy(e)?;
            e.s.synchronize()?;
            Ok(Box::new(move || Ok(keep((p.read()?.len(), p)))))
        }),
        checked("PinnedBuffer::write", true, |e| {
            let mut p = pending_copy(e)?;
            Ok(Box::new(move || Ok(keep((p.write()?.len(), p)))))
        }),
        in_drop("PinnedBuffer::drop", true, |e| {
            let p = pending_copy(e)?;
            Ok(Box::new(move || Ok(keep(drop(p)))))
        }),
        checked("Event::synchronize", true, |e| {
            let ev = e.gpu.new_event(false)?;
            ev.record(&e.s)?;
            Ok(Box::new(move || Ok(keep(ev.synchronize()?))))
        }),
        checked("Event::elapsed_ms", true, |e| {
            let (a, b) = (e.gpu.new_event(true)?, e.gpu.new_event(true)?);
            a.record(&e.s)?;
            b.record(&e.s)?;
            Ok(Box::new(move || Ok(keep(a.elapsed_ms(&b)?))))
        }),
    ]
}

fn non_blocking() -> Vec<Case> {
    vec![
        free("Kernels::fill+scale+axpy+add+mul", |e| {
            let (s, k) = (e.s.clone(), e.k.clone());
            let (mut x, mut y, mut z) = (
                s.alloc_zeros(SMALL)?,
                s.alloc_zeros(SMALL)?,
                s.alloc_zeros(SMALL)?,
            );
            Ok(Box::new(move || {
                k.fill(&s, &mut x, 1.0)?;
                k.scale(&s, &mut x, 2.0)?;
                k.axpy(&s, 0.5, &x, &mut y)?;
                k.add(&s, &x, &y, &mut z)?;
                k.mul(&s, &x, &y, &mut z)?;
                Ok(keep((x, y, z)))
            }))
        }),
        free("Kernels::sum+dot+argmax+spin", |e| {
            let (s, k) = (e.s.clone(), e.k.clone());
            let (x, mut out, mut idx) = (
                s.alloc_zeros::<f32>(SMALL)?,
                s.alloc_zeros(1)?,
                s.alloc_zeros(1)?,
            );
            Ok(Box::new(move || {
                k.sum(&s, &x, &mut out)?;
                k.dot(&s, &x, &x, &mut out)?;
                k.argmax(&s, &x, &mut idx)?;
                k.spin(&s, Duration::from_millis(1))?;
                Ok(keep((x, out, idx)))
            }))
        }),
        free("Launch::launch+Module::kernel", |e| {
            let (s, m) = (e.s.clone(), Module::compile(&e.gpu, "user", USER_SRC)?);
            let mut x = s.alloc_zeros::<f32>(SMALL)?;
            Ok(Box::new(move || {
                let k = m.kernel("add_one")?;
                let n = SMALL as u32;
                // SAFETY: matches add_one(float*, unsigned); the kernel checks i < n.
                unsafe {
                    s.launch(&k)
                        .arg(&mut x)
                        .arg(&n)
                        .launch(LaunchConfig::for_num_elems(n))?
                };
                Ok(keep((m, k, x)))
            }))
        }),
        free("copies: to_host_async+upload_pinned+copy_from", |e| {
            let s = e.s.clone();
            let (a, mut b) = (s.alloc_zeros::<f32>(BIG)?, s.alloc_zeros::<f32>(BIG)?);
            let mut p = PinnedBuffer::new(&e.gpu, BIG)?;
            Ok(Box::new(move || {
                a.to_host_async(&mut p)?;
                b.upload_pinned(&p)?;
                b.copy_from(&a)?;
                Ok(keep((a, b, p)))
            }))
        }),
        free("events and queries", |e| {
            let (g, s) = (e.gpu.clone(), e.s.clone());
            let p = pending_copy(e)?;
            Ok(Box::new(move || {
                let ev = g.new_event(false)?;
                s.record_event(&ev)?;
                g.default_stream().wait_event(&ev)?;
                let done = (
                    ev.is_complete()?,
                    p.is_ready()?,
                    p.try_read()?.is_some(),
                    g.name()?,
                );
                Ok(keep((ev, p, done)))
            }))
        }),
    ]
}

enum Outcome {
    Panicked(String),
    Returned(Result<Keep, Error>),
}

fn run_case(env: &Env, case: &Case, mode: Mode) -> Result<(Outcome, nosync::SyncReport), Error> {
    let op = (case.make)(env)?;
    let (outcome, report) = nosync::count_syncs(|| {
        nosync::with_mode(mode, || {
            let _hot = nosync::forbid();
            match catch_unwind(AssertUnwindSafe(op)) {
                Ok(r) => Outcome::Returned(r),
                Err(p) => Outcome::Panicked(
                    p.downcast_ref::<String>()
                        .cloned()
                        .unwrap_or_else(|| "<non-string panic>".into()),
                ),
            }
        })
    });
    env.gpu.synchronize()?; // outside the scope; Keep values are dropped by the caller
    Ok((outcome, report))
}

fn check_case(env: &Env, case: &Case, g: Granularity, mode: Mode) -> Result<Vec<String>, Error> {
    let (outcome, report) = run_case(env, case, mode)?;
    let mut problems = Vec::new();
    let label = format!("{} (waits: {}) under {g:?}/{mode:?}", case.name, case.waits);
    let violates = case.checked && (g == Granularity::Declared || case.waits);
    let kind = if g == Granularity::Declared {
        SyncKind::May
    } else {
        SyncKind::Does
    };
    let hits: usize = report
        .sites()
        .iter()
        .filter(|c| c.site().api == case.name && c.site().kind == kind)
        .map(|c| c.forbidden())
        .sum();
    if violates && hits == 0 {
        problems.push(format!(
            "{label}: no forbidden {kind:?} site recorded; report: {report}"
        ));
    }
    if !violates && !report.is_empty() {
        problems.push(format!("{label}: declared something: {report}"));
    }
    let expect_panic = violates && mode == Mode::Panic && !case.in_drop;
    let expect_err = violates && mode == Mode::Error && !case.in_drop;
    match outcome {
        Outcome::Panicked(msg) if expect_panic && msg.contains(case.name) => {}
        Outcome::Panicked(msg) => problems.push(format!("{label}: unexpected panic: {msg}")),
        Outcome::Returned(Err(Error::Sync(v))) if expect_err && v.site().api == case.name => {}
        Outcome::Returned(Err(e)) => problems.push(format!("{label}: unexpected error: {e}")),
        Outcome::Returned(Ok(_)) if expect_panic || expect_err => {
            problems.push(format!("{label}: expected a violation, got Ok"))
        }
        Outcome::Returned(Ok(_)) => {}
    }
    Ok(problems)
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test -p nosync --test gpu_ops -- --include-ignored"]
fn every_op_is_checked_in_every_mode_and_granularity() -> Result<(), Error> {
    let _x = exclusive();
    let gpu = gpu("gpu_ops::every_op_is_checked_in_every_mode_and_granularity");
    let env = Env {
        k: gpu.kernels()?,
        s: gpu.default_stream(),
        gpu,
    };
    let all: Vec<Case> = cases(env.gpu.has_memory_pools())
        .into_iter()
        .chain(non_blocking())
        .collect();
    let mut problems = Vec::new();
    let mut runs = 0;
    for g in [Granularity::Declared, Granularity::Actual] {
        for mode in Mode::ALL {
            for case in &all {
                problems.extend(with_granularity(g, || check_case(&env, case, g, mode))?);
                runs += 1;
            }
        }
    }
    say(&format!(
        "gpu_ops: {runs} checks over {} cases, {} problems",
        all.len(),
        problems.len()
    ));
    assert!(problems.is_empty(), "{problems:#?}");
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test -p nosync --test gpu_ops -- --include-ignored"]
fn buffers_keep_their_values() -> Result<(), Error> {
    let _x = exclusive();
    let gpu = gpu("gpu_ops::buffers_keep_their_values");
    let s = gpu.default_stream();
    let host: Vec<f32> = (0..SMALL).map(|i| i as f32).collect();
    let a: DeviceBuffer<f32> = s.from_host(&host)?;
    let mut p = PinnedBuffer::new(&gpu, SMALL)?;
    a.to_host_async(&mut p)?;
    assert_eq!(p.read()?, &host[..]);
    p.write()?.iter_mut().for_each(|x| *x *= 2.0);
    let b = s.from_pinned(&p)?;
    let mut c = b.try_clone()?;
    c.copy_from(&b)?;
    let doubled: Vec<f32> = host.iter().map(|x| x * 2.0).collect();
    assert_eq!(c.to_vec()?, doubled);
    c.upload(&host)?;
    assert_eq!(c.to_vec()?, host);
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test -p nosync --test gpu_ops -- --include-ignored"]
fn builtin_kernels_compute_the_right_values() -> Result<(), Error> {
    let _x = exclusive();
    let gpu = gpu("gpu_ops::builtin_kernels_compute_the_right_values");
    let (k, s) = (gpu.kernels()?, gpu.default_stream());
    let n = 100_003; // not a multiple of any block size
    let xs: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 100.0 - 5.0)
        .collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25).collect();
    let (x, mut y) = (s.from_host(&xs)?, s.from_host(&ys)?);
    let mut z = s.alloc_zeros::<f32>(n)?;
    k.add(&s, &x, &y, &mut z)?;
    let sum_ref: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
    assert_eq!(z.to_vec()?, sum_ref);
    k.mul(&s, &x, &y, &mut z)?;
    let mul_ref: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a * b).collect();
    assert_eq!(z.to_vec()?, mul_ref);
    k.axpy(&s, 2.0, &x, &mut y)?;
    let axpy_ref: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| b + 2.0 * a).collect();
    assert_eq!(y.to_vec()?, axpy_ref);
    k.fill(&s, &mut z, 3.0)?;
    k.scale(&s, &mut z, 0.5)?;
    assert!(z.to_vec()?.iter().all(|v| *v == 1.5));
    let mut out = s.alloc_zeros::<f32>(1)?;
    k.sum(&s, &x, &mut out)?;
    let total: f64 = xs.iter().map(|v| *v as f64).sum();
    let got = out.to_vec()?[0] as f64;
    assert!(
        (got - total).abs() < 1e-3 * total.abs().max(1.0),
        "sum {got} vs {total}"
    );
    k.dot(&s, &x, &x, &mut out)?;
    let dot: f64 = xs.iter().map(|v| (*v as f64) * (*v as f64)).sum();
    let got = out.to_vec()?[0] as f64;
    assert!((got - dot).abs() < 1e-4 * dot, "dot {got} vs {dot}");
    let mut idx = s.alloc_zeros::<u32>(1)?;
    let mut peaks = xs.clone();
    peaks[77_777] = 1e6;
    peaks[88_888] = 1e6; // a tie: the first index wins
    let p = s.from_host(&peaks)?;
    k.argmax(&s, &p, &mut idx)?;
    assert_eq!(idx.to_vec()?, vec![77_777]);
    let empty = s.alloc_zeros::<f32>(0)?;
    k.argmax(&s, &empty, &mut idx)?;
    assert_eq!(idx.to_vec()?, vec![u32::MAX]);
    let short = s.alloc_zeros::<f32>(3)?;
    assert!(matches!(
        k.add(&s, &x, &short, &mut z),
        Err(Error::Usage { .. })
    ));
    Ok(())
}
