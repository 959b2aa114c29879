//! A hooked call's arguments, read from its parameter struct as the row's layout names them.

// With `--cfg nosync_off` no call is checked: nothing reads the arguments.
#![cfg_attr(nosync_off, allow(dead_code))]

use std::ffi::c_void;

use super::ffi::{CopyParams, FreeParams, FromHostParams, ToHostParams};
use super::table::{Args, Params};

/// Reads the arguments a rule needs.
///
/// # Safety
/// `params` is null or points at a struct that begins with the fields `layout` names.
pub(in crate::hook) unsafe fn read_args(layout: Params, params: *const c_void) -> Args {
    if params.is_null() {
        return Args::default();
    }
    // SAFETY: every struct read is a prefix of the call's parameter struct (CUPTI's
    // `generated_cuda_api_meta.h`); the async variants add `hStream` after these fields.
    unsafe {
        match layout {
            Params::None => Args::default(),
            Params::ToHost => {
                let p = &*params.cast::<ToHostParams>();
                Args {
                    dst: p.dstHost as u64,
                    src: p.srcDevice,
                    bytes: p.ByteCount,
                }
            }
            Params::FromHost => {
                let p = &*params.cast::<FromHostParams>();
                Args {
                    dst: p.dstDevice,
                    src: p.srcHost as u64,
                    bytes: p.ByteCount,
                }
            }
            Params::Copy => {
                let p = &*params.cast::<CopyParams>();
                Args {
                    dst: p.dst,
                    src: p.src,
                    bytes: p.ByteCount,
                }
            }
            Params::Free => {
                let p = &*params.cast::<FreeParams>();
                Args {
                    dst: p.dptr,
                    ..Args::default()
                }
            }
        }
    }
}
