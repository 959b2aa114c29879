//! Renderers: turn the final diagnostics into text. Nothing is computed here.

pub mod human;
pub mod json;
pub mod sarif;

/// How diagnostics are written.
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
