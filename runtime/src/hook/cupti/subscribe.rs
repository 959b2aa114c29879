//! CUPTI's side of the hook: subscribe, enable the hooked callbacks, unsubscribe.

use super::load::{self, CuptiLib};
use crate::hook::check::ffi::{self, CUPTI_MULTIPLE_SUBSCRIBERS, CuptiResult, Driver};
use crate::hook::check::table::{Domain, HOOKED};
use crate::hook::common::{HookError, Subscription};

fn cupti_error(driver: &Driver, cupti: &CuptiLib, call: &'static str, r: CuptiResult) -> HookError {
    if r == CUPTI_MULTIPLE_SUBSCRIBERS {
        return HookError::OtherSubscriber;
    }
    HookError::Cupti {
        call,
        code: cupti.cupti.describe(r),
        library: cupti.from.clone(),
        version: driver.version(),
    }
}

/// Starts the driver (`cuInit`): a driver without a usable device is an error here.
pub(in crate::hook) fn start_driver(driver: &Driver) -> Result<(), HookError> {
    // SAFETY: a loaded driver's `cuInit`.
    let r = unsafe { (driver.init)(0) };
    if r != 0 {
        return Err(HookError::Driver {
            call: "cuInit",
            code: driver.describe(r),
            version: driver.version(),
        });
    }
    Ok(())
}

/// Starts the driver, subscribes, enables every row CUPTI knows.
pub(in crate::hook) fn start(
    driver: &Driver,
    cupti: &'static CuptiLib,
) -> Result<Subscription, HookError> {
    start_driver(driver)?;
    let mut handle: ffi::Subscriber = std::ptr::null_mut();
    // SAFETY: `on_api` has CUPTI's callback signature and lives for the whole program.
    let r = unsafe {
        (cupti.cupti.subscribe)(
            &mut handle,
            crate::hook::check::callback::on_api,
            std::ptr::null_mut(),
        )
    };
    if r != 0 {
        return Err(cupti_error(driver, cupti, "cuptiSubscribe", r));
    }
    let enabled: Vec<_> = HOOKED
        .iter()
        .filter(|row| enable(cupti, handle, row.domain, row.cbid, true))
        .collect();
    for w in crate::hook::check::capture::WATCHED
        .iter()
        .filter(|w| !w.while_capturing())
    {
        enable(cupti, handle, w.domain, w.cbid, true);
    }
    if enabled.is_empty() {
        stop(handle);
        return Err(HookError::Cupti {
            call: "cuptiEnableCallback",
            code: String::from("every hooked callback id was refused: this CUPTI knows none"),
            library: cupti.from.clone(),
            version: driver.version(),
        });
    }
    Ok(Subscription {
        handle: Some(handle),
        hooks: 1,
        enabled,
        watching: 0,
    })
}

/// Turns the callbacks of the watched queries and launches on or off.
#[cfg_attr(nosync_off, allow(dead_code))]
pub(in crate::hook) fn set_watched(cupti: &CuptiLib, handle: ffi::Subscriber, on: bool) {
    for w in crate::hook::check::capture::WATCHED
        .iter()
        .filter(|w| w.while_capturing())
    {
        enable(cupti, handle, w.domain, w.cbid, on);
    }
}

/// Enables or disables one callback; whether CUPTI accepted.
pub(in crate::hook) fn enable(
    cupti: &CuptiLib,
    handle: ffi::Subscriber,
    domain: Domain,
    cbid: u32,
    on: bool,
) -> bool {
    let domain = match domain {
        Domain::Driver => ffi::DOMAIN_DRIVER,
        Domain::Runtime => ffi::DOMAIN_RUNTIME,
    };
    // SAFETY: `handle` is a live subscriber; an unknown id is refused with an error.
    unsafe { (cupti.cupti.enable_callback)(u32::from(on), handle, domain, cbid) == 0 }
}

pub(in crate::hook) fn stop(handle: ffi::Subscriber) {
    if let Some(cupti) = load::cupti() {
        // SAFETY: `handle` is the live subscriber, unsubscribed once.
        let _ = unsafe { (cupti.cupti.unsubscribe)(handle) };
    }
}
