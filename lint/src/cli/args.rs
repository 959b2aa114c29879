//! The command line's arguments: clap's types, the hidden flags of `cargo check` that are
//! accepted so that the lint can stand in for it, and what each argument means for the run
//! (the analysis's [`Options`], the render [`Format`]).

use crate::diagnostics::Level;
use crate::engine::Options;
use crate::levels::{LevelError, LevelOverrides};
use crate::render::Format;
use crate::workspace::WorkspaceOptions;
use clap::{ArgMatches, Args, FromArgMatches, Parser};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Reports every call chain from a `#[no_sync]` function to an API that blocks the host.
#[derive(Debug, Parser)]
#[command(name = "cargo-nosync-lint", bin_name = "cargo nosync-lint", version = crate::VERSION)]
pub(super) struct Cli {
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
    /// Neither read nor write the caches in the target dir (`cargo metadata` runs, every file is parsed)
    #[arg(long)]
    pub no_cache: bool,
    /// Evaluate `#[cfg]` for this target triple (default: the host), as `cargo build --target`
    #[arg(long, value_name = "TRIPLE")]
    pub target: Option<String>,
    /// No summary line
    #[arg(short, long)]
    pub quiet: bool,
    /// Print statistics (files, fns, edges, time per phase) to stderr
    #[arg(short, long)]
    pub verbose: bool,
    /// Walk every fn body into the call graph, not only those reachable from a root: the
    /// same output, slower (for the tests that check it is the same)
    #[arg(long, hide = true)]
    pub walk_every_fn: bool,
    /// Coloring
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Output format
    #[arg(long, value_enum, default_value_t = OutputFormat::Human, value_name = "FMT")]
    pub format: OutputFormat,
    /// Join the findings with a wait report of the runtime hook (`NOSYNC_REPORT=json:PATH`):
    /// each finding observed or not, the costliest first; each wait it missed, with the fix
    #[arg(long, value_name = "PATH")]
    pub runtime_report: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl Cli {
    /// Parses the command line (`argv[0]` first; cargo's `nosync-lint` after it, when run
    /// as `cargo nosync-lint`, is dropped).
    pub(super) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cli, clap::Error> {
        let mut args: Vec<OsString> = args.into_iter().collect();
        if args.get(1).is_some_and(|a| a == "nosync-lint") {
            args.remove(1);
        }
        Cli::try_parse_from(args)
    }

    /// What to analyse.
    pub(super) fn options(&self) -> Options {
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
                target: self.target.clone(),
            },
            config: self.config.clone(),
            pipeline: crate::pipeline::Options {
                walk_every_fn: self.walk_every_fn,
                fn_index: self.runtime_report.is_some(),
                ..Default::default()
            },
            speculate: false,
            drop_late_guess: false,
            levels: None,
        }
    }
}

impl Cli {
    /// How to write the report: `--format`, unless `--message-format` says otherwise;
    /// human output coloured as `--color` says for an `out` that is (or is not) a terminal,
    /// with its summary line unless `-q`.
    pub(super) fn render_format(&self, out_is_terminal: bool) -> Format {
        let color = self.color.enabled(out_is_terminal);
        let mut format = self.output.format(self.format, color, !self.quiet);
        if let Format::Human { full, .. } = &mut format {
            *full = self.verbose;
        }
        format
    }
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum OutputFormat {
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
pub(super) enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour output to a stream that `is_terminal` says is (or is not) a tty;
    /// `NO_COLOR` (non-empty) turns `auto` off.
    pub(super) fn enabled(self, is_terminal: bool) -> bool {
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
/// `check.overrideCommand`, scripts that add cargo's usual flags). None changes what is
/// analysed: the lint reads every target's sources whatever the target selection, never
/// builds (so profiles, target directories, job counts, `-Z` flags and
/// `--keep-going` have nothing to act on), and `cargo metadata` resolves the graph on its own
/// (`--locked`/`--offline`/`--frozen` are not passed on). They are hidden from `--help`; their
/// values are read by clap and dropped.
#[derive(Debug, Clone, Default, clap::Args)]
struct CargoCompat {
    /// Target selection: every target is analysed anyway.
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
    /// Build behaviour: nothing is built.
    #[arg(long, hide = true)]
    keep_going: bool,
    /// Lock file and network: `cargo metadata` is run as it is configured.
    #[arg(long, hide = true)]
    locked: bool,
    #[arg(long, hide = true)]
    offline: bool,
    #[arg(long, hide = true)]
    frozen: bool,
    /// Profiles, targets and build directories: nothing is compiled.
    #[arg(long, hide = true)]
    release: bool,
    #[arg(long, hide = true, value_name = "NAME")]
    profile: Option<String>,
    #[arg(long, hide = true, value_name = "DIR")]
    target_dir: Option<PathBuf>,
    #[arg(short = 'j', long, hide = true, value_name = "N")]
    jobs: Option<String>,
    /// Unstable cargo flags.
    #[arg(short = 'Z', hide = true, value_name = "FLAG")]
    unstable: Vec<String>,
}

/// The output arguments, with `-D/-W/-A` in command-line order.
#[derive(Debug, Clone, Default)]
pub(crate) struct OutputArgs {
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
    pub(crate) fn format(&self, format: OutputFormat, color: bool, summary: bool) -> Format {
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
            Format::Human {
                color,
                summary,
                full: false,
            }
        } else {
            match format {
                OutputFormat::Human => Format::Human {
                    color,
                    summary,
                    full: false,
                },
                OutputFormat::Json => Format::Json {
                    ansi: false,
                    short: false,
                },
                OutputFormat::Sarif => Format::Sarif,
            }
        }
    }
}

/// The values `--message-format` accepts (cargo's).
pub(super) const MESSAGE_FORMATS: &[&str] = &[
    "human",
    "short",
    "json",
    "json-diagnostic-short",
    "json-diagnostic-rendered-ansi",
    "json-render-diagnostics",
];

impl OutputArgs {
    /// The first `--message-format` value that is not one of [`MESSAGE_FORMATS`].
    pub(crate) fn bad_message_format(&self) -> Option<&str> {
        self.raw
            .message_format
            .iter()
            .map(String::as_str)
            .find(|v| !MESSAGE_FORMATS.contains(&v.trim()))
    }

    /// `--explain CODE`.
    pub(crate) fn explain(&self) -> Option<&str> {
        self.raw.explain.as_deref()
    }

    /// `-D/-W/-A` as `(level, code)`, in command-line order.
    pub(crate) fn levels(&self) -> &[(Level, String)] {
        &self.levels
    }

    /// [`OutputArgs::levels`] parsed, in order; the first unknown code's error.
    pub(crate) fn level_overrides(&self) -> Result<LevelOverrides, LevelError> {
        let mut overrides = LevelOverrides::default();
        for (level, code) in &self.levels {
            overrides.push_name(*level, code)?;
        }
        Ok(overrides)
    }

    /// `--write-baseline FILE`.
    pub(crate) fn write_baseline(&self) -> Option<&Path> {
        self.raw.write_baseline.as_deref()
    }

    /// The baseline to apply: `--baseline FILE`, else the one `--write-baseline` writes.
    pub(crate) fn baseline(&self) -> Option<&Path> {
        self.raw
            .baseline
            .as_deref()
            .or(self.raw.write_baseline.as_deref())
    }
}
