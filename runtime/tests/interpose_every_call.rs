//! Every call the interposer hooks or watches, through every path a program reaches the driver
//! by, with exact arguments: the stand-in driver (`stand_in/`) records each call's arguments, and
//! a forbid scope in `Mode::Log` under `count_syncs` shows what the hook decided. For each of the
//! 43 calls of `stand_in::FUNS`, with distinct values for every argument and, where the rule reads
//! them, the variants on both sides of the rule (a copy into the page-locked buffer does not
//! wait, into a pageable `Vec` it does), the child calls it
//! 1. through the import slot of a library that links the driver, loaded before the install;
//! 2. through the same slot of a library loaded after it (`dlopen`);
//! 3. through `dlsym` on the driver (or the runtime), as cudarc's dynamic loading does;
//! 4. through `cuGetProcAddress_v2` at CUDA 13.0 and `cuGetProcAddress` at 11.8, with and without
//!    the per-thread flag, wherever the name it asks for is answered with this call,
//!
//! and checks that the stand-in saw exactly those arguments, once, and that the hook reported
//! exactly the waits the rule says, under the call's name. A wrapper with a parameter missing,
//! swapped or of the wrong width fails here.
#![cfg(target_os = "linux")]

mod stand_in;

use std::ffi::{CString, c_void};

use stand_in::cases::{cases, expected_waits};
use stand_in::{
    FUNS, Family, GetProcV1, GetProcV2, PER_THREAD, Recorder, get, open, proc_answer, proc_request,
    reported,
};

type CallFn = unsafe extern "C" fn(*const u64) -> i32;
type ViaFn = unsafe extern "C" fn(*mut c_void, *const u64) -> i32;

#[test]
fn every_hooked_call_through_every_path_with_exact_arguments() {
    stand_in::in_child("child_every_call");
}

/// How the child reaches a call.
#[derive(Debug, Clone, Copy)]
enum Path {
    /// The import slot of the callers library loaded before the install.
    Early,
    /// The import slot of the one loaded after it.
    Late,
    /// `dlsym` on the driver or the runtime.
    Dlsym,
    /// `cuGetProcAddress_v2` at 13000 (`true`: with the per-thread flag).
    ProcV2(bool),
    /// `cuGetProcAddress` at 11080.
    ProcV1(bool),
}

struct Child {
    rec: Recorder,
    early: libloading::Library,
    late: libloading::Library,
    driver: libloading::Library,
    runtime: libloading::Library,
    pinned: u64,
    pageable: u64,
}

impl Child {
    /// The function `path` gives for `index`, or `None` where the path does not lead to it
    /// (`cuGetProcAddress` knows no runtime call and answers the highest ABI of a name).
    fn function(&self, path: Path, index: usize) -> Option<Invoke> {
        let fun = &FUNS[index];
        let name = fun.name;
        match path {
            Path::Early | Path::Late => {
                let lib = if matches!(path, Path::Early) {
                    &self.early
                } else {
                    &self.late
                };
                Some(Invoke::Slot(get::<CallFn>(lib, &format!("call_{name}"))))
            }
            Path::Dlsym => {
                let lib = if fun.runtime {
                    &self.runtime
                } else {
                    &self.driver
                };
                Some(Invoke::Pointer(get::<*mut c_void>(lib, name)))
            }
            Path::ProcV2(pt) | Path::ProcV1(pt) => {
                if fun.runtime {
                    return None;
                }
                let v2 = matches!(path, Path::ProcV2(_));
                let version = if v2 { 13000 } else { 11080 };
                let (base, _, _) = proc_request(name);
                if proc_answer(&base, version, pt) != Some(name) {
                    return None;
                }
                Some(Invoke::Pointer(self.lookup(v2, &base, version, pt)))
            }
        }
    }

    /// `cuGetProcAddress(_v2)` for `base`, looked up with `dlsym` as cudarc does.
    fn lookup(&self, v2: bool, base: &str, version: i32, pt: bool) -> *mut c_void {
        let c = CString::new(base).unwrap();
        let flags = if pt { PER_THREAD } else { 0 };
        let mut pfn: *mut c_void = std::ptr::null_mut();
        let mut status = -1;
        // SAFETY: the stand-in's `cuGetProcAddress(_v2)` with their C signatures.
        let result = unsafe {
            if v2 {
                get::<GetProcV2>(&self.driver, "cuGetProcAddress_v2")(
                    c.as_ptr(),
                    &mut pfn,
                    version,
                    flags,
                    &mut status,
                )
            } else {
                status = 0;
                get::<GetProcV1>(&self.driver, "cuGetProcAddress")(
                    c.as_ptr(),
                    &mut pfn,
                    version,
                    flags,
                )
            }
        };
        assert_eq!((result, status), (0, 0), "cuGetProcAddress({base})");
        pfn
    }

