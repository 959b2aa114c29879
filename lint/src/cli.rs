//! The command line: parse arguments, run the analysis, render, choose the exit code.
//! The binary is `std::process::exit(cli::run(std::env::args_os(), ..))`.

use crate::cli_output::{ColorChoice, OutputFormat};
use crate::engine::{self, Analysis, Options};
use crate::render;
use crate::report::{self, Report};
use crate::workspace::WorkspaceOptions;
use clap::Parser;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

/// Reports every call chain from a `#[no_sync]` function to an API that blocks the host.
#[derive(Debug, Parser)]
#[command(name = "cargo-nosync-lint", bin_name = "cargo nosync-lint", version = crate::VERSION)]
pub struct Cli {
    /// Path to Cargo.toml
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// Check only these workspace members' roots (all members by default)
    #[arg(short = 'p', long = "package", value_name = "SPEC")]
    pub packages: Vec<String>,
    /// Check all workspace members (the default)
    #[arg(long)]
    pub workspace: bool,
    /// Exclude members from the check
    #[arg(long, value_name = "SPEC")]
    pub exclude: Vec<String>,
    /// Space or comma separated list of features to activate
    #[arg(short = 'F', long, value_name = "FEATURES")]
    pub features: Vec<String>,
    /// Activate all available features
    #[arg(long)]
    pub all_features: bool,
    /// Do not activate the `default` feature
    #[arg(long)]
    pub no_default_features: bool,
    /// Extra configuration file (TOML with `roots`, `sinks`, `allow`)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Analyse workspace members only, not their dependencies
    #[arg(long)]
    pub no_deps: bool,
    /// Neither read nor write the cache in the target dir (`cargo metadata` runs)
    #[arg(long)]
    pub no_cache: bool,
    /// No summary line
    #[arg(short, long)]
    pub quiet: bool,
    /// Print statistics (files, fns, edges, time per phase) to stderr
    #[arg(short, long)]
    pub verbose: bool,
    /// Coloring
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Output format
    #[arg(long, value_enum, default_value_t = OutputFormat::Human, value_name = "FMT")]
    pub format: OutputFormat,
    #[command(flatten)]
    pub output: crate::cli_output::OutputArgs,
}

impl Cli {
    fn options(&self) -> Options {
        Options {
            workspace: WorkspaceOptions {
                manifest_path: self.manifest_path.clone(),
                features: self.features.clone(),
                all_features: self.all_features,
                no_default_features: self.no_default_features,
                no_deps: self.no_deps,
                packages: self.packages.clone(),
                exclude: self.exclude.clone(),
                cache: !self.no_cache,
            },
            config: self.config.clone(),
        }
    }
}

/// Everything the binary does; returns the exit code (0 clean, 1 deny-level findings,
/// 2 tool error). Diagnostics go to `out`, tool errors and statistics to `err`.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut args: Vec<OsString> = args.into_iter().collect();
    if args.get(1).is_some_and(|a| a == "nosync-lint") {
        args.remove(1);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let target: &mut dyn Write = if e.use_stderr() { err } else { out };
            let _ = write!(target, "{}", e.render());
            return code;
        }
    };
    if let Some(code) = crate::cli_output::early(&cli.output, out, err) {
        return code;
    }
    let quiet = cli.quiet;
    let mut progress = |line: &str| {
        if !quiet {
            let _ = writeln!(err, "{line}");
        }
    };
    match engine::analyze(&cli.options(), &mut progress) {
        Ok(analysis) => report(&cli, analysis, out, err),
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            2
        }
    }
}

fn report(cli: &Cli, mut a: Analysis, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let diagnostics = match crate::cli_output::finish(&cli.output, &mut a, err) {
        Ok(finished) => finished,
        Err(code) => return code,
    };
    let color = cli
        .color
        .enabled(std::io::IsTerminal::is_terminal(&std::io::stdout()));
    let format = cli.output.format(cli.format, color, !cli.quiet);
    let manifest_path = a.root.join("Cargo.toml");
    let workspace = report::Workspace {
        manifest_path: &manifest_path,
        metadata: a.metadata.as_ref(),
        srcroot: Some(&a.root),
    };
    let report = Report::new(&diagnostics, &a.sources, &workspace);
    let result = render::render(format, &report, out).and_then(|rendered| {
        if cli.verbose {
            write_stats(&a, err)?;
        }
        Ok(rendered)
    });
    match result {
        Ok(rendered) => exit_status(&report, rendered.complete),
        Err(e) => {
            let _ = writeln!(err, "error: cannot write output: {e}");
            2
        }
    }
}

/// 2 when the lint failed on part of its input (an `internal-error` at deny level, or a
/// diagnostic it could not render): the other findings are printed, but the run is not
/// a verdict; else 1 for any deny-level diagnostic, else 0.
pub(crate) fn exit_status(report: &Report<'_>, complete: bool) -> i32 {
    if report.internal_error() || !complete {
        2
    } else {
        let shown: Vec<_> = report.diagnostics().collect();
        crate::levels::exit_status(&shown)
    }
}

fn write_stats(a: &Analysis, err: &mut dyn Write) -> std::io::Result<()> {
    let s = &a.stats;
    writeln!(err, "nosync-lint statistics:")?;
    writeln!(
        err,
        "  crates: {}, files: {}, lines: {}, fns: {}, roots: {}",
        s.crates, s.files, s.lines, s.fns, s.roots
    )?;
    writeln!(
        err,
        "  edges: {} exact, {} inferred, {} name-only; unresolved calls: {}",
        s.edges_exact, s.edges_inferred, s.edges_name_only, s.unresolved
    )?;
    writeln!(
        err,
        "  macro_rules! expansions: {} ({} invocations not expanded)",
        s.macro_expansions, s.macro_failures
    )?;
    let phases: Vec<String> = s
        .phases
        .iter()
        .map(|(n, d)| format!("{n} {:.1} ms", d.as_secs_f64() * 1e3))
        .collect();
    writeln!(err, "  time: {}", phases.join(", "))
}
