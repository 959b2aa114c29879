//! `cargo nosync-lint`: a thin binary over the `nosync_lint` library.

use std::io::IsTerminal;

/// The analysis allocates its 100-200 MiB in small pieces (syn's and proc-macro2's tokens,
/// the lowered items) on every thread, and with glibc's malloc a third of a cold run's CPU
/// was malloc and free; mimalloc (built without transparent huge pages, which cost peak
/// memory here) takes a fifth off a cold analysis of candle (docs/performance.md). Only the process' own binary picks the allocator; the library leaves it to its user.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
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
