//! The command line's output half: `--format`/`--message-format`, `-D/-W/-A`, `--baseline`,
//! `--write-baseline`, `--explain`, and the cargo flags rust-analyzer's `check.overrideCommand`
//! may pass, accepted and ignored. Flattened into [`crate::cli::Cli`].
//!
//! After the analysis, [`finish`] applies the baseline, then the level overrides (config first,
//! command line after), then writes a new baseline if asked; the renderers get the result.

use crate::baseline::Baseline;
use crate::diagnostics::{Diagnostic, Level, explain};
use crate::engine::Analysis;
use crate::levels::LevelOverrides;
use crate::render::Format;
use clap::{ArgMatches, Args, FromArgMatches};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// rustc-style text with snippets.
    #[default]
    Human,
    /// One JSON object per line, as `cargo check --message-format=json`.
    Json,
    /// SARIF 2.1.0 (GitHub code scanning).
    Sarif,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour output to a stream that `is_terminal` says is (or is not) a tty;
    /// `NO_COLOR` (non-empty) turns `auto` off.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

/// The arguments as clap sees them; [`OutputArgs`] adds the order of `-D/-W/-A`.
#[derive(Debug, Clone, Default, clap::Args)]
struct RawOutputArgs {
    /// Set CODE (or `warnings`: every warning) to deny; repeatable, later flags win
    #[arg(short = 'D', long = "deny", value_name = "CODE")]
    deny: Vec<String>,
    /// Set CODE to warn
    #[arg(short = 'W', long = "warn", value_name = "CODE")]
    warn: Vec<String>,
    /// Set CODE to allow (not reported)
    #[arg(short = 'A', long = "allow", value_name = "CODE")]
    allow: Vec<String>,
    /// Accept the findings recorded in FILE; fail only on new ones, report stale entries
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Record today's findings in FILE (then report as if given with --baseline FILE)
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Print the documentation of a diagnostic code and exit
    #[arg(long, value_name = "CODE")]
    explain: Option<String>,
    /// cargo's spelling: human, short, json, json-diagnostic-short,
    /// json-diagnostic-rendered-ansi, json-render-diagnostics (comma-separated)
    #[arg(long, value_name = "FMT", value_delimiter = ',')]
    message_format: Vec<String>,
    #[command(flatten)]
    cargo: CargoCompat,
}

/// Flags of `cargo check` accepted so that the lint can stand in for it (rust-analyzer's
/// `check.overrideCommand`, scripts); they do not change what is analysed.
#[derive(Debug, Clone, Default, clap::Args)]
struct CargoCompat {
    #[arg(long, hide = true)]
    all_targets: bool,
    #[arg(long, hide = true)]
    lib: bool,
    #[arg(long, hide = true)]
    bins: bool,
    #[arg(long, hide = true)]
    tests: bool,
    #[arg(long, hide = true)]
    benches: bool,
    #[arg(long, hide = true)]
    examples: bool,
    #[arg(long = "bin", hide = true, value_name = "NAME")]
    bin: Vec<String>,
    #[arg(long = "test", hide = true, value_name = "NAME")]
    test: Vec<String>,
    #[arg(long = "bench", hide = true, value_name = "NAME")]
    bench: Vec<String>,
    #[arg(long = "example", hide = true, value_name = "NAME")]
    example: Vec<String>,
    #[arg(long, hide = true)]
    keep_going: bool,
    #[arg(long, hide = true)]
    locked: bool,
    #[arg(long, hide = true)]
    offline: bool,
    #[arg(long, hide = true)]
    frozen: bool,
    #[arg(long, hide = true)]
    release: bool,
    #[arg(long, hide = true, value_name = "NAME")]
    profile: Option<String>,
    #[arg(long, hide = true, value_name = "TRIPLE")]
    target: Vec<String>,
    #[arg(long, hide = true, value_name = "DIR")]
    target_dir: Option<PathBuf>,
    #[arg(short = 'j', long, hide = true, value_name = "N")]
    jobs: Option<String>,
    #[arg(short = 'Z', hide = true, value_name = "FLAG")]
    unstable: Vec<String>,
}

/// The output arguments, with `-D/-W/-A` in command-line order.
#[derive(Debug, Clone, Default)]
pub struct OutputArgs {
    raw: RawOutputArgs,
    /// `(level, code)` in the order given.
    levels: Vec<(Level, String)>,
}

impl Args for OutputArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        RawOutputArgs::augment_args(cmd)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        RawOutputArgs::augment_args_for_update(cmd)
    }
}

impl FromArgMatches for OutputArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let raw = RawOutputArgs::from_arg_matches(matches)?;
        let mut ordered: Vec<(usize, Level, String)> = Vec::new();
        for (id, level) in [
            ("deny", Level::Deny),
            ("warn", Level::Warn),
            ("allow", Level::Allow),
        ] {
            if let (Ok(Some(values)), Some(indices)) =
                (matches.try_get_many::<String>(id), matches.indices_of(id))
            {
                ordered.extend(indices.zip(values).map(|(i, v)| (i, level, v.clone())));
            }
        }
        ordered.sort_by_key(|&(index, ..)| index);
        let levels = ordered.into_iter().map(|(_, l, c)| (l, c)).collect();
        Ok(OutputArgs { raw, levels })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = OutputArgs::from_arg_matches(matches)?;
        Ok(())
    }
}

