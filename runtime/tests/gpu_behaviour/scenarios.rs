//! The scenarios of the table, by kind: copies, pinned and device memory, launches and
//! modules, and queries that must not wait.

use super::*;

pub(super) fn copies() -> Vec<Scenario> {
    vec![
        scenario!(Checked, "Stream::from_host pageable 64 KiB", |e| {
            let (s, h) = (e.s.clone(), f32s(64 << 10));
            e.busy()?;
            Ok(Box::new(move || Ok(keep(s.from_host(&h)?))))
        }),
        scenario!(Checked, "Stream::from_host pageable 1 MiB", |e| {
            let (s, h) = (e.s.clone(), f32s(MIB));
            e.busy()?;
            Ok(Box::new(move || Ok(keep(s.from_host(&h)?))))
        }),
        scenario!(Checked, "Stream::from_host pageable 2 MiB", |e| {
            let (s, h) = (e.s.clone(), f32s(2 * MIB));
            e.busy()?;
            Ok(Box::new(move || Ok(keep(s.from_host(&h)?))))
        }),
        scenario!(Checked, "Stream::from_host pageable 3 MiB", |e| {
            let (s, h) = (e.s.clone(), f32s(3 * MIB));
            e.busy()?;
            Ok(Box::new(move || Ok(keep(s.from_host(&h)?))))
        }),
        scenario!(Checked, "Stream::from_host pageable 4 MiB", |e| {
            let (s, h) = (e.s.clone(), f32s(4 * MIB));
            e.busy()?;
            Ok(Box::new(move || Ok(keep(s.from_host(&h)?))))
        }),
        scenario!(Checked, "Stream::from_host pageable 16 MiB", |e| {
            let (s, h) = (e.s.clone(), f32s(16 * MIB));
            e.busy()?;
            Ok(Box::new(move || Ok(keep(s.from_host(&h)?))))
        }),
        scenario!(Checked, "DeviceBuffer::upload pageable 1 MiB", |e| {
            let (mut b, h) = (e.s.alloc_zeros::<f32>(MIB / 4)?, f32s(MIB));
            e.busy()?;
            Ok(Box::new(move || Ok(keep((b.upload(&h)?, b)))))
        }),
        scenario!(Checked, "DeviceBuffer::upload pageable 4 MiB", |e| {
            let (mut b, h) = (e.s.alloc_zeros::<f32>(MIB)?, f32s(4 * MIB));
            e.busy()?;
            Ok(Box::new(move || Ok(keep((b.upload(&h)?, b)))))
        }),
        scenario!(
            Checked,
            "2 x DeviceBuffer::upload pageable 1 MiB in a row",
            |e| { uploads(e, 2, MIB) }
        ),
        scenario!(
            Checked,
            "3 x DeviceBuffer::upload pageable 1 MiB in a row",
            |e| { uploads(e, 3, MIB) }
        ),
        scenario!(
            Checked,
            "8 x DeviceBuffer::upload pageable 1 MiB in a row",
            |e| { uploads(e, 8, MIB) }
        ),
        scenario!(
            Checked,
            "40 x DeviceBuffer::upload pageable 64 KiB in a row",
            |e| { uploads(e, 40, 64 << 10) }
        ),
        scenario!(
            Checked,
            "40 x DeviceBuffer::upload pageable 128 KiB in a row",
            |e| { uploads(e, 40, 128 << 10) }
        ),
        scenario!(
            Checked,
            "2 x DeviceBuffer::upload pageable 128 KiB in a row",
            |e| { uploads(e, 2, 128 << 10) }
        ),
        scenario!(
            Checked,
            "3 x DeviceBuffer::upload pageable 128 KiB in a row",
            |e| { uploads(e, 3, 128 << 10) }
        ),
        scenario!(
            Checked,
            "DeviceBuffer::upload pageable 1 MiB then 512 KiB",
            |e| { uploads_of(e, &[MIB, MIB / 2]) }
        ),
        scenario!(Checked, "DeviceBuffer::upload pageable 1.5 MiB", |e| {
            uploads_of(e, &[3 * MIB / 2])
        }),
        scenario!(
            Checked,
            "DeviceBuffer::upload pageable 1.5 MiB then 128 KiB",
            |e| { uploads_of(e, &[3 * MIB / 2, 128 << 10]) }
        ),
        scenario!(
            Checked,
            "DeviceBuffer::upload pageable 2 MiB then 64 KiB",
            |e| { uploads_of(e, &[2 * MIB, 64 << 10]) }
        ),
        scenario!(Checked, "Stream::from_pinned 16 MiB", |e| {
            let (s, p) = (e.s.clone(), PinnedBuffer::<f32>::new(&e.gpu, 4 * MIB)?);
            e.busy()?;
            Ok(Box::new(move || Ok(keep((s.from_pinned(&p)?, p)))))
        }),
        scenario!(Checked, "DeviceBuffer::upload_pinned 16 MiB", |e| {
            let (mut b, p) = (
                e.s.alloc_zeros::<f32>(4 * MIB)?,
                PinnedBuffer::<f32>::new(&e.gpu, 4 * MIB)?,
            );
            e.busy()?;
            Ok(Box::new(move || Ok(keep((b.upload_pinned(&p)?, b, p)))))
        }),
        scenario!(Checked, "DeviceBuffer::to_host_async 16 MiB", |e| {
            let (b, mut p) = (
                e.s.alloc_zeros::<f32>(4 * MIB)?,
                PinnedBuffer::<f32>::new(&e.gpu, 4 * MIB)?,
            );
            e.busy()?;
            Ok(Box::new(move || Ok(keep((b.to_host_async(&mut p)?, b, p)))))
        }),
        scenario!(Checked, "DeviceBuffer::copy_from 16 MiB", |e| {
            let (a, mut b) = (
                e.s.alloc_zeros::<f32>(4 * MIB)?,
                e.s.alloc_zeros::<f32>(4 * MIB)?,
            );
            e.busy()?;
            Ok(Box::new(move || Ok(keep((b.copy_from(&a)?, a, b)))))
        }),
    ]
}

