//! `cargo nosync-lint`: a thin binary over the `nosync_lint` library.

use std::io::IsTerminal;

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
