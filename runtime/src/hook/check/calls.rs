//! What the callback does with one call, once it knows the call's row: the checks at a hooked
//! call's entry (capture safety, then the sync check), the wait timed to its exit, and the
//! capture calls watched. The callback (`callback.rs`) translates CUPTI's data and dispatches.

use std::borrow::Cow;
use std::cell::Cell;
use std::ffi::c_void;

use super::ffi::{CallbackData, LaunchParams};

use super::capture::{Break, CaptureMode, Captures, Class, Op, Watch, Watched};
use super::sink;
use super::table::{self, HOOKED, Hooked, Memory, Rule};
use super::waits::{self, Entered};
use super::{frame, stack};
use crate::SyncSite;
use crate::guard::state::{self, CAPTURE_SAFE, CAPTURING, FORBID, RECORD};

thread_local! {
    static CAPTURES: Cell<Captures> = const { Cell::new(Captures::new()) };
}

/// This thread's captures, for `f`.
fn with_captures<R>(f: impl FnOnce(&mut Captures) -> R) -> Option<R> {
    CAPTURES
        .try_with(|cell| {
            let mut captures = cell.take();
            let r = f(&mut captures);
            state::set_flag(CAPTURING, captures.capturing());
            cell.set(captures);
            r
        })
        .ok()
}

/// Reports what `op` breaks, if this thread captures or is in a `capture_safe` scope.
fn check_capture(flags: u32, op: Op, site: &'static SyncSite) -> bool {
    if flags & (CAPTURE_SAFE | CAPTURING) == 0 {
        return false;
    }
    let safe_scope = flags & CAPTURE_SAFE != 0;
    match with_captures(|c| c.check(safe_scope, op)).flatten() {
        Some(broken) => {
            crate::guard::check::from_hook_capture(site, broken.reason(), frame::capture);
            true
        }
        None => false,
    }
}

/// Writes the slot CUPTI keeps from this call's entry to its exit.
///
/// # Safety
/// `data.correlationData` is null or CUPTI's slot for this call.
unsafe fn set_slot(data: &CallbackData, value: u64) {
    if !data.correlationData.is_null() {
        // SAFETY: not null, so the call's `u64` slot, writable during the callback (this
        // fn's contract).
        unsafe { *data.correlationData = value };
    }
}

/// The entry of a hooked call: the capture rules (while they apply), then the sync check; a
/// call that declares a site is timed when a report wants it.
///
/// # Safety
/// `data` is the entry's data of `row`'s call (`check_call`'s contract): `functionParams` null or
/// that call's parameter struct, `correlationData` null or its slot.
pub(in crate::hook) unsafe fn enter_hooked(
    row: &'static Hooked,
    data: &CallbackData,
    mem: &dyn Memory,
    flags: u32,
) {
    // SAFETY: `functionParams` is null or `row`'s call's parameter struct, which begins with
    // the fields `row.params` names (each row of `HOOKED` pairs its calls with their layout).
    let args = unsafe { super::args::read_args(row.params, data.functionParams) };
    let verdict = row.rule.decide(args, mem);
    // SAFETY: `functionParams` is null or `row`'s call's parameter struct, as `stream_of` needs.
    let stream = unsafe { stream_of(row, data.functionParams) };
    let op = Op::Hooked {
        class: Class::of(row, verdict),
        stream,
    };
    if check_capture(flags, op, &row.capture) {
        // SAFETY: `correlationData` is null or this call's slot (this fn's contract).
        unsafe { set_slot(data, waits::BROKEN) };
        return;
    }
    let mut slot = 0;
    let declared = crate::guard::granularity::granularity()
        == crate::guard::granularity::Granularity::Declared;
    if let Some(site) = table::site_for(row, verdict, declared) {
        crate::guard::check::from_hook(site, frame::capture);
        // A device runner's own scope decides its waits; outside its scopes they count in the
        // scopes open elsewhere.
        if state::innermost().location.is_none()
            && crate::is_enabled()
            && super::demand::checking()
            && super::runner::is_runner()
        {
            super::runner::record(site, frame::capture());
        }
        if flags & RECORD != 0 || sink::on() {
            let entered = Entered {
                row: HOOKED
                    .iter()
                    .position(|r| std::ptr::eq(r, row))
                    .unwrap_or(0),
                may: std::ptr::eq(site, &row.may),
                forbidden: flags & FORBID != 0 && crate::is_enabled(),
                start_ns: sink::now_ns(),
            };
            slot = entered.pack();
        }
    }
    // SAFETY: `correlationData` is null or this call's slot (this fn's contract).
    unsafe { set_slot(data, slot) };
}