pub(super) fn pinned_and_memory() -> Vec<Scenario> {
    vec![
        scenario!(Checked, "PinnedBuffer::read (copy pending)", |e| {
            let p = pending_pinned(e, 1024)?;
            Ok(Box::new(move || Ok(keep(p.read()?.len()))))
        }),
        scenario!(
            Checked,
            "PinnedBuffer::try_read + is_ready (copy pending)",
            |e| {
                let p = pending_pinned(e, 1024)?;
                Ok(Box::new(move || {
                    let r = (p.try_read()?.is_none(), p.is_ready()?);
                    assert_eq!(r, (true, false), "a pending copy must read as not ready");
                    Ok(keep(p))
                }))
            }
        ),
        scenario!(Checked, "PinnedBuffer::write (copy pending)", |e| {
            let mut p = pending_pinned(e, 1024)?;
            Ok(Box::new(move || Ok(keep(p.write()?.len()))))
        }),
        scenario!(Checked, "PinnedBuffer::drop (copy pending)", |e| {
            let p = pending_pinned(e, 1024)?;
            Ok(Box::new(move || Ok(keep(drop(p)))))
        }),
        scenario!(Checked, "PinnedBuffer::drop (no copy; device busy)", |e| {
            let p = PinnedBuffer::<f32>::new(&e.gpu, 1024)?;
            e.busy()?;
            Ok(Box::new(move || Ok(keep(drop(p)))))
        }),
        scenario!(Checked, "Stream::alloc_zeros 16 MiB", |e| {
            let s = e.s.clone();
            e.busy()?;
            Ok(Box::new(move || Ok(keep(s.alloc_zeros::<f32>(4 * MIB)?))))
        }),
        scenario!(Checked, "DeviceBuffer::try_clone 16 MiB", |e| {
            let b = e.s.alloc_zeros::<f32>(4 * MIB)?;
            e.busy()?;
            Ok(Box::new(move || Ok(keep((b.try_clone()?, b)))))
        }),
        scenario!(Checked, "DeviceBuffer::drop 16 MiB", |e| {
            let b = e.s.alloc_zeros::<f32>(4 * MIB)?;
            e.busy()?;
            Ok(Box::new(move || Ok(keep(drop(b)))))
        }),
    ]
}

