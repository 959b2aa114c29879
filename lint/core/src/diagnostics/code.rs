//! Stable diagnostic codes and their default levels.
//!
//! Codes are kebab-case and never change meaning once released; each has a section
//! in `lint/core/docs/diagnostics.md`, which `--explain CODE` prints.

use serde::Serialize;

/// What happens to a diagnostic of a given code, as in rustc/clippy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Not reported.
    Allow,
    /// Reported; does not change the exit status.
    Warn,
    /// Reported as an error; exit status 1.
    Deny,
}

macro_rules! codes {
    ($($variant:ident = $name:literal, $level:ident, $summary:literal;)*) => {
        /// Every diagnostic code the lint can emit.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum Code { $($variant,)* }

        impl Code {
            /// All codes, in documentation order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable kebab-case name (`sync-in-no-sync`).
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            /// The level a diagnostic of this code has unless overridden.
            pub fn default_level(self) -> Level {
                match self { $(Code::$variant => Level::$level,)* }
            }

            /// One-line description, for `--explain` indexes and SARIF rules.
            pub fn summary(self) -> &'static str {
                match self { $(Code::$variant => $summary,)* }
            }

            /// Looks a code up by its kebab-case name.
            pub fn from_name(name: &str) -> Option<Code> {
                Code::ALL.iter().copied().find(|c| c.as_str() == name)
            }
        }
    };
}

codes! {
    SyncInNoSync = "sync-in-no-sync", Deny,
        "a #[no_sync] function reaches an API that blocks the host";
    PossibleSyncInNoSync = "possible-sync-in-no-sync", Warn,
        "a #[no_sync] function may reach a blocking API through a call matched by name only";
    SetupSyncInNoSync = "setup-sync-in-no-sync", Warn,
        "a #[no_sync] function reaches one-time setup that blocks the host (a module load, a compile, a context or stream creation)";
    UnresolvedCallInNoSync = "unresolved-call-in-no-sync", Allow,
        "a call reachable from a #[no_sync] function could not be resolved; only the runtime guard covers it";
    ParseError = "parse-error", Warn,
        "a source file could not be parsed whole; the items that do not parse were skipped and the rest analysed";
    InvalidAnnotation = "invalid-annotation", Warn,
        "a nosync attribute or escape is malformed (its macro rejects it); an attribute is then ignored";
    MissingModule = "missing-module", Warn,
        "a `mod` declaration names a file that does not exist";
    ConfigError = "config-error", Deny,
        "the lint's configuration is invalid or names a path that matches nothing";
    ChainsLeaveWorkspace = "chains-leave-workspace", Warn,
        "with --no-deps, calls reached from the no-sync roots leave the workspace and are not followed";
    WorkspaceFallback = "workspace-fallback", Warn,
        "cargo could not resolve the dependency graph; it was rebuilt from the members and what is on disk";
    NoRoots = "no-roots", Deny,
        "the run found no #[no_sync] function and no configured root, so it checked nothing; the run exits 2";
    UnparsedRoot = "unparsed-root", Deny,
        "a #[no_sync] function could not be parsed, so it was not checked; the run exits 2";
    InternalError = "internal-error", Deny,
        "the lint hit an internal error on part of the input; that part was skipped, the rest analysed, and the run exits 2";
    StaleBaselineEntry = "stale-baseline-entry", Warn,
        "a baseline entry matches no finding any more; regenerate the baseline";
    MissedWait = "missed-wait", Warn,
        "the runtime hook saw a wait inside a #[no_sync] root that no finding explains (--runtime-report)";
}

impl Code {
    /// Whether a diagnostic of this code at deny level means that the run did not check
    /// everything it was asked to (exit status 2, not a verdict): an internal error, no
    /// root at all, a root that could not be parsed.
    pub fn incomplete(self) -> bool {
        matches!(
            self,
            Code::InternalError | Code::NoRoots | Code::UnparsedRoot
        )
    }
}