    /// Calls `index` through `path` with each of its cases; what went wrong, if anything.
    fn check(&self, path: Path, index: usize, failures: &mut Vec<String>) -> usize {
        let Some(invoke) = self.function(path, index) else {
            return 0;
        };
        let fun = &FUNS[index];
        let via = get::<ViaFn>(&self.early, &format!("via_{}", fun.name));
        let begins_capture = fun.name.starts_with("cuStreamBeginCapture");
        let all = cases(index, self.pinned, self.pageable);
        for args in &all {
            // A capture that begins would change what the later calls mean: the stand-in
            // refuses it (the hook tracks a capture only when it began).
            let result = i32::from(begins_capture);
            self.rec.set_result(result);
            self.rec.reset();
            let mut got = -1;
            let sites = reported(|| {
                // SAFETY: the callers' functions take an array of the call's argument count;
                // the pointer is the call's function (`via_` casts it to the call's C type). No
                // argument is dereferenced by the stand-in.
                got = unsafe {
                    match invoke {
                        Invoke::Slot(call) => call(args.as_ptr()),
                        Invoke::Pointer(f) => via(f, args.as_ptr()),
                    }
                }
            });
            self.rec.set_result(0);
            let what = format!("{path:?} {}({args:x?})", fun.name);
            let (calls, seen) = self.rec.last(fun.name);
            let expected_calls = if fun.runtime { 2 } else { 1 };
            if got != result || calls != 1 || self.rec.total() != expected_calls {
                failures.push(format!(
                    "{what}: returned {got}, the stand-in saw {calls} calls of it and {} in all (latest {})",
                    self.rec.total(),
                    self.rec.latest()
                ));
                continue;
            }
            if seen[..args.len()] != args[..] {
                failures.push(format!(
                    "{what}: the stand-in saw {:x?}",
                    &seen[..args.len()]
                ));
            }
            let waits = expected_waits(fun, args, self.pinned);
            let expected: Vec<(String, usize)> = if waits > 0 {
                vec![(fun.name.to_owned(), waits)]
            } else {
                Vec::new()
            };
            if sites != expected {
                failures.push(format!("{what}: reported {sites:?}, expected {expected:?}"));
            }
        }
        all.len()
    }
}

impl Child {
    /// Calls `name` through `path` with `args`: its result, or `None` where the path does not
    /// lead to it.
    fn call(&self, path: Path, name: &str, args: &[u64]) -> Option<i32> {
        let index = FUNS.iter().position(|f| f.name == name).expect(name);
        let invoke = self.function(path, index)?;
        let via = get::<ViaFn>(&self.early, &format!("via_{name}"));
        // SAFETY: as in `check`: the call's function, its argument count, nothing dereferenced.
        Some(unsafe {
            match invoke {
                Invoke::Slot(call) => call(args.as_ptr()),
                Invoke::Pointer(f) => via(f, args.as_ptr()),
            }
        })
    }

    /// The watched calls' arguments as the capture rules read them: a capture begun through
    /// `path` on a stream (in each mode a `_v2` begin takes) makes a query of that stream, a
    /// launch on the legacy stream (not on the per-thread one) and, unless the mode is relaxed,
    /// an allocation break it; a launch on the captured stream does not; after the end, nothing.
    fn check_capture(&self, path: Path, failures: &mut Vec<String>) {
        for begin in [
            "cuStreamBeginCapture",
            "cuStreamBeginCapture_ptsz",
            "cuStreamBeginCapture_v2",
            "cuStreamBeginCapture_v2_ptsz",
        ] {
            let pt = begin.ends_with("_ptsz");
            let sfx = if pt { "_ptsz" } else { "" };
            let (end, query, launch) = (
                format!("cuStreamEndCapture{sfx}"),
                format!("cuStreamQuery{sfx}"),
                format!("cuLaunchKernel{sfx}"),
            );
            let modes: &[u64] = if begin.contains("_v2") { &[0, 2] } else { &[0] };
            for &mode in modes {
                let stream = 0x5e5e_0000_0000_0010 + mode;
                self.rec.set_result(0);
                let Some(begun) = self.call(path, begin, &[stream, mode]) else {
                    continue;
                };
                assert_eq!(begun, 0);
                let what = format!("{path:?} {begin}(stream, mode {mode})");
                let mut launch_args = [0u64; 11];
                let mut expect = |label: &str, name: &str, args: &[u64], breaks: bool| {
                    let sites = reported(|| {
                        self.call(path, name, args).expect(name);
                    });
                    let expected = if breaks {
                        vec![(name.to_owned(), 1)]
                    } else {
                        Vec::new()
                    };
                    if sites != expected {
                        failures.push(format!(
                            "{what}, then {label}: reported {sites:?}, expected {expected:?}"
                        ));
                    }
                };
                expect("a query of it", &query, &[stream], true);
                launch_args[8] = stream;
                expect("a launch on it", &launch, &launch_args, false);
                launch_args[8] = 0;
                expect("a launch on stream 0", &launch, &launch_args, !pt);
                let alloc = [0x5e5e_0000_0000_0100, 4096];
                expect("cuMemAlloc_v2", "cuMemAlloc_v2", &alloc, mode != 2);
                self.call(path, &end, &[stream, 0x5e5e_0000_0000_0200]);
                expect("its end and a query", &query, &[stream], false);
            }
        }
    }
}

