//! How the interposer can crash a process or cut out another tool, one child test each on the
//! stand-in driver (`stand_in/`): `cuGetProcAddress` answering "not found" and asked for itself,
//! a preloaded shim that must keep its calls, an absolute relocation, a failed install, an
//! unaligned slot. Page protections are `interpose_pages.rs`, libraries loaded after the install
//! `interpose_late_loads.rs`, the non-PIE program `interpose_non_pie.rs`.
#![cfg(target_os = "linux")]

mod stand_in;

use std::ffi::{CString, c_void};

use stand_in::libs::{Fn0, defect, install, sync_seen};
use stand_in::{GetProcV1, GetProcV2, Recorder, elf, get, open, stand_in, stream_fn};

// --- 1. cuGetProcAddress: not found, and asked for itself ---

#[test]
fn get_proc_address_passes_not_found_through_and_maps_itself() {
    defect("child_get_proc_address", &[]);
}

#[test]
#[ignore = "run in a child by `get_proc_address_passes_not_found_through_and_maps_itself`"]
fn child_get_proc_address() {
    let (_hook, driver) = install();
    let rec = Recorder::new();
    let v2 = get::<GetProcV2>(&driver, "cuGetProcAddress_v2");
    let v1 = get::<GetProcV1>(&driver, "cuGetProcAddress");
    let missing = c"cuNoSuchThing";
    for version in [11030, 12000, 13000] {
        let mut pfn: *mut c_void = std::ptr::null_mut();
        let mut status = -1;
        // SAFETY: the stand-in's `cuGetProcAddress_v2`, with its C signature.
        let r = unsafe { v2(missing.as_ptr(), &mut pfn, version, 0, &mut status) };
        assert_eq!(
            (r, pfn, status),
            (0, std::ptr::null_mut(), 1),
            "cuGetProcAddress_v2(cuNoSuchThing) at {version}: success, no function, not found"
        );
    }
    let mut pfn: *mut c_void = std::ptr::null_mut();
    // SAFETY: as above, CUDA 11.3's signature.
    let r = unsafe { v1(missing.as_ptr(), &mut pfn, 11030, 0) };
    assert_eq!((r, pfn), (0, std::ptr::null_mut()), "cuGetProcAddress");
    // Asked for itself: the getter it returns answers with functions the hook sees.
    for (getter, version, v2_answer) in [
        ("cuGetProcAddress_v2", 13000, true),
        ("cuGetProcAddress_v2", 11080, false),
        ("cuGetProcAddress", 12000, true),
        ("cuGetProcAddress", 11080, false),
    ] {
        let asker = if getter == "cuGetProcAddress_v2" {
            lookup_v2(v2, "cuGetProcAddress", version)
        } else {
            lookup_v1(v1, "cuGetProcAddress", version)
        };
        let what = format!("{getter}(\"cuGetProcAddress\", {version})");
        let sync = if v2_answer {
            // SAFETY: at 12000 and later the driver answers with `cuGetProcAddress_v2`.
            let again: GetProcV2 = unsafe { std::mem::transmute(asker) };
            let missing = lookup_v2(again, "cuNoSuchThing", 13000);
            assert!(missing.is_null(), "{what}, then cuNoSuchThing: {missing:?}");
            lookup_v2(again, "cuStreamSynchronize", 13000)
        } else {
            // SAFETY: before 12000, with `cuGetProcAddress`.
            let again: GetProcV1 = unsafe { std::mem::transmute(asker) };
            lookup_v1(again, "cuStreamSynchronize", 11080)
        };
        // SAFETY: `cuStreamSynchronize`, which accepts a null stream.
        let sync = unsafe { stream_fn(sync) };
        // SAFETY: as above.
        let seen = sync_seen(&rec, || unsafe { sync(std::ptr::null_mut()) });
        assert_eq!(
            seen,
            (1, 1),
            "{what}, then cuStreamSynchronize: (reported, called)"
        );
    }
}

fn lookup_v2(f: GetProcV2, name: &str, version: i32) -> *mut c_void {
    let c = CString::new(name).unwrap();
    let (mut pfn, mut status) = (std::ptr::null_mut(), -1);
    // SAFETY: `cuGetProcAddress_v2`'s C signature.
    let r = unsafe { f(c.as_ptr(), &mut pfn, version, 0, &mut status) };
    assert_eq!(r, 0, "cuGetProcAddress_v2({name})");
    pfn
}

fn lookup_v1(f: GetProcV1, name: &str, version: i32) -> *mut c_void {
    let c = CString::new(name).unwrap();
    let mut pfn = std::ptr::null_mut();
    // SAFETY: `cuGetProcAddress`'s C signature.
    let r = unsafe { f(c.as_ptr(), &mut pfn, version, 0) };
    assert_eq!(r, 0, "cuGetProcAddress({name})");
    pfn
}

// --- 3. a preloaded shim keeps its calls ---

#[test]
fn a_preloaded_shim_keeps_seeing_its_calls() {
    defect("child_preloaded_shim", &[("LD_PRELOAD", "$DIR/libshim.so")]);
}

