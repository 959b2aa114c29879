//! The command line, by concern: [`args`] (clap's types, what each argument means),
//! [`baseline_io`] (baseline files on disk), and here the run itself, in order: parse the
//! arguments → the early exits (`--help`, `--version`, `--explain`, a bad `--message-format`)
//! → the analysis → the baseline → the level overrides → the report → render → the exit
//! status. Nothing here calls back into the caller: whether `out` is a terminal is a value
//! passed in (the binary asks `std::io::IsTerminal` of its real stdout; tests choose).

mod args;
mod baseline_io;
mod stats;

use crate::diagnostics::{Diagnostic, explain};
use crate::engine::{self, Analysis};
use crate::levels::{LevelError, LevelOverrides, closest_code};
use crate::render;
use crate::report::{self, Report};
use args::Cli;
use std::ffi::OsString;
use std::io::Write;

/// Whether the writer given to [`run`] as `out` is a terminal (`--color auto` colours
/// only then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    Yes,
    No,
}

/// Everything the binary does; returns the exit code (0 clean, 1 deny-level findings,
/// 2 tool error). Diagnostics go to `out`, tool errors, progress and statistics to `err`.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminal: Terminal,
) -> i32 {
    run_with(args, out, err, terminal, false)
}

/// [`run`] in a process that exits with the code it returns (the binary): the analysis'
/// memory is left to the exit, not freed ([`crate::pipeline::Options::exiting`]).
pub fn run_then_exit(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminal: Terminal,
) -> i32 {
    run_with(args, out, err, terminal, true)
}

fn run_with(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminal: Terminal,
    exiting: bool,
) -> i32 {
    let cli = match Cli::parse(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let target: &mut dyn Write = if e.use_stderr() { err } else { out };
            let _ = write!(target, "{}", e.render());
            return code;
        }
    };
    if let Some(code) = early(&cli, out, err) {
        return code;
    }
    let quiet = cli.quiet;
    let mut progress = |line: &str| {
        if !quiet {
            let _ = writeln!(err, "{line}");
        }
    };
    let mut opts = cli.options();
    // An internal switch, for checking that lazy bodies change no output (not a flag).
    opts.pipeline.eager_bodies = std::env::var_os("NOSYNC_LINT_EAGER").is_some_and(|v| v == "1");
    // Speculative analysis while cargo metadata runs, on unless `NOSYNC_LINT_SPECULATE=0`
    // (docs/performance.md).
    opts.speculate = std::env::var_os("NOSYNC_LINT_SPECULATE").is_none_or(|v| v != "0");
    opts.drop_late_guess = true;
    opts.pipeline.exiting = exiting;
    // The run reports only what the levels leave: what they allow need not be made (a
    // bad code was reported before the analysis, `early`).
    opts.levels = cli.output.level_overrides().ok();
    let mut analysis = match engine::analyze(&opts, &mut progress) {
        Ok(analysis) => analysis,
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            return 2;
        }
    };
    if let Some(path) = &cli.runtime_report
        && let Err(e) = join_report(path, &mut analysis)
    {
        let _ = writeln!(err, "error: {e}");
        return 2;
    }
    let code = match finish(&cli.output, &mut analysis, err) {
        Ok(diagnostics) => {
            let code = show(&cli, &analysis, &diagnostics, terminal, out, err);
            if exiting {
                std::mem::forget(diagnostics);
            }
            code
        }
        Err(code) => code,
    };
    if exiting {
        std::mem::forget(analysis);
    }
    code
}

/// The analysis's findings joined with the wait report at `path` (`--runtime-report`).
fn join_report(path: &std::path::Path, analysis: &mut Analysis) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the wait report {}: {e}", path.display()))?;
    let analysed = crate::runtime_report::Analysed {
        sources: &analysis.sources,
        index: std::mem::take(&mut analysis.fn_index),
        root: analysis.root.as_path(),
    };
    crate::runtime_report::apply(&mut analysis.diagnostics, analysed, path, &text)
}

