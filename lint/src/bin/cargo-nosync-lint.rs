//! `cargo nosync-lint`: a thin binary over the `nosync_lint` library.

use clap::Parser;

/// Reports every call chain from a `#[no_sync]` function to an API that blocks the host.
#[derive(Debug, Parser)]
#[command(name = "cargo-nosync-lint", bin_name = "cargo nosync-lint", version = nosync_lint::VERSION)]
struct Cli {
    /// Path to Cargo.toml
    #[arg(long, value_name = "PATH")]
    manifest_path: Option<std::path::PathBuf>,
}

fn main() {
    // `cargo nosync-lint` runs us as `cargo-nosync-lint nosync-lint ...`.
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "nosync-lint") {
        args.remove(1);
    }
    let _cli = Cli::parse_from(args);
    eprintln!("error: the analysis engine is not built yet");
    std::process::exit(2);
}
