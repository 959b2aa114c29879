//! `cargo nosync-lint`: a thin binary over the `nosync_lint` library.

use std::io::IsTerminal;

fn main() {
    tune_allocator();
    let terminal = if std::io::stdout().is_terminal() {
        nosync_lint::Terminal::Yes
    } else {
        nosync_lint::Terminal::No
    };
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    std::process::exit(nosync_lint::run_then_exit(
        std::env::args_os(),
        &mut stdout,
        &mut stderr,
        terminal,
    ));
}

/// glibc's heaps grow by what a request needs plus `M_TOP_PAD` (128 KiB by default), one
/// `mprotect` or `brk` and a burst of page faults at a time, and an analysis allocates
/// its 100-200 MiB in small pieces on every thread: padding each growth to 64 MiB
/// makes that a few calls instead of hundreds (untouched pages cost no memory). Only the
/// process' own binary sets it; the library leaves the allocator alone.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    const M_TOP_PAD: std::ffi::c_int = -2;
    unsafe extern "C" {
        fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
    }
    // SAFETY: `mallopt` is glibc's own, takes two ints and only sets a parameter of the
    // allocator; it is called before any other thread exists.
    unsafe {
        mallopt(M_TOP_PAD, 64 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}