/// A call's function: an import slot's caller, or a pointer called through `via_<name>`.
#[derive(Clone, Copy)]
enum Invoke {
    Slot(CallFn),
    Pointer(*mut c_void),
}

#[test]
#[ignore = "run in a child with the stand-in driver by `every_hooked_call_through_every_path_with_exact_arguments`"]
fn child_every_call() {
    let early = open("libcallers_early.so");
    let hook = nosync::hook::install().expect("install");
    assert_eq!(hook.backend(), nosync::hook::Backend::Interpose);
    let driver = open("libcuda.so.1");
    let init = get::<unsafe extern "C" fn(u32) -> i32>(&driver, "cuInit");
    // SAFETY: the stand-in's `cuInit`.
    assert_eq!(unsafe { init(0) }, 0);
    let late = open("libcallers_late.so");
    let runtime = open("libcudart.so.13");
    let rec = Recorder::new();
    let pageable = vec![0u8; 4096];
    let child = Child {
        pinned: rec.pinned(),
        pageable: pageable.as_ptr() as u64,
        rec,
        early,
        late,
        driver,
        runtime,
    };
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    let paths = [
        Path::Early,
        Path::Late,
        Path::Dlsym,
        Path::ProcV2(false),
        Path::ProcV2(true),
        Path::ProcV1(false),
        Path::ProcV1(true),
    ];
    for path in paths {
        let (mut funs, mut calls) = (0, 0);
        for index in 0..FUNS.len() {
            let n = child.check(path, index, &mut failures);
            funs += usize::from(n > 0);
            calls += n;
        }
        child.check_capture(path, &mut failures);
        summary.push(format!("{path:?}: {funs} functions, {calls} calls"));
    }
    println!("{}", summary.join("\n"));
    // Every call is reached by a path that names it, and `cuGetProcAddress` reaches every driver
    // call but the first ABI of `cuStreamBeginCapture`, which CUDA 10.1 replaced.
    let by_proc: Vec<&str> = (0..FUNS.len())
        .filter(|&i| {
            [13000, 11080].iter().any(|&v| {
                let (base, _, _) = proc_request(FUNS[i].name);
                [false, true]
                    .iter()
                    .any(|&pt| proc_answer(&base, v, pt) == Some(FUNS[i].name))
            })
        })
        .map(|i| FUNS[i].name)
        .collect();
    let missed: Vec<&str> = FUNS
        .iter()
        .filter(|f| !f.runtime && !by_proc.contains(&f.name))
        .map(|f| f.name)
        .collect();
    assert_eq!(
        missed,
        ["cuStreamBeginCapture", "cuStreamBeginCapture_ptsz"]
    );
    assert!(
        FUNS.iter().any(|f| f.family == Family::ToHostAsync),
        "the table has the rules that read arguments"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    drop(hook);
}

/// The table of `stand_in` names every call `wrappers.rs` interposes, with the same number of
/// parameters and the same widths: a call added to the interposer is added here too.
#[test]
fn the_table_matches_the_interposer_s_wrappers() {
    let text = include_str!("../src/hook/interpose/wrappers.rs");
    let block = text
        .split("interposed! {")
        .nth(1)
        .expect("the `interposed!` invocation");
    let block = &block[..block.rfind('}').unwrap()];
    let mut wrappers = Vec::new();
    for item in block.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, rest) = item.split_once('(').unwrap();
        let params = &rest[..rest.find(')').unwrap()];
        let types: Vec<String> = params
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once(':').unwrap().1.trim().to_owned())
            .collect();
        wrappers.push((name.trim().to_owned(), types));
    }
    let ours: Vec<(String, Vec<String>)> = FUNS
        .iter()
        .map(|f| {
            let types = f.args.iter().map(|t| rust_type(*t).to_owned()).collect();
            (f.name.to_owned(), types)
        })
        .collect();
    assert_eq!(wrappers, ours);
}

/// The wrappers' Rust type of a C parameter type.
fn rust_type(t: stand_in::Ty) -> &'static str {
    match t {
        stand_in::Ty::P => "P",
        stand_in::Ty::D => "D",
        stand_in::Ty::Z => "usize",
        stand_in::Ty::U32 => "u32",
        stand_in::Ty::I32 => "i32",
    }
}
