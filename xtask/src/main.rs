//! Developer tasks for this repository:
//!
//! `cargo run -p xtask -- modgraph [ROOT]` prints which top-level module of the lint uses
//! which, bottom layer first, and every use of a later stage or file-system call in the
//! core; then the runtime's rooms, and any use of a later layer or circle of files in
//! `runtime/src` (exit status 1 when there is one); its tests run in CI (see `modgraph.rs`,
//! `runtime_graph.rs`).
//!
//! `cargo run -p xtask --release -- sweep [--list FILE] [--scratch DIR] [--only NAME]...
//! [--timeout SECS] [--lint PATH]`
//!
//! builds the release `cargo-nosync-lint`, gets every input of the list (default
//! `xtask/sweep.txt`: real GPU workspaces by commit, published crates by version) into the
//! scratch directory (`--scratch`, else `$NOSYNC_SWEEP_DIR`, else `<tmp>/nosync-sweep`), runs the
//! lint over each with `--all-features -v` under a timeout (120 s), and prints a Markdown table:
//! one row per input with its figures, its findings by code, wall time, peak RSS and any panic,
//! timeout, tool error or `internal-error`/`missing-module`/`parse-error`. The exit status is 1
//! when any row has one of those. CI never runs it: it needs the network (or a filled scratch
//! directory) and minutes.
//!
//! `cargo run -p xtask --release -- edits --lint PATH --manifest-path DIR/Cargo.toml ..`
//! edits a copy of a real workspace at random, step after step, and checks after each that
//! the lint's output with its caches is the output of `--no-cache` (see `edits.rs`).

mod edits;
mod fetch;
mod list;
mod modgraph;
mod run;
mod runtime_graph;
mod table;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[derive(Debug)]
struct Args {
    list: PathBuf,
    scratch: PathBuf,
    only: Vec<String>,
    timeout: Duration,
    lint: Option<PathBuf>,
}

const USAGE: &str = "usage: cargo run -p xtask --release -- sweep [--list FILE] [--scratch DIR] \
                     [--only NAME]... [--timeout SECS] [--lint PATH]";

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let code = match argv.split_first() {
        Some((cmd, rest)) if cmd == "modgraph" => {
            let lint = modgraph::main(rest, &repo_root());
            println!();
            let runtime = runtime_graph::main(&runtime_graph::root_arg(rest, &repo_root()));
            lint.max(runtime)
        }
        Some((cmd, rest)) if cmd == "edits" => edits::main(rest),
        Some((cmd, rest)) if cmd == "sweep" => match parse_args(rest) {
            Ok(args) => sweep(&args),
            Err(e) => {
                eprintln!("error: {e}\n{USAGE}");
                2
            }
        },
        _ => {
            eprintln!("{USAGE}\n{}", edits::USAGE);
            2
        }
    };
    std::process::exit(code);
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn parse_args(rest: &[String]) -> Result<Args, String> {
    let mut args = Args {
        list: repo_root().join("xtask/sweep.txt"),
        scratch: std::env::var_os("NOSYNC_SWEEP_DIR")
            .map_or_else(|| std::env::temp_dir().join("nosync-sweep"), PathBuf::from),
        only: Vec::new(),
        timeout: Duration::from_secs(120),
        lint: None,
    };
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("`{flag}` needs a value"))
        };
        match flag.as_str() {
            "--list" => args.list = value()?.into(),
            "--scratch" => args.scratch = value()?.into(),
            "--only" => args.only.push(value()?),
            "--lint" => args.lint = Some(value()?.into()),
            "--timeout" => {
                let v = value()?;
                let secs = v.parse().map_err(|_| format!("bad --timeout `{v}`"))?;
                args.timeout = Duration::from_secs(secs);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if args.scratch.starts_with(repo_root()) {
        return Err("the scratch directory must be outside the repository".to_owned());
    }
    Ok(args)
}

fn sweep(args: &Args) -> i32 {
    let text = match std::fs::read_to_string(&args.list) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.list.display());
            return 2;
        }
    };
    let inputs = match list::parse(&text) {
        Ok(inputs) => inputs,
        Err(errors) => {
            for e in errors {
                eprintln!("error: {}: {e}", args.list.display());
            }
            return 2;
        }
    };
    let lint = match &args.lint {
        Some(p) => p.clone(),
        None => match build_lint() {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: building the lint: {e}");
                return 2;
            }
        },
    };
    let selected: Vec<&list::Input> = inputs
        .iter()
        .filter(|i| args.only.is_empty() || args.only.contains(&i.name))
        .collect();
    // The commit and date as the sweep starts (the tree may move while it runs).
    let header = header(&lint, args);
    let rows = table::run_all(&selected, &lint, args);
    print!("{}", table::render(&rows, &header));
    i32::from(rows.iter().any(table::Row::failed))
}

/// `cargo build --release -p cargo-nosync-lint`; the binary's path from cargo's messages.
fn build_lint() -> Result<PathBuf, String> {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(repo_root())
        .args(["build", "--release", "-p", "cargo-nosync-lint"])
        .args(["--bin", "cargo-nosync-lint", "--message-format", "json"])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| "cargo named no executable".to_owned())
}

fn header(lint: &Path, args: &Args) -> String {
    let git = |a: &[&str]| {
        Command::new("git")
            .current_dir(repo_root())
            .args(a)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!(
        "Sweep of {} on {date}, lint at commit {} ({}), timeout {} s each, scratch {}\n\n",
        args.list.display(),
        git(&["rev-parse", "--short=10", "HEAD"]),
        lint.display(),
        args.timeout.as_secs(),
        args.scratch.display()
    )
}
