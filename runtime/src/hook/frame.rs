//! The code that made a blocking call: the innermost stack frames outside the driver, cudarc,
//! nosync and the standard library, captured only on a violation.
//!
//! The `backtrace` crate walks the stack and resolves each frame to its symbols (the unwinder
//! and symbolizer `std::backtrace` is built on, with frames as data): one [`Frame`] per symbol,
//! an inlined call before the frame it was inlined into, as `std::backtrace` prints them.
//! Binaries without symbols give no frames.

// With `--cfg nosync_off` the callback does nothing, and what it would use goes unused.
#![cfg_attr(nosync_off, allow(dead_code, unused_imports))]

use std::path::Path;

use crate::Frame;

/// The most frames a violation keeps.
pub const MAX_FRAMES: usize = 8;

/// Crates whose frames are the call's machinery, not the code that made it. cudarc appears once
/// whatever its version (cubecl 0.9 brings cudarc 0.18, nosync uses 0.19).
const SKIPPED: [&str; 8] = [
    "std",
    "core",
    "alloc",
    "nosync",
    "cudarc",
    "backtrace",
    "libloading",
    "__rust_begin_short_backtrace",
];

/// Captures this thread's stack and keeps the frames outside the call's machinery, their files
/// shown from the working directory (`./src/main.rs`) where they are under it.
pub(crate) fn capture() -> Vec<Frame> {
    let mut frames = outside_machinery(stack());
    if let Ok(cwd) = std::env::current_dir() {
        for frame in &mut frames {
            frame.file = frame.file.take().map(|file| relative_to(&cwd, file));
        }
    }
    frames
}

/// Every frame of this thread's stack, innermost first: one per symbol, `<unknown>` for a
/// frame without one.
fn stack() -> Vec<Frame> {
    let mut frames = Vec::new();
    backtrace::trace(|raw| {
        let before = frames.len();
        backtrace::resolve_frame(raw, |symbol| frames.push(frame_of(symbol)));
        if frames.len() == before {
            frames.push(Frame {
                function: UNKNOWN.to_owned(),
                file: None,
                line: None,
            });
        }
        true
    });
    frames
}

/// The name of a frame without a symbol, or of a symbol without a name (as `std` prints it).
const UNKNOWN: &str = "<unknown>";

/// A resolved symbol: its demangled name without the hash (`{:#}`), its file and line.
fn frame_of(symbol: &backtrace::Symbol) -> Frame {
    Frame {
        function: symbol
            .name()
            .map_or_else(|| UNKNOWN.to_owned(), |name| format!("{name:#}")),
        file: symbol.filename().map(|f| f.display().to_string()),
        line: symbol.lineno(),
    }
}

/// `file` from `cwd` as `./rest` where it is under it, else unchanged (`std`'s short form).
fn relative_to(cwd: &Path, file: String) -> String {
    match Path::new(&file).strip_prefix(cwd) {
        Ok(rest) => format!(".{}{}", std::path::MAIN_SEPARATOR, rest.display()),
        Err(_) => file,
    }
}

/// The first path segment of a demangled function: the crate, for `<a::T as b::Tr>::f` the
/// crate of `a::T`. `None` for symbols that are no Rust paths (C functions, `<unknown>`).
fn crate_of(function: &str) -> Option<&str> {
    let mut s = function.trim_start_matches(['<', '&', '*', '(', '[']);
    for prefix in ["mut ", "const ", "dyn "] {
        s = s.strip_prefix(prefix).unwrap_or(s);
    }
    let (first, _) = s.split_once("::")?;
    let first = first.trim();
    let rusty = !first.is_empty() && first.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    rusty.then_some(first)
}

/// Source paths of the skipped crates, for frames whose name is no path (binaries built with
/// `debug = "line-tables-only"` name inlined frames `wait_sync`, not `a::b::wait_sync`).
const SKIPPED_FILES: [&str; 4] = ["/rustc/", "/cudarc-", "/nosync-", "/backtrace-"];

/// nosync's own sources where this copy was built (a path dependency's frames carry it).
const OWN_SOURCES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/");

fn is_machinery(frame: &Frame) -> bool {
    match (crate_of(&frame.function), &frame.file) {
        (Some(krate), _) => SKIPPED.contains(&krate),
        (None, Some(file)) => {
            file.starts_with(OWN_SOURCES) || SKIPPED_FILES.iter().any(|p| file.contains(p))
        }
        (None, None) => true,
    }
}

/// The call that runs a `#[no_sync]` fn's body (`nosync::__private::call_once`): the frame
/// above it is the body's closure, the frame below it the fn.
fn is_body_call(frame: &Frame) -> bool {
    let f = frame.function.as_str();
    f.starts_with("nosync::private::call_once")
        || f.starts_with("nosync::__private::call_once")
        || (f.starts_with("call_once<") && is_machinery(frame))
}