/// What needs no analysis: `--explain`, a bad `--message-format` value; the exit code when
/// the run ends here.
fn early(cli: &Cli, out: &mut dyn Write, err: &mut dyn Write) -> Option<i32> {
    if let Some(bad) = cli.output.bad_message_format() {
        let _ = writeln!(
            err,
            "error: invalid --message-format `{bad}`; expected one of: {}",
            args::MESSAGE_FORMATS.join(", ")
        );
        return Some(2);
    }
    if let Err(e) = cli.output.level_overrides() {
        let _ = writeln!(err, "error: {}", level_error(&e));
        return Some(2);
    }
    let name = cli.output.explain()?;
    Some(match explain::explain_or_list(name) {
        Ok(text) => {
            let _ = writeln!(out, "{text}");
            0
        }
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            2
        }
    })
}

/// A bad `-D/-W/-A` code's message, with the closest known code as a "did you mean".
fn level_error(e: &LevelError) -> String {
    match e {
        LevelError::UnknownCode { name, .. } => match closest_code(name) {
            Some(near) => format!("{e}\n  = help: did you mean `{near}`?"),
            None => e.to_string(),
        },
        LevelError::UnknownLevel { .. } => e.to_string(),
    }
}

/// The final diagnostics: the baseline applied, then the config's and the command line's level
/// overrides; a new baseline written first when asked (of the findings as the levels leave
/// them). `Err` is an exit code after a tool error (already reported on `err`).
pub(crate) fn finish(
    args: &args::OutputArgs,
    analysis: &mut Analysis,
    err: &mut dyn Write,
) -> Result<Vec<Diagnostic>, i32> {
    // Taken, not copied: nothing reads the analysis's own list after this (copying its
    // thousands of unresolved-call diagnostics was a serial pause at the end of a run).
    let mut diagnostics = std::mem::take(&mut analysis.diagnostics);
    let overrides = overrides(args, analysis, err)?;
    if let Some(path) = args.write_baseline() {
        let mut leveled = diagnostics.clone();
        overrides.apply(&mut leveled);
        baseline_io::write(path, &leveled, err)?;
    }
    if let Some(path) = args.baseline() {
        diagnostics = baseline_io::apply(path, analysis, diagnostics, err)?;
    }
    overrides.apply(&mut diagnostics);
    Ok(diagnostics)
}

/// The config's `levels` (validated when the config was read), then the command line's flags
/// (a bad one is a tool error, exit status 2).
fn overrides(
    args: &args::OutputArgs,
    analysis: &Analysis,
    err: &mut dyn Write,
) -> Result<LevelOverrides, i32> {
    let mut overrides = LevelOverrides::default();
    for &(target, level, _) in &analysis.config_levels {
        overrides.push(target, level);
    }
    for (level, code) in args.levels() {
        if let Err(e) = overrides.push_name(*level, code) {
            let _ = writeln!(err, "error: {}", level_error(&e));
            return Err(2);
        }
    }
    Ok(overrides)
}

/// The report of `diagnostics`, rendered to `out` (and `-v`'s statistics to `err`); the
/// exit code.
fn show(
    cli: &Cli,
    analysis: &Analysis,
    diagnostics: &[Diagnostic],
    terminal: Terminal,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let format = cli.render_format(terminal == Terminal::Yes);
    let manifest_path = analysis.root.join("Cargo.toml");
    let workspace = report::Context {
        manifest_path: &manifest_path,
        metadata: analysis.metadata.as_ref(),
        srcroot: Some(&analysis.root),
    };
    let report = Report::new(diagnostics, &analysis.sources, &workspace);
    let result = render::render(format, &report, out).and_then(|rendered| {
        if cli.verbose {
            let json = matches!(format, render::Format::Json { .. });
            stats::write(analysis, json, err)?;
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

/// 2 when the lint did not check everything it was asked to (an `internal-error`,
/// `no-roots` or `unparsed-root` at deny level, or a diagnostic it could not render): the
/// other findings are printed, but the run is not a verdict; else 1 for any deny-level
/// diagnostic, else 0.
pub(crate) fn exit_status(report: &Report<'_>, complete: bool) -> i32 {
    if report.incomplete() || !complete {
        2
    } else {
        crate::levels::exit_status(report.diagnostics())
    }
}

#[cfg(test)]
mod tests;

/// What a command line asks to analyse (`argv[0]` first), as [`run`] would analyse it: for
/// tests that call [`engine::analyze`] with options a command line cannot give (the
/// `eager_bodies` switch).
pub fn options_from_args(args: &[String]) -> Result<engine::Options, String> {
    let cli = Cli::parse(args.iter().map(std::ffi::OsString::from)).map_err(|e| e.to_string())?;
    Ok(cli.options())
}
