//! The code that made a blocking call: the innermost stack frames outside the driver, cudarc,
//! nosync and the standard library, captured only on a violation.
//!
//! `std::backtrace::Backtrace` is the only stable way to walk the stack; its frames are not a
//! public API, so its `Display` form is parsed (`   3: path::to::fn` lines, each optionally
//! followed by `             at file:line:col`). Binaries without symbols give no frames.

// With `--cfg nosync_off` the callback does nothing, and what it would use goes unused.
#![cfg_attr(nosync_off, allow(dead_code, unused_imports))]

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

/// Captures this thread's stack and keeps the frames outside the call's machinery.
pub(crate) fn capture() -> Vec<Frame> {
    outside_machinery(&std::backtrace::Backtrace::force_capture().to_string())
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
const SKIPPED_FILES: [&str; 3] = ["/rustc/", "/cudarc-", "/nosync-"];

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

/// Every frame of a `std::backtrace::Backtrace` display.
fn parse(backtrace: &str) -> Vec<Frame> {
    let mut frames: Vec<Frame> = Vec::new();
    for line in backtrace.lines() {
        let trimmed = line.trim_start();
        if let Some(at) = trimmed.strip_prefix("at ") {
            if let Some(frame) = frames.last_mut().filter(|f| f.file.is_none()) {
                (frame.file, frame.line) = split_location(at);
            }
            continue;
        }
        let Some((index, function)) = trimmed.split_once(": ") else {
            continue;
        };
        if !index.is_empty() && index.chars().all(|c| c.is_ascii_digit()) {
            frames.push(Frame {
                function: function.trim().to_owned(),
                file: None,
                line: None,
            });
        }
    }
    frames
}

/// Parses a `std::backtrace::Backtrace` display and keeps the first [`MAX_FRAMES`] frames below
/// the driver (the first frame without a Rust path or file; the hook's own frames are above it)
/// that belong to none of the skipped crates.
///
/// A `#[no_sync]` fn's body runs in a closure (the attribute's expansion), whose frame is named
/// `f::{{closure}}` or, with line tables only, `{closure#0}`: it is shown as the fn itself, at the
/// closure's line (where the body made the call), and the fn's own frame (its first line) is
/// dropped.
pub fn outside_machinery(backtrace: &str) -> Vec<Frame> {
    let frames = parse(backtrace);
    let below_driver = frames.iter().position(is_foreign).unwrap_or(0);
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

/// `path/file.rs:12:5` → (`path/file.rs`, 12).
fn split_location(at: &str) -> (Option<String>, Option<u32>) {
    let mut parts = at.trim().rsplitn(3, ':');
    let (col, line, file) = (parts.next(), parts.next(), parts.next());
    match (file, line.and_then(|l| l.parse().ok()), col) {
        (Some(file), Some(line), Some(_)) => (Some(file.to_owned()), Some(line)),
        _ => (Some(at.trim().to_owned()), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shaped like a violation's backtrace on the H200: nosync's callback, CUPTI and driver
    /// frames without symbols, cudarc 0.18 under cubecl, then cubecl and the program.
    const RECORDED: &str = "   0: std::backtrace::Backtrace::force_capture
             at /rustc/abc/library/std/src/backtrace.rs:312:9
   1: nosync::hook::frame::capture
             at ./runtime/src/hook/frame.rs:27:5
   2: nosync::hook::callback::on_api
   3: <unknown>
   4: cuStreamSynchronize
   5: cudarc::driver::result::stream::synchronize
             at /users/u/.cargo/registry/src/index/cudarc-0.18.2/src/driver/result.rs:412:5
   6: <cudarc::driver::safe::core::CudaStream as core::fmt::Debug>::fmt
   7: <cubecl_cuda::compute::server::CudaServer as cubecl_runtime::server::ComputeServer>::read
             at /users/u/.cargo/registry/src/index/cubecl-cuda-0.9.0/src/compute/server.rs:201:17
   8: probe::step::{{closure}}
             at ./src/main.rs:40:9
   9: core::ops::function::FnOnce::call_once
  10: main
";

    #[test]
    fn keeps_the_frames_after_the_machinery_with_their_locations() {
        let frames = outside_machinery(RECORDED);
        let server = "cubecl-cuda-0.9.0/src/compute/server.rs";
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!(
            frames[0].function,
            "<cubecl_cuda::compute::server::CudaServer as cubecl_runtime::server::ComputeServer>::read"
        );
        assert!(frames[0].file.as_deref().unwrap().ends_with(server));
        assert_eq!(frames[0].line, Some(201));
        assert_eq!(frames[1].function, "probe::step::{{closure}}");
        assert_eq!(
            (frames[1].file.as_deref(), frames[1].line),
            (Some("./src/main.rs"), Some(40))
        );
        assert_eq!(
            frames[1].to_string(),
            "`probe::step::{{closure}}` (./src/main.rs:40)"
        );
    }

    #[test]
    fn crates_are_read_through_impl_and_reference_prefixes() {
        assert_eq!(crate_of("<&mut cudarc::X as core::Y>::f"), Some("cudarc"));
        assert_eq!(crate_of("<dyn candle_core::B>::f"), Some("candle_core"));
        assert_eq!(crate_of("cuMemcpyDtoH_v2"), None);
        assert_eq!(crate_of("<unknown>"), None);
        let named = |function: &str| Frame {
            function: function.to_owned(),
            file: None,
            line: None,
        };
        assert!(is_machinery(&named(
            "nosync::gpu::choke::stream_synchronize"
        )));
        assert!(!is_machinery(&named(
            "candle_core::cuda_backend::to_cpu_storage"
        )));
    }

    /// `debug = "line-tables-only"`: inlined frames are named without their path.
    const LINE_TABLES_ONLY: &str = "   0: force_capture
             at /rustc/abc/library/std/src/backtrace.rs:312:9
   1: capture
             at /src/nosync/runtime/src/hook/frame.rs:27:5
   2: <unknown>
   3: synchronize
             at /users/u/.cargo/registry/src/index/cudarc-0.18.2/src/driver/result.rs:1274:5
   4: wait_sync
             at /users/u/.cargo/registry/src/index/cubecl-cuda-0.9.0/src/compute/sync/fence.rs:44:13
   5: probe::step
             at ./src/main.rs:70:5
";

    #[test]
    fn frames_without_paths_are_judged_by_their_file() {
        let frames = outside_machinery(LINE_TABLES_ONLY);
        let names: Vec<&str> = frames.iter().map(|f| f.function.as_str()).collect();
        assert_eq!(names, ["wait_sync", "probe::step"]);
        assert_eq!(frames[0].line, Some(44));
    }

    /// A `#[no_sync]` fn's body closure, as the H200 printed it with line tables only and with
    /// full names: shown as the fn, at the body's line.
    #[test]
    fn the_no_sync_body_closure_is_shown_as_its_fn() {
        let own = |file: &str| format!("{OWN_SOURCES}{file}");
        let line_tables = format!(
            "   0: <unknown>
   1: synchronize
             at /users/u/.cargo/registry/src/index/cudarc-0.19.10/src/driver/safe/core.rs:700:9
   2: {{closure#0}}
             at /src/app/tests/hook_gpu.rs:390:5
   3: call_once<core::result::Result<(), nosync::violation::SyncViolation>, hook_gpu::hidden_sync::{{closure_env#0}}>
             at {}:51:5
   4: hidden_sync
             at /src/app/tests/hook_gpu.rs:388:1
   5: {{closure#0}}
             at /src/app/tests/hook_gpu.rs:400:48
",
            own("private.rs")
        );
        let frames = outside_machinery(&line_tables);
        let shown: Vec<String> = frames.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "`hidden_sync` (/src/app/tests/hook_gpu.rs:390)",
                "`{closure#0}` (/src/app/tests/hook_gpu.rs:400)"
            ]
        );
        let full = "   0: <unknown>
   1: hook_gpu::hidden_sync::{{closure}}
             at /src/app/tests/hook_gpu.rs:390:5
   2: nosync::private::call_once
             at /src/nosync-0.1.0/src/private.rs:51:5
   3: hook_gpu::hidden_sync
             at /src/app/tests/hook_gpu.rs:388:1
   4: hook_gpu::caller
             at /src/app/tests/hook_gpu.rs:400:5
";
        let frames = outside_machinery(full);
        let shown: Vec<String> = frames.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "`hook_gpu::hidden_sync` (/src/app/tests/hook_gpu.rs:390)",
                "`hook_gpu::caller` (/src/app/tests/hook_gpu.rs:400)"
            ]
        );
        // A closure that is no body (passed to a library) keeps its name.
        let plain = "   0: <unknown>
   1: app::run::{{closure}}
             at /src/app/src/main.rs:9:5
   2: lib::each
             at /src/lib/src/lib.rs:3:5
";
        assert_eq!(
            outside_machinery(plain)[0].function,
            "app::run::{{closure}}"
        );
    }

    #[test]
    fn at_most_max_frames_and_none_without_symbols() {
        let many: String = (0..20)
            .map(|i| format!("  {i}: app::f{i}\n             at src/lib.rs:{i}:1\n"))
            .collect();
        let frames = outside_machinery(&many);
        assert_eq!(frames.len(), MAX_FRAMES);
        assert_eq!(frames[7].line, Some(7));
        assert!(outside_machinery("   0: <unknown>\n   1: <unknown>\n").is_empty());
    }
}
