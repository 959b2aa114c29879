//! The arguments each call is made with, and the waits the rules say it makes.

use super::{DEVICE, FUNS, Family, Fun, PINNED_BYTES, POOL, Ty};

/// The expected forbidden waits of `fun` called with `args`, by the rules as `docs/gpu.md` states
/// them, for the stand-in's pointer ranges (`pinned`: the page-locked buffer's start).
pub(crate) fn expected_waits(fun: &Fun, args: &[u64], pinned: u64) -> usize {
    let pinned_ptr = |p: u64| (pinned..pinned + PINNED_BYTES).contains(&p);
    let pageable = |p: u64| !pinned_ptr(p) && p < DEVICE;
    let staged_wait = |src: u64, bytes: u64| pageable(src) && bytes > 2 << 20;
    usize::from(match fun.family {
        Family::Waits => true,
        Family::May | Family::Watched => false,
        Family::ToHostAsync => pageable(args[0]),
        Family::FromHostAsync => staged_wait(args[1], args[2]),
        Family::Copy => args[0] < DEVICE || args[1] < DEVICE,
        Family::CopyAsync => pageable(args[0]) || staged_wait(args[1], args[2]),
        Family::Free => args[0] < POOL,
    })
}

/// Distinct arguments for the call at index `index` of [`FUNS`]: every value names the call and
/// the argument; host pointers are pageable (below [`DEVICE`]), device pointers above it (not
/// from a pool), sizes over 2 MiB, 32-bit values fit in 31 bits.
pub(crate) fn sentinels(index: usize) -> Vec<u64> {
    let fun = &FUNS[index];
    let tag = (index as u64) << 8;
    (fun.args.iter().enumerate())
        .map(|(i, t)| {
            let i = i as u64;
            match t {
                Ty::P => 0x5e00_0000_0000_0000 | tag << 16 | i << 4 | 0x8,
                Ty::D => 0xd5e0_0000_0000_0000 | tag << 16 | i << 4 | 0x8,
                Ty::Z => (3 << 20) + tag + i,
                Ty::U32 | Ty::I32 => 0x5e00_0000 | tag | i,
            }
        })
        .collect()
}

/// The argument cases of the call at `index`: its sentinels, then, for a call whose rule reads
/// its arguments, the variants on both sides of the rule (`pinned`: the page-locked buffer,
/// `pageable`: an address in a `Vec` of the test).
pub(crate) fn cases(index: usize, pinned: u64, pageable: u64) -> Vec<Vec<u64>> {
    let base = sentinels(index);
    let with = |changes: &[(usize, u64)]| {
        let mut v = base.clone();
        for &(i, x) in changes {
            v[i] = x;
        }
        v
    };
    let mut out = vec![base.clone()];
    let dev = 0xd000_0000_0000_1000;
    let pool = POOL + 0x1000;
    match FUNS[index].family {
        Family::ToHostAsync => out.extend([
            with(&[(0, pinned + 64)]),
            with(&[(0, pageable)]),
            with(&[(0, dev)]),
        ]),
        Family::FromHostAsync => out.extend([
            with(&[(1, pinned + 64)]),
            with(&[(1, pageable), (2, 64 << 10)]),
            with(&[(1, pageable), (2, 3 << 19)]),
            with(&[(1, pageable), (2, 4 << 20)]),
        ]),
        Family::Copy => out.extend([
            with(&[(0, pageable)]),
            with(&[(1, pinned + 64)]),
            with(&[(0, pinned + 64)]),
        ]),
        Family::CopyAsync => out.extend([
            with(&[(0, pageable)]),
            with(&[(0, pinned + 64)]),
            with(&[(1, pinned + 64)]),
            with(&[(1, pageable), (2, 4 << 20)]),
            with(&[(1, pageable), (2, 64 << 10)]),
        ]),
        Family::Free => out.push(with(&[(0, pool)])),
        _ => {}
    }
    out
}