impl OutputArgs {
    /// The format `--format` asks for, unless `--message-format` says otherwise; human
    /// output with `color`, and its summary line with `summary`.
    pub fn format(&self, format: OutputFormat, color: bool, summary: bool) -> Format {
        let values = &self.raw.message_format;
        let has = |v: &str| values.iter().any(|x| x.trim() == v);
        if values.iter().any(|v| v.trim().starts_with("json")) {
            Format::Json {
                ansi: has("json-diagnostic-rendered-ansi"),
                short: has("json-diagnostic-short"),
            }
        } else if has("short") {
            Format::Short
        } else if has("human") {
            Format::Human { color, summary }
        } else {
            match format {
                OutputFormat::Human => Format::Human { color, summary },
                OutputFormat::Json => Format::Json {
                    ansi: false,
                    short: false,
                },
                OutputFormat::Sarif => Format::Sarif,
            }
        }
    }
}

/// Handles what needs no analysis (`--explain`, bad `--message-format` values); returns the
/// exit code when the run ends here.
pub fn early(args: &OutputArgs, out: &mut dyn Write, err: &mut dyn Write) -> Option<i32> {
    const KNOWN: &[&str] = &[
        "human",
        "short",
        "json",
        "json-diagnostic-short",
        "json-diagnostic-rendered-ansi",
        "json-render-diagnostics",
    ];
    if let Some(bad) = args
        .raw
        .message_format
        .iter()
        .find(|v| !KNOWN.contains(&v.trim()))
    {
        let _ = writeln!(
            err,
            "error: invalid --message-format `{bad}`; expected one of: {}",
            KNOWN.join(", ")
        );
        return Some(2);
    }
    let name = args.raw.explain.as_deref()?;
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

/// The final diagnostics: the baseline applied, then the config's and the command line's level
/// overrides; a new baseline written when asked. `Err` is an exit code after a tool error
/// (already reported on `err`). The baseline file read is added to the analysis's sources,
/// for the snippets of stale entries.
pub fn finish(
    args: &OutputArgs,
    analysis: &mut Analysis,
    err: &mut dyn Write,
) -> Result<Vec<Diagnostic>, i32> {
    let mut diagnostics = analysis.diagnostics.clone();
    let overrides = overrides(args, analysis, err)?;
    if let Some(path) = &args.raw.write_baseline {
        let mut leveled = diagnostics.clone();
        overrides.apply(&mut leveled);
        let text = crate::baseline::write(&leveled);
        if let Err(e) = std::fs::write(path, &text) {
            let _ = writeln!(
                err,
                "error: cannot write baseline `{}`: {e}",
                path.display()
            );
            return Err(2);
        }
    }
    let baseline_path = args
        .raw
        .baseline
        .as_ref()
        .or(args.raw.write_baseline.as_ref());
    if let Some(path) = baseline_path {
        diagnostics = apply_baseline(path, analysis, diagnostics, err)?;
    }
    overrides.apply(&mut diagnostics);
    Ok(diagnostics)
}

/// The config's `levels` (validated when the config was read), then the command line's flags
/// (a bad one is a tool error, exit status 2).
fn overrides(
    args: &OutputArgs,
    analysis: &Analysis,
    err: &mut dyn Write,
) -> Result<LevelOverrides, i32> {
    let mut overrides = LevelOverrides::default();
    for &(target, level, _) in &analysis.config_levels {
        overrides.push(target, level);
    }
    for (level, code) in &args.levels {
        if let Err(e) = overrides.push_name(*level, code) {
            let _ = writeln!(err, "error: {e}");
            return Err(2);
        }
    }
    Ok(overrides)
}

/// Reads the baseline at `path` and applies it; returns the kept diagnostics and adds the
/// baseline file to the analysis's sources.
fn apply_baseline(
    path: &Path,
    analysis: &mut Analysis,
    diagnostics: Vec<Diagnostic>,
    err: &mut dyn Write,
) -> Result<Vec<Diagnostic>, i32> {
    let display = display_path(&analysis.root, path);
    let read = crate::source::Loader::read(&crate::source::DiskLoader, path)
        .map_err(anyhow::Error::from)
        .and_then(|text| Baseline::parse(&display, text));
    let baseline = read.map_err(|e| {
        let _ = writeln!(
            err,
            "error: cannot use baseline `{}`: {e:#}",
            path.display()
        );
        2
    })?;
    let applied = baseline.apply(diagnostics);
    if applied.suppressed > 0 {
        let _ = writeln!(
            err,
            "note: {} finding(s) accepted by the baseline `{}`",
            applied.suppressed,
            path.display()
        );
    }
    analysis
        .sources
        .add(absolute(path), baseline.text().to_owned());
    Ok(applied.diagnostics)
}

/// `path` as diagnostics print it: relative to the workspace root when inside it (as the
/// source map prints the files it holds).
fn display_path(root: &Path, path: &Path) -> PathBuf {
    crate::paths::relative(root, &absolute(path))
}

fn absolute(path: &Path) -> PathBuf {
    std::env::current_dir().map_or_else(|_| path.to_owned(), |cwd| cwd.join(path))
}