/// The exit of a hooked call: its return code (inside a scope), and its wait, if timed.
///
/// # Safety
/// `data` is the exit's data of `row`'s call (`check_call`'s contract): `correlationData` null or
/// its slot, `functionReturnValue` null or its result.
pub(in crate::hook) unsafe fn exit_hooked(row: &'static Hooked, data: &CallbackData, flags: u32) {
    let now = sink::now_ns();
    let slot = if data.correlationData.is_null() {
        0
    } else {
        // SAFETY: not null, so this call's `u64` slot (this fn's contract), readable during the
        // callback; it holds what the entry wrote (without an entry, the tag is missing).
        unsafe { *data.correlationData }
    };
    if slot != waits::BROKEN {
        // SAFETY: `functionReturnValue` is null or this call's result (this fn's contract).
        unsafe { check_return(data, flags, &row.capture) };
    }
    let Some(wait) = waits::finish(slot, now) else {
        return;
    };
    if flags & RECORD != 0 {
        crate::guard::report::record_wait(wait.site, wait.waited);
    }
    if sink::on() {
        sink::add_wait(&wait, stack::hash());
    }
}

/// A return of 900 or 901 inside any scope (or while capturing) is reported, even when the
/// library discards it.
///
/// # Safety
/// `data.functionReturnValue` is null or points at the call's result (at its exit).
unsafe fn check_return(data: &CallbackData, flags: u32, site: &'static SyncSite) {
    let scoped = flags & (FORBID | RECORD | CAPTURE_SAFE | CAPTURING) != 0
        || state::innermost().location.is_some();
    if !scoped || data.functionReturnValue.is_null() {
        return;
    }
    // SAFETY: not null, so the call's result at its exit (this fn's contract): a `CUresult` or
    // a `cudaError_t`, both C enums the size of a `u32`.
    let code = unsafe { *data.functionReturnValue.cast::<u32>() };
    if let Some(broken) = Break::of_return(code) {
        crate::guard::check::from_hook_capture(site, broken.reason(), frame::capture);
    }
}

/// The stream a hooked call takes, if it takes one: `cuStreamSynchronize`'s first parameter,
/// an async copy's fourth (after destination, source and size).
///
/// # Safety
/// `params` is null or points at the parameter struct of `row`'s call.
unsafe fn stream_of(row: &Hooked, params: *const c_void) -> Option<u64> {
    if params.is_null() {
        return None;
    }
    let index = match row.rule {
        Rule::Synchronize if row.does.api.starts_with("cuStream") => 0,
        Rule::ToHostAsync | Rule::FromHostAsync | Rule::CopyAsync => 3,
        _ => return None,
    };
    // SAFETY: not null, so `row`'s call's parameter struct (this fn's contract); the structs of
    // these rules have pointer-sized fields up to and including `hStream`, at `index`.
    let raw = unsafe { *params.cast::<u64>().add(index) };
    let ptsz = row.does.api.ends_with("_ptsz");
    Some(if ptsz && raw == 0 { 2 } else { raw })
}

/// A watched call: a capture's begin or end (at its exit), a query or launch (at its entry).
///
/// # Safety
/// `data` is the data of `w`'s call (`check_call`'s contract): `functionParams` null or that
/// call's parameter struct, `functionReturnValue` null or its result.
pub(in crate::hook) unsafe fn watched(
    w: &'static Watched,
    enter: bool,
    data: &CallbackData,
    flags: u32,
) {
    let params = data.functionParams;
    if params.is_null() {
        return;
    }
    // SAFETY: `params` is not null, so `w`'s call's parameter struct (this fn's contract):
    // `hStream` is the first field of begin's, end's and query's; a launch's is read through
    // `LaunchParams`, a prefix of `cuLaunchKernel_params`.
    let raw = unsafe {
        match w.watch {
            Watch::Launch => (*params.cast::<LaunchParams>()).hStream as u64,
            _ => *params.cast::<u64>(),
        }
    };
    let stream = w.stream(raw);
    if enter {
        let op = match w.watch {
            Watch::Query => Op::Query { stream },
            Watch::Launch => Op::Launch { stream },
            Watch::Begin { .. } | Watch::End => return,
        };
        check_capture(flags, op, &w.site);
        return;
    }
    // SAFETY: `functionReturnValue` is null or this call's result (this fn's contract).
    unsafe { check_return(data, flags, &w.site) };
    let code = if data.functionReturnValue.is_null() {
        0
    } else {
        // SAFETY: not null, so the call's `CUresult` at its exit (this fn's contract).
        unsafe { *data.functionReturnValue.cast::<u32>() }
    };
    match w.watch {
        Watch::Begin { with_mode } if code == 0 => {
            // SAFETY: `params` is `cuStreamBeginCapture_v2`'s struct (`with_mode`), laid out
            // `{ hStream, mode }`: `mode` is the `u32` after the 8-byte handle.
            let mode = with_mode.then(|| unsafe { *params.cast::<u32>().add(2) });
            let mode = mode.map_or(CaptureMode::Global, CaptureMode::from_raw);
            with_captures(|c| c.apply(Op::Begin { stream, mode }));
            super::demand::set_watched(true);
            if sink::tracing() {
                let name = format!("capture of stream {stream:#x}");
                sink::span(true, "capture", Cow::Owned(name));
            }
        }
        Watch::End => {
            let ended = with_captures(|c| c.apply(Op::End { stream }));
            if ended == Some(true) {
                super::demand::set_watched(false);
                if sink::tracing() {
                    sink::span(false, "capture", Cow::Borrowed(""));
                }
            }
        }
        _ => {}
    }
}