pub(super) fn launches_and_modules() -> Vec<Scenario> {
    vec![
        scenario!(
            Checked,
            "Kernels::fill+scale+axpy+add+mul+sum+dot+argmax",
            |e| {
                let (s, k) = (e.s.clone(), e.k.clone());
                let (mut x, mut y, mut z) = (
                    s.alloc_zeros(4096)?,
                    s.alloc_zeros(4096)?,
                    s.alloc_zeros(4096)?,
                );
                let (mut out, mut idx) = (s.alloc_zeros(1)?, s.alloc_zeros(1)?);
                e.busy()?;
                Ok(Box::new(move || {
                    k.fill(&s, &mut x, 1.0)?;
                    k.scale(&s, &mut x, 2.0)?;
                    k.axpy(&s, 0.5, &x, &mut y)?;
                    k.add(&s, &x, &y, &mut z)?;
                    k.mul(&s, &x, &y, &mut z)?;
                    k.sum(&s, &z, &mut out)?;
                    k.dot(&s, &x, &y, &mut out)?;
                    k.argmax(&s, &z, &mut idx)?;
                    Ok(keep((x, y, z, out, idx)))
                }))
            }
        ),
        scenario!(
            Checked,
            "Launch::launch (user kernel) + Module::kernel",
            |e| {
                let (s, m) = (e.s.clone(), Module::compile(&e.gpu, "user", USER_SRC)?);
                let mut x = s.alloc_zeros::<f32>(4096)?;
                e.busy()?;
                Ok(Box::new(move || {
                    let k = m.kernel("add_one")?;
                    let n = 4096u32;
                    // SAFETY: matches add_one(float*, unsigned); the kernel checks i < n.
                    unsafe {
                        s.launch(&k)
                            .arg(&mut x)
                            .arg(&n)
                            .launch(LaunchConfig::for_num_elems(n))?
                    };
                    Ok(keep((m, k, x)))
                }))
            }
        ),
        scenario!(
            Checked,
            "Stream::record_event + wait_event + Event::is_complete + Gpu::new_event",
            |e| {
                let (g, s) = (e.gpu.clone(), e.s.clone());
                let s2 = e.gpu.new_stream()?;
                e.busy()?;
                Ok(Box::new(move || {
                    let ev = g.new_event(false)?;
                    s.record_event(&ev)?;
                    s2.wait_event(&ev)?;
                    assert!(!ev.is_complete()?, "the spin is still running");
                    Ok(keep((ev, s2)))
                }))
            }
        ),
        scenario!(Checked, "Module::drop (last handle)", |e| {
            let m = Module::compile(&e.gpu, "user", USER_SRC)?;
            e.busy()?;
            Ok(Box::new(move || Ok(keep(drop(m)))))
        }),
        scenario!(Checked, "Kernel::drop (last handle)", |e| {
            let k = Module::compile(&e.gpu, "user", USER_SRC)?.kernel("add_one")?;
            e.busy()?;
            Ok(Box::new(move || Ok(keep(drop(k)))))
        }),
    ]
}

pub(super) fn info() -> Vec<Scenario> {
    vec![
        scenario!(Info, "Gpu::new (setup)", |e| {
            e.busy()?;
            Ok(Box::new(|| Ok(keep(Gpu::new(0)?))))
        }),
        scenario!(Info, "Gpu::kernels (first call: NVRTC + load)", |e| {
            let fresh = Gpu::new(0)?;
            e.busy()?;
            Ok(Box::new(move || Ok(keep((fresh.kernels()?, fresh)))))
        }),
        scenario!(Info, "Module::compile (NVRTC + load)", |e| {
            let g = e.gpu.clone();
            e.busy()?;
            Ok(Box::new(move || {
                Ok(keep(Module::compile(&g, "user", USER_SRC)?))
            }))
        }),
        scenario!(Info, "PinnedBuffer::new 16 MiB", |e| {
            let g = e.gpu.clone();
            e.busy()?;
            Ok(Box::new(move || {
                Ok(keep(PinnedBuffer::<f32>::new(&g, 4 * MIB)?))
            }))
        }),
        scenario!(
            Info,
            "drop a created stream while it is busy (cuStreamDestroy)",
            |e| {
                let s2 = e.gpu.new_stream()?;
                e.k.spin(&s2, SPIN)?;
                Ok(Box::new(move || Ok(keep(drop(s2)))))
            }
        ),
        scenario!(Info, "drop a pending event (cuEventDestroy)", |e| {
            let ev = e.gpu.new_event(false)?;
            e.busy()?;
            ev.record(&e.s)?;
            Ok(Box::new(move || Ok(keep(drop(ev)))))
        }),
        scenario!(
            Info,
            "1000 tiny launches behind the spin (launch queue)",
            |e| { launches(e, 1000) }
        ),
        scenario!(
            Info,
            "2000 tiny launches behind the spin (launch queue)",
            |e| { launches(e, 2000) }
        ),
        scenario!(
            Info,
            "4000 tiny launches behind the spin (launch queue)",
            |e| { launches(e, 4000) }
        ),
        scenario!(
            Info,
            "Module::compile, device idle (NVRTC + load alone)",
            |e| {
                let g = e.gpu.clone();
                Ok(Box::new(move || {
                    Ok(keep(Module::compile(&g, "user", USER_SRC)?))
                }))
            }
        ),
    ]
}
