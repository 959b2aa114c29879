//! The frames of a violation: the filters on made-up stacks, and real stacks walked.

use super::*;

/// A stack as `(function, "file:line")` rows, innermost first (`""`: no location).
fn stack_of(rows: &[(&str, &str)]) -> Vec<Frame> {
    let frame = |&(function, at): &(&str, &str)| {
        let (file, line) = match at.rsplit_once(':') {
            Some((file, line)) => (Some(file.to_owned()), line.parse().ok()),
            None => (None, None),
        };
        Frame {
            function: function.to_owned(),
            file,
            line,
        }
    };
    rows.iter().map(frame).collect()
}

fn shown(frames: &[Frame]) -> Vec<String> {
    frames.iter().map(ToString::to_string).collect()
}

/// Shaped like a violation's stack on the H200: nosync's callback, CUPTI and driver frames
/// without symbols, cudarc 0.18 under cubecl, then cubecl and the program.
const RECORDED: &[(&str, &str)] = &[
    (
        "backtrace::backtrace::trace",
        "/users/u/.cargo/registry/src/index/backtrace-0.3.76/src/backtrace/mod.rs:53",
    ),
    (
        "nosync::hook::frame::capture",
        "/src/nosync/runtime/src/hook/frame.rs:27",
    ),
    ("nosync::hook::callback::on_api", ""),
    ("<unknown>", ""),
    ("cuStreamSynchronize", ""),
    (
        "cudarc::driver::result::stream::synchronize",
        "/users/u/.cargo/registry/src/index/cudarc-0.18.2/src/driver/result.rs:412",
    ),
    (
        "<cudarc::driver::safe::core::CudaStream as core::fmt::Debug>::fmt",
        "",
    ),
    (
        "<cubecl_cuda::compute::server::CudaServer as cubecl_runtime::server::ComputeServer>::read",
        "/users/u/.cargo/registry/src/index/cubecl-cuda-0.9.0/src/compute/server.rs:201",
    ),
    ("probe::step::{{closure}}", "/src/probe/src/main.rs:40"),
    ("core::ops::function::FnOnce::call_once", ""),
    ("main", ""),
];

#[test]
fn keeps_the_frames_after_the_machinery_with_their_locations() {
    let frames = outside_machinery(stack_of(RECORDED), MAX_FRAMES);
    assert_eq!(
        shown(&frames),
        [
            "`<cubecl_cuda::compute::server::CudaServer as cubecl_runtime::server::ComputeServer>::read` \
             (/users/u/.cargo/registry/src/index/cubecl-cuda-0.9.0/src/compute/server.rs:201)",
            "`probe::step::{{closure}}` (/src/probe/src/main.rs:40)",
        ]
    );
}

/// The interposer's stack: nosync's check inlined into the wrapper, no driver frame above
/// the caller, and the C start-up code without symbols at the bottom.
#[test]
fn below_the_interposers_wrapper_come_the_callers_frames() {
    let stack = [
        (
            "nosync::hook::frame::capture",
            "/src/nosync/runtime/src/hook/frame.rs:27",
        ),
        (
            "nosync::hook::callback::check_call",
            "/src/nosync/runtime/src/hook/callback.rs:90",
        ),
        (
            "checked<..>",
            "/src/nosync/runtime/src/hook/interpose/mod.rs:320",
        ),
        (
            "nosync::hook::interpose::wrappers::cuStreamSynchronize::wrapper",
            "/src/nosync/runtime/src/hook/interpose/wrappers.rs:78",
        ),
        (
            "cudarc::driver::result::stream::synchronize",
            "/users/u/.cargo/registry/src/index/cudarc-0.19.10/src/driver/result.rs:430",
        ),
        ("probe::step", "/src/probe/src/main.rs:40"),
        ("main", "/src/probe/src/main.rs:90"),
        ("__libc_start_call_main", ""),
        ("<unknown>", ""),
    ];
    assert_eq!(
        shown(&outside_machinery(stack_of(&stack), MAX_FRAMES)),
        [
            "`probe::step` (/src/probe/src/main.rs:40)",
            "`main` (/src/probe/src/main.rs:90)"
        ]
    );
}

/// With line tables only the wrapper's frame is `wrapper`, told by its file.
#[test]
fn the_wrapper_is_told_by_its_file_with_line_tables_only() {
    let wrappers = format!("{OWN_SOURCES}hook/interpose/wrappers.rs:78");
    let mod_rs = format!("{OWN_SOURCES}hook/interpose/mod.rs:320");
    let stack = [
        ("check_call", "/x/callback.rs:90"),
        ("checked<..>", mod_rs.as_str()),
        ("wrapper", wrappers.as_str()),
        ("step", "/src/probe/src/main.rs:40"),
        ("<unknown>", ""),
    ];
    assert_eq!(
        shown(&outside_machinery(stack_of(&stack), MAX_FRAMES)),
        ["`step` (/src/probe/src/main.rs:40)"]
    );
}