fn is_closure(function: &str) -> bool {
    function.ends_with("{{closure}}") || (function.ends_with('}') && function.contains("{closure#"))
}

/// A frame of the driver or CUPTI: no Rust path and no source file.
fn is_foreign(frame: &Frame) -> bool {
    crate_of(&frame.function).is_none() && frame.file.is_none()
}

/// The interposer's wrapper of a driver call: the frames below it are the caller's. Named by
/// its path, or (line tables only: `wrapper`) by its file among nosync's sources.
fn is_wrapper(frame: &Frame) -> bool {
    const FILE: &str = concat!("hook", "/", "interpose", "/", "wrappers.rs");
    frame
        .function
        .starts_with("nosync::hook::interpose::wrappers::")
        || frame
            .file
            .as_deref()
            .is_some_and(|f| f.starts_with(OWN_SOURCES) && f.ends_with(FILE))
}

/// The first [`MAX_FRAMES`] of a stack's frames (innermost first) below the driver (the first
/// frame without a Rust path or file; the hook's own frames are above it) or below the
/// interposer's wrapper, that belong to none of the skipped crates.
///
/// A `#[no_sync]` fn's body runs in a closure (the attribute's expansion), whose frame is named
/// `f::{{closure}}` or, with line tables only, `{closure#0}`: it is shown as the fn itself, at the
/// closure's line (where the body made the call), and the fn's own frame (its first line) is
/// dropped.
fn outside_machinery(frames: Vec<Frame>) -> Vec<Frame> {
    let below_driver = match frames.iter().position(is_wrapper) {
        Some(wrapper) => wrapper + 1,
        None => frames.iter().position(is_foreign).unwrap_or(0),
    };
    let mut kept: Vec<Frame> = Vec::new();
    let mut frames = frames.into_iter().skip(below_driver).peekable();
    while let Some(frame) = frames.next() {
        if is_body_call(&frame) {
            let body = kept.last_mut().filter(|f| is_closure(&f.function));
            let fun = frames.peek().filter(|f| !is_machinery(f));
            if let (Some(body), Some(fun)) = (body, fun) {
                body.function.clone_from(&fun.function);
                frames.next();
            }
            continue;
        }
        if !is_machinery(&frame) {
            kept.push(frame);
        }
        if kept.len() == MAX_FRAMES {
            break;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
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
        let frames = outside_machinery(stack_of(RECORDED));
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
            shown(&outside_machinery(stack_of(&stack))),
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
            shown(&outside_machinery(stack_of(&stack))),
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
        let frames = outside_machinery(stack_of(LINE_TABLES_ONLY));
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
            shown(&outside_machinery(stack_of(&line_tables))),
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
            shown(&outside_machinery(stack_of(&full))),
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
            outside_machinery(stack_of(&plain))[0].function,
            "app::run::{{closure}}"
        );
    }

    #[test]
    fn at_most_max_frames_and_none_without_symbols() {
        let rows: Vec<(String, String)> = (0..20)
            .map(|i| (format!("app::f{i}"), format!("src/lib.rs:{i}")))
            .collect();
        let rows: Vec<(&str, &str)> = rows.iter().map(|(f, at)| (&**f, &**at)).collect();
        let frames = outside_machinery(stack_of(&rows));
        assert_eq!(frames.len(), MAX_FRAMES);
        assert_eq!(frames[7].line, Some(7));
        let unknown = stack_of(&[("<unknown>", ""), ("<unknown>", "")]);
        assert!(outside_machinery(unknown).is_empty());
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
        let here = "nosync::hook::frame::tests::captured_here";
        let at = frames.iter().position(|f| f.function == here);
        let Some(at) = at else {
            panic!("no frame `{here}` in {frames:#?}");
        };
        let frame = &frames[at];
        let file = frame.file.as_deref().unwrap_or_default();
        assert!(file.ends_with("src/hook/frame.rs"), "{frame}");
        assert_eq!(frame.line, Some(CAPTURED_LINE), "{frame}");
        let mut walk = frames[..at].iter().filter_map(|f| crate_of(&f.function));
        assert!(walk.any(|k| k == "backtrace"), "{frames:#?}");
        let caller =
            "nosync::hook::frame::tests::a_captured_stack_names_the_calling_fn_at_its_line";
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
        let (Some(walk), Some(caller)) = (at("tests::compare"), at("tests::sorts_through_c"))
        else {
            panic!("no callback or caller in {frames:#?}");
        };
        let c = frames.get(walk + 1..caller).unwrap_or_default();
        assert!(
            !c.is_empty() && c.iter().all(|f| crate_of(&f.function).is_none()),
            "{frames:#?}"
        );
    }
}
