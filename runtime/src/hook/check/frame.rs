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

/// The most frames a violation keeps (and the summary prints).
pub const MAX_FRAMES: usize = 8;

/// The most frames a site of the wait report keeps: resolved once per site, deep enough to
/// reach the `#[no_sync]` fn below a library's layers, which the join needs.
pub(crate) const REPORT_FRAMES: usize = 24;

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
/// shown from the working directory (`./src/main.rs`) where they are under it; [`MAX_FRAMES`]
/// at most.
pub(crate) fn capture() -> Vec<Frame> {
    capture_up_to(MAX_FRAMES)
}

/// [`capture`], [`REPORT_FRAMES`] at most: a site of the wait report.
pub(crate) fn capture_for_report() -> Vec<Frame> {
    capture_up_to(REPORT_FRAMES)
}

fn capture_up_to(limit: usize) -> Vec<Frame> {
    let mut frames = outside_machinery(stack(), limit);
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

/// The first `limit` of a stack's frames (innermost first) below the driver (the first
/// frame without a Rust path or file; the hook's own frames are above it) or below the
/// interposer's wrapper, that belong to none of the skipped crates.
///
/// A `#[no_sync]` fn's body runs in a closure (the attribute's expansion), whose frame is named
/// `f::{{closure}}` or, with line tables only, `{closure#0}`: it is shown as the fn itself, at the
/// closure's line (where the body made the call), and the fn's own frame (its first line) is
/// dropped.
fn outside_machinery(frames: Vec<Frame>, limit: usize) -> Vec<Frame> {
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
        if kept.len() == limit {
            break;
        }
    }
    kept
}

#[cfg(test)]
mod tests;