#[test]
fn crates_are_read_through_impl_and_reference_prefixes() {
    assert_eq!(crate_of("<&mut cudarc::X as core::Y>::f"), Some("cudarc"));
    assert_eq!(crate_of("<dyn candle_core::B>::f"), Some("candle_core"));
    assert_eq!(crate_of("cuMemcpyDtoH_v2"), None);
    assert_eq!(crate_of("<unknown>"), None);
    let named = |function: &str| stack_of(&[(function, "")]).remove(0);
    assert!(is_machinery(&named(
        "nosync::gpu::choke::stream_synchronize"
    )));
    assert!(!is_machinery(&named(
        "candle_core::cuda_backend::to_cpu_storage"
    )));
}

/// `debug = "line-tables-only"`: inlined frames are named without their path.
const LINE_TABLES_ONLY: &[(&str, &str)] = &[
    (
        "trace",
        "/users/u/.cargo/registry/src/index/backtrace-0.3.76/src/backtrace/mod.rs:53",
    ),
    ("capture", "/src/nosync/runtime/src/hook/frame.rs:27"),
    ("<unknown>", ""),
    (
        "synchronize",
        "/users/u/.cargo/registry/src/index/cudarc-0.18.2/src/driver/result.rs:1274",
    ),
    (
        "wait_sync",
        "/users/u/.cargo/registry/src/index/cubecl-cuda-0.9.0/src/compute/sync/fence.rs:44",
    ),
    ("probe::step", "/src/probe/src/main.rs:70"),
];

#[test]
fn frames_without_paths_are_judged_by_their_file() {
    let frames = outside_machinery(stack_of(LINE_TABLES_ONLY), MAX_FRAMES);
    let names: Vec<&str> = frames.iter().map(|f| f.function.as_str()).collect();
    assert_eq!(names, ["wait_sync", "probe::step"]);
    assert_eq!(frames[0].line, Some(44));
}

/// A `#[no_sync]` fn's body closure, as the H200 showed it with line tables only and with
/// full names: shown as the fn, at the body's line.
#[test]
fn the_no_sync_body_closure_is_shown_as_its_fn() {
    let private = format!("{OWN_SOURCES}private.rs:51");
    let line_tables = [
        ("<unknown>", ""),
        (
            "synchronize",
            "/users/u/.cargo/registry/src/index/cudarc-0.19.10/src/driver/safe/core.rs:700",
        ),
        ("{closure#0}", "/src/app/tests/hook_gpu.rs:390"),
        (
            "call_once<core::result::Result<(), nosync::violation::SyncViolation>, hook_gpu::hidden_sync::{closure_env#0}>",
            &private,
        ),
        ("hidden_sync", "/src/app/tests/hook_gpu.rs:388"),
        ("{closure#0}", "/src/app/tests/hook_gpu.rs:400"),
    ];
    assert_eq!(
        shown(&outside_machinery(stack_of(&line_tables), MAX_FRAMES)),
        [
            "`hidden_sync` (/src/app/tests/hook_gpu.rs:390)",
            "`{closure#0}` (/src/app/tests/hook_gpu.rs:400)"
        ]
    );
    let full = [
        ("<unknown>", ""),
        (
            "hook_gpu::hidden_sync::{{closure}}",
            "/src/app/tests/hook_gpu.rs:390",
        ),
        (
            "nosync::private::call_once",
            "/src/nosync-0.1.0/src/private.rs:51",
        ),
        ("hook_gpu::hidden_sync", "/src/app/tests/hook_gpu.rs:388"),
        ("hook_gpu::caller", "/src/app/tests/hook_gpu.rs:400"),
    ];
    assert_eq!(
        shown(&outside_machinery(stack_of(&full), MAX_FRAMES)),
        [
            "`hook_gpu::hidden_sync` (/src/app/tests/hook_gpu.rs:390)",
            "`hook_gpu::caller` (/src/app/tests/hook_gpu.rs:400)"
        ]
    );
    // A closure that is no body (passed to a library) keeps its name.
    let plain = [
        ("<unknown>", ""),
        ("app::run::{{closure}}", "/src/app/src/main.rs:9"),
        ("lib::each", "/src/lib/src/lib.rs:3"),
    ];
    assert_eq!(
        outside_machinery(stack_of(&plain), MAX_FRAMES)[0].function,
        "app::run::{{closure}}"
    );
}

