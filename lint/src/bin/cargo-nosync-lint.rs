//! `cargo nosync-lint`: a thin binary over the `nosync_lint` library.

fn main() {
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    std::process::exit(nosync_lint::run(
        std::env::args_os(),
        &mut stdout,
        &mut stderr,
    ));
}