#[test]
#[ignore = "run in a child with LD_PRELOAD by `a_preloaded_shim_keeps_seeing_its_calls`"]
fn child_preloaded_shim() {
    let early = open("libapp.so");
    // SAFETY: the preloaded shim's counter, found in the global scope.
    let shim_calls = unsafe {
        let f = libc::dlsym(libc::RTLD_DEFAULT, c"shim_calls".as_ptr());
        assert!(!f.is_null(), "the shim is preloaded");
        std::mem::transmute::<*mut c_void, Fn0>(f)
    };
    let app = get::<Fn0>(&early, "app_sync");
    // SAFETY: the shim's and the library's functions, C signatures.
    unsafe {
        assert_eq!((app(), shim_calls()), (0, 1), "before the install");
    }
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    let late = open("libapp9.so");
    // SAFETY: the global scope's definition: the shim's.
    let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"cuStreamSynchronize".as_ptr()) };
    let late_app = get::<Fn0>(&late, "app_sync");
    // SAFETY: what the global scope binds `cuStreamSynchronize` to.
    let global = unsafe { stream_fn(global) };
    for (what, path) in [
        "the import slot of a library loaded before the install",
        "the import slot of a library loaded after it",
        "dlsym(RTLD_DEFAULT)",
    ]
    .into_iter()
    .enumerate()
    .map(|(i, w)| (w, i))
    {
        // SAFETY: the libraries' functions and the shim's, C signatures; a null stream.
        let call = || unsafe {
            match path {
                0 => app(),
                1 => late_app(),
                _ => global(std::ptr::null_mut()),
            }
        };
        // SAFETY: the shim's counter.
        let before = unsafe { shim_calls() };
        let seen = sync_seen(&rec, call);
        // SAFETY: as above.
        let shim = unsafe { shim_calls() } - before;
        assert_eq!(
            (seen.0, shim, seen.1),
            (1, 1, 1),
            "{what}: (reported by the hook, seen by the shim, reached the driver)"
        );
    }
}

// --- 5. an absolute relocation ---

#[test]
fn an_absolute_relocation_is_rewritten() {
    defect("child_absolute_relocation", &[]);
}

#[test]
#[ignore = "run in a child by `an_absolute_relocation_is_rewritten`"]
fn child_absolute_relocation() {
    let lib = open("libabs.so");
    let absolute = elf::slots(|n| n.ends_with("/libabs.so"))
        .into_iter()
        .filter(|s| s.symbol == "cuStreamSynchronize" && s.kind == elf::ABSOLUTE)
        .count();
    assert_eq!(absolute, 2, "the two data words are absolute relocations");
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    for name in ["abs_call", "abs_call_ro"] {
        let f = get::<Fn0>(&lib, name);
        // SAFETY: the library's function, C signature.
        assert_eq!(sync_seen(&rec, || unsafe { f() }), (1, 1), "{name}");
    }
}

// --- 6. a failed install leaves nothing behind ---

#[test]
fn a_failed_install_leaves_nothing_behind() {
    defect("child_failed_install", &[("STAND_IN_INIT_RESULT", "100")]);
}

/// The values of every slot of the stand-in's libraries and of this test's program.
fn slot_values() -> Vec<(elf::Slot, usize)> {
    let dir = stand_in().display().to_string();
    elf::slots(|n| n.is_empty() || n.starts_with(&dir))
        .into_iter()
        .map(|s| {
            let v = elf::value(&s);
            (s, v)
        })
        .collect()
}

#[test]
#[ignore = "run in a child whose stand-in cuInit fails by `a_failed_install_leaves_nothing_behind`"]
fn child_failed_install() {
    let early = open("libapp.so");
    let before = slot_values();
    assert!(
        before
            .iter()
            .any(|(s, _)| s.symbol == "cuStreamSynchronize"),
        "the library's slot is found"
    );
    match nosync::hook::install() {
        Err(nosync::hook::HookError::Driver { call, .. }) => assert_eq!(call, "cuInit"),
        other => panic!("expected the driver's error from cuInit, got {other:?}"),
    }
    assert!(!nosync::hook::is_installed());
    let after = slot_values();
    let changed: Vec<String> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b != a)
        .map(|((s, b), (_, a))| {
            format!(
                "{} {} at {:#x}: {b:#x} -> {a:#x}",
                s.object, s.symbol, s.addr
            )
        })
        .collect();
    assert_eq!(before.len(), after.len());
    assert!(
        changed.is_empty(),
        "slots rewritten by a failed install:\n{}",
        changed.join("\n")
    );
    let rec = Recorder::new();
    let app = get::<Fn0>(&early, "app_sync");
    // SAFETY: the library's function, C signature.
    let seen = sync_seen(&rec, || unsafe { app() });
    assert_eq!(seen, (0, 1), "no hook: nothing reported, the call made");
}

// --- an unaligned slot ---

#[test]
fn an_unaligned_slot_is_left_alone() {
    defect("child_unaligned_slot", &[]);
}

#[test]
#[ignore = "run in a child by `an_unaligned_slot_is_left_alone`"]
fn child_unaligned_slot() {
    let lib = open("libunaligned.so");
    let odd = elf::slots(|n| n.ends_with("/libunaligned.so"))
        .into_iter()
        .filter(|s| s.symbol == "cuStreamSynchronize" && s.addr % 8 != 0)
        .count();
    assert_eq!(odd, 1, "the library has an unaligned slot");
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    rec.reset();
    let f = get::<Fn0>(&lib, "unaligned_call");
    // SAFETY: the library's function, C signature.
    assert_eq!(unsafe { f() }, 0);
    assert_eq!(
        rec.calls("cuStreamSynchronize"),
        1,
        "the call reached the driver"
    );
}
