//! The interposer without a GPU: its table against the hook's, its wrappers' parameter structs
//! against CUPTI's, and the import slots of this test binary.

use super::*;
use crate::hook::check::capture::WATCHED;
use crate::hook::check::table::HOOKED;
use std::collections::HashMap;

#[test]
fn every_hooked_and_watched_call_has_a_wrapper_with_its_callback_id() {
    let entries = wrappers::ALL;
    let keyed = |name: &str| entries.iter().find(|e| e.name() == name).copied();
    for row in &HOOKED {
        let e = keyed(row.does.api).unwrap_or_else(|| panic!("no wrapper for {}", row.does.api));
        assert_eq!(
            (e.domain, e.cbid, e.frequent),
            (row.domain, row.cbid, false),
            "{}",
            row.does.api
        );
    }
    for w in &WATCHED {
        let e = keyed(w.site.api).unwrap_or_else(|| panic!("no wrapper for {}", w.site.api));
        assert_eq!(
            (e.domain, e.cbid, e.frequent),
            (w.domain, w.cbid, w.while_capturing()),
            "{}",
            w.site.api
        );
    }
    assert_eq!(entries.len(), HOOKED.len() + WATCHED.len());
}

#[test]
fn parameter_structs_have_cuptis_sizes() {
    use cudarc::cupti::sys as c;
    let sizes: HashMap<_, _> = wrappers::param_sizes().into_iter().collect();
    let cases = [
        (
            "cuStreamSynchronize",
            size_of::<c::cuStreamSynchronize_params>(),
        ),
        (
            "cuCtxSynchronize_v2",
            size_of::<c::cuCtxSynchronize_v2_params>(),
        ),
        (
            "cuMemcpyDtoHAsync_v2",
            size_of::<c::cuMemcpyDtoHAsync_v2_params>(),
        ),
        (
            "cuMemcpyHtoDAsync_v2",
            size_of::<c::cuMemcpyHtoDAsync_v2_params>(),
        ),
        ("cuMemcpyAsync", size_of::<c::cuMemcpyAsync_params>()),
        ("cuMemFree_v2", size_of::<c::cuMemFree_v2_params>()),
        ("cuMemHostAlloc", size_of::<c::cuMemHostAlloc_params>()),
        (
            "cuModuleLoadDataEx",
            size_of::<c::cuModuleLoadDataEx_params>(),
        ),
        (
            "cuLibraryLoadData",
            size_of::<c::cuLibraryLoadData_params>(),
        ),
        (
            "cuLibraryLoadFromFile",
            size_of::<c::cuLibraryLoadFromFile_params>(),
        ),
        (
            "cuDevicePrimaryCtxReset_v2",
            size_of::<c::cuDevicePrimaryCtxReset_v2_params>(),
        ),
        (
            "cuStreamBeginCapture_v2",
            size_of::<c::cuStreamBeginCapture_v2_params>(),
        ),
        (
            "cuStreamEndCapture",
            size_of::<c::cuStreamEndCapture_params>(),
        ),
        ("cuLaunchKernel", size_of::<c::cuLaunchKernel_params>()),
    ];
    for (name, cupti) in cases {
        assert_eq!(sizes[name], cupti, "{name}");
    }
}

#[test]
fn this_binary_imports_dlsym_and_dlopen_through_slots() {
    let own =
        elf::object_of(this_binary_imports_dlsym_and_dlopen_through_slots as *const () as usize)
            .expect("the test binary is a loaded object");
    // SAFETY: the test binary stays loaded.
    let slots = unsafe { elf::slots(&own) };
    let names: Vec<_> = slots.iter().map(|s| s.name.to_bytes().to_vec()).collect();
    assert!(names.iter().any(|n| n == b"dlsym"), "no dlsym slot");
    assert!(names.iter().any(|n| n == b"dlopen"), "no dlopen slot");
    // Each slot holds what the loader resolved: `dlsym`'s is the C library's function.
    let slot = slots
        .into_iter()
        .find(|s| s.name.to_bytes() == b"dlsym")
        .unwrap();
    assert!(protect::aligned(slot.at));
    // SAFETY: an aligned slot of a loaded object.
    let held = unsafe { protect::load(slot.at) };
    assert_eq!(held, libc::dlsym as *const () as usize);
}

#[test]
fn exempt_objects_are_the_driver_the_loader_and_the_c_library() {
    for name in [
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/lib64/ld-linux-x86-64.so.2",
        "linux-vdso.so.1",
        "/lib/libc.so.6",
    ] {
        assert!(elf::is_exempt(name), "{name}");
    }
    for name in [
        "",
        "/opt/app/libkernels.so",
        "/usr/lib/libcudart.so.13",
        "/usr/lib/libcublas.so.13",
    ] {
        assert!(!elf::is_exempt(name), "{name}");
    }
}

/// Stand-in targets for the variant tests: distinct addresses, never called.
static PROBE: wrappers::Targets = wrappers::Targets::new(wrappers::variants!(probe));

unsafe extern "C" fn probe<const K: usize>() -> i32 {
    K as i32
}

#[test]
fn each_target_gets_its_own_wrapper_until_the_variants_run_out() {
    let wrappers: Vec<_> = (1..=4)
        .map(|t| PROBE.wrapper_for(t * 16).unwrap())
        .collect();
    let mut distinct = wrappers.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "one wrapper a target");
    // The same target is answered with its wrapper again; a fifth one with none.
    assert_eq!(PROBE.wrapper_for(32), Some(wrappers[1]));
    assert_eq!(PROBE.wrapper_for(80), None);
    // A null address (a lookup's "not found") and a wrapper itself are never wrapped.
    assert_eq!(PROBE.wrapper_for(0), None);
    assert_eq!(PROBE.wrapper_for(wrappers[0]), None);
    assert_eq!(PROBE.wrapper_of(48), Some(wrappers[2]));
    assert_eq!(PROBE.wrapper_of(0), None);
    assert_eq!(PROBE.target_of_wrapper(wrappers[3]), Some(64));
    assert_eq!(PROBE.target_of_wrapper(64), None);
}