#[test]
fn at_most_max_frames_and_none_without_symbols() {
    let rows: Vec<(String, String)> = (0..20)
        .map(|i| (format!("app::f{i}"), format!("src/lib.rs:{i}")))
        .collect();
    let rows: Vec<(&str, &str)> = rows.iter().map(|(f, at)| (&**f, &**at)).collect();
    let frames = outside_machinery(stack_of(&rows), MAX_FRAMES);
    assert_eq!(frames.len(), MAX_FRAMES);
    assert_eq!(frames[7].line, Some(7));
    // A site of the wait report keeps more: all 20 here.
    assert_eq!(outside_machinery(stack_of(&rows), REPORT_FRAMES).len(), 20);
    let unknown = stack_of(&[("<unknown>", ""), ("<unknown>", "")]);
    assert!(outside_machinery(unknown, MAX_FRAMES).is_empty());
}

#[test]
fn files_under_the_working_directory_are_shown_from_it() {
    let cwd = Path::new("/src/app");
    let shown = |file: &str| relative_to(cwd, file.to_owned());
    assert_eq!(shown("/src/app/src/main.rs"), "./src/main.rs");
    assert_eq!(
        shown("/src/application/main.rs"),
        "/src/application/main.rs"
    );
    assert_eq!(shown("src/main.rs"), "src/main.rs");
}

/// The line of the call in `captured_here`.
const CAPTURED_LINE: u32 = line!() + 4;

#[inline(never)]
fn captured_here() -> Vec<Frame> {
    std::hint::black_box(stack())
}

/// A real stack, walked and resolved: this module's fn by its demangled path without hash,
/// with its file and the line of the call, below the walk's own frames.
#[test]
fn a_captured_stack_names_the_calling_fn_at_its_line() {
    let frames = captured_here();
    let here = "nosync::hook::check::frame::tests::captured_here";
    let at = frames.iter().position(|f| f.function == here);
    let Some(at) = at else {
        panic!("no frame `{here}` in {frames:#?}");
    };
    let frame = &frames[at];
    let file = frame.file.as_deref().unwrap_or_default();
    assert!(file.ends_with("src/hook/check/frame/tests.rs"), "{frame}");
    assert_eq!(frame.line, Some(CAPTURED_LINE), "{frame}");
    let mut walk = frames[..at].iter().filter_map(|f| crate_of(&f.function));
    assert!(walk.any(|k| k == "backtrace"), "{frames:#?}");
    let caller =
        "nosync::hook::check::frame::tests::a_captured_stack_names_the_calling_fn_at_its_line";
    assert!(
        frames[at..].iter().any(|f| f.function == caller),
        "{frames:#?}"
    );
}

unsafe extern "C" {
    /// libc's sort: C code without symbols of its own that calls back into Rust, as the
    /// driver calls the hook.
    fn qsort(
        base: *mut std::ffi::c_void,
        count: usize,
        size: usize,
        compare: extern "C" fn(*const std::ffi::c_void, *const std::ffi::c_void) -> i32,
    );
}

thread_local! {
    static SEEN: std::cell::Cell<Vec<Frame>> = const { std::cell::Cell::new(Vec::new()) };
}

extern "C" fn compare(_: *const std::ffi::c_void, _: *const std::ffi::c_void) -> i32 {
    SEEN.with(|seen| seen.set(stack()));
    0
}

#[inline(never)]
fn sorts_through_c() -> Vec<Frame> {
    let mut pair = [2_u32, 1];
    // SAFETY: `pair` holds two elements of four bytes; `compare` reads neither, returns an
    // `int` and cannot unwind (an `extern "C"` fn aborts instead).
    unsafe { qsort(pair.as_mut_ptr().cast(), 2, 4, compare) };
    SEEN.with(std::cell::Cell::take)
}

/// A real stack through C code, as a violation's runs through the driver: the walk crosses
/// the C frames (named without a Rust path; a file only where the C library's debug info
/// is installed) to the Rust code that called into C.
#[test]
fn the_walk_crosses_c_code_to_the_rust_caller() {
    let frames = sorts_through_c();
    let at = |name: &str| frames.iter().position(|f| f.function.ends_with(name));
    let (Some(walk), Some(caller)) = (at("tests::compare"), at("tests::sorts_through_c")) else {
        panic!("no callback or caller in {frames:#?}");
    };
    let c = frames.get(walk + 1..caller).unwrap_or_default();
    assert!(
        !c.is_empty() && c.iter().all(|f| crate_of(&f.function).is_none()),
        "{frames:#?}"
    );
}
