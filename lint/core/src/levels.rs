//! Level overrides: `-D/-W/-A CODE` on the command line and `levels` in the config, as in
//! rustc and clippy.
//!
//! Overrides apply in order, the config's first and the command line's after, so the command
//! line wins and a later flag wins over an earlier one. `warnings` is rustc's group: it does not
//! set a code's level but says what happens to every diagnostic whose resulting level is `warn`
//! (`-D warnings` makes them errors, `-A warnings` hides them); a later `-W warnings` undoes an
//! earlier `-D warnings`. [`LevelOverrides::apply`] is a pure function over the diagnostics.

use crate::diagnostics::{Code, Diagnostic, Level};
use std::fmt;

/// What an override names: one code, or every warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Code(Code),
    /// rustc's `warnings` group.
    Warnings,
}

/// The reason an override could not be parsed. The caller turns it into a command-line error
/// (exit status 2) or a `config-error` diagnostic at the config entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LevelError {
    #[error("unknown diagnostic code `{name}`; known codes: warnings, {known}")]
    UnknownCode { name: String, known: String },
    #[error("unknown level `{name}` for `{code}`; expected `allow`, `warn` or `deny`")]
    UnknownLevel { code: String, name: String },
}

/// The overrides of one run, in the order they apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelOverrides {
    steps: Vec<(Subject, Level)>,
}

/// The known code (or `warnings`) closest to a mistyped `name`, for a "did you mean".
pub fn closest_code(name: &str) -> Option<&'static str> {
    crate::diagnostics::suggest::closest_code(name, &["warnings"])
}

/// Parses a code name as given to `-D` or `levels` (`warnings` included).
pub fn parse_target(name: &str) -> Result<Subject, LevelError> {
    let name = name.trim();
    if name == "warnings" {
        return Ok(Subject::Warnings);
    }
    Code::from_name(name).map(Subject::Code).ok_or_else(|| {
        let known: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        LevelError::UnknownCode {
            name: name.to_owned(),
            known: known.join(", "),
        }
    })
}

/// Parses a level as written in the config (`"deny"`; `"forbid"` is taken as deny, `"warning"`
/// as warn, as rustc's JSON spells it).
pub fn parse_level(code: &str, name: &str) -> Result<Level, LevelError> {
    match name.trim().to_ascii_lowercase().as_str() {
        "allow" => Ok(Level::Allow),
        "warn" | "warning" => Ok(Level::Warn),
        "deny" | "forbid" | "error" => Ok(Level::Deny),
        _ => Err(LevelError::UnknownLevel {
            code: code.to_owned(),
            name: name.to_owned(),
        }),
    }
}

impl LevelOverrides {
    /// Appends one override; later ones win.
    pub fn push(&mut self, target: Subject, level: Level) {
        self.steps.push((target, level));
    }

    /// Appends `level` for the code named `name` (`-D name`).
    pub fn push_name(&mut self, level: Level, name: &str) -> Result<(), LevelError> {
        self.push(parse_target(name)?, level);
        Ok(())
    }

    /// Appends `later`'s overrides after these.
    pub fn extend(&mut self, later: &LevelOverrides) {
        self.steps.extend_from_slice(&later.steps);
    }

    /// Whether no override was given.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The level a diagnostic of `code` ends with, from its default level.
    pub fn level_of(&self, code: Code) -> Level {
        let mut level = code.default_level();
        let mut warnings = Level::Warn;
        for &(target, to) in &self.steps {
            match target {
                Subject::Code(c) if c == code => level = to,
                Subject::Code(_) => {}
                Subject::Warnings => warnings = to,
            }
        }
        if level == Level::Warn {
            warnings
        } else {
            level
        }
    }

    /// Sets every diagnostic's level from its code's default and the overrides. Allowed
    /// diagnostics stay in the list (a baseline still matches them); renderers skip them.
    pub fn apply(&self, diagnostics: &mut [Diagnostic]) {
        for diagnostic in diagnostics {
            diagnostic.level = self.level_of(diagnostic.code);
        }
    }
}

/// The exit status the diagnostics shown call for: 1 when one is denied, else 0 (2, a tool
/// error, is the caller's).
pub fn exit_status<'a>(shown: impl IntoIterator<Item = &'a Diagnostic>) -> i32 {
    i32::from(denied(shown))
}

/// Whether one of the diagnostics shown is denied (the run fails).
pub fn denied<'a>(shown: impl IntoIterator<Item = &'a Diagnostic>) -> bool {
    shown.into_iter().any(|d| d.level == Level::Deny)
}

/// The diagnostics a renderer shows: every one not allowed, in order.
pub fn reported(diagnostics: &[Diagnostic]) -> Vec<&Diagnostic> {
    diagnostics
        .iter()
        .filter(|d| d.level != Level::Allow)
        .collect()
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Code(code) => f.write_str(code.as_str()),
            Subject::Warnings => f.write_str("warnings"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Level::{Allow, Deny, Warn};

    /// Parses `flags` as a command line (`-D code -A code ...`) after `config` entries and
    /// returns the resulting level of each of `codes`.
    fn check(config: &[(&str, &str)], flags: &str, codes: &[Code]) -> Vec<Level> {
        let mut overrides = LevelOverrides::default();
        for &(code, level) in config {
            let level = parse_level(code, level).expect("valid level");
            overrides.push_name(level, code).expect("valid code");
        }
        let words: Vec<&str> = flags.split_whitespace().collect();
        for pair in words.chunks(2) {
            let level = match pair[0] {
                "-D" => Deny,
                "-W" => Warn,
                "-A" => Allow,
                other => panic!("bad flag {other}"),
            };
            overrides.push_name(level, pair[1]).expect("valid code");
        }
        codes.iter().map(|&c| overrides.level_of(c)).collect()
    }

    const CODES: [Code; 3] = [
        Code::SyncInNoSync,
        Code::PossibleSyncInNoSync,
        Code::UnresolvedCallInNoSync,
    ];

    #[test]
    fn defaults_without_overrides() {
        assert_eq!(check(&[], "", &CODES), [Deny, Warn, Allow]);
    }

    #[test]
    fn later_flags_win() {
        assert_eq!(
            check(&[], "-A sync-in-no-sync -W sync-in-no-sync", &CODES),
            [Warn, Warn, Allow]
        );
        assert_eq!(
            check(&[], "-D unresolved-call-in-no-sync", &CODES),
            [Deny, Warn, Deny]
        );
    }

    #[test]
    fn deny_warnings_promotes_only_warnings_and_respects_allow() {
        assert_eq!(check(&[], "-D warnings", &CODES), [Deny, Deny, Allow]);
        assert_eq!(
            check(&[], "-D warnings -A possible-sync-in-no-sync", &CODES),
            [Deny, Allow, Allow]
        );
        // rustc: a code set to warn is still promoted by `-D warnings`, whatever the order.
        assert_eq!(
            check(&[], "-W sync-in-no-sync -D warnings", &CODES),
            [Deny, Deny, Allow]
        );
        assert_eq!(
            check(&[], "-D warnings -W warnings", &CODES),
            [Deny, Warn, Allow]
        );
        assert_eq!(check(&[], "-A warnings", &CODES), [Deny, Allow, Allow]);
    }

    #[test]
    fn command_line_wins_over_config() {
        let config = [
            ("sync-in-no-sync", "warn"),
            ("possible-sync-in-no-sync", "deny"),
        ];
        assert_eq!(check(&config, "", &CODES), [Warn, Deny, Allow]);
        assert_eq!(
            check(&config, "-D sync-in-no-sync", &CODES),
            [Deny, Deny, Allow]
        );
    }

    #[test]
    fn unknown_codes_and_levels_are_errors() {
        let mut overrides = LevelOverrides::default();
        let err = overrides.push_name(Deny, "sync-in-nosync").unwrap_err();
        assert!(matches!(err, LevelError::UnknownCode { .. }));
        assert!(err.to_string().contains("sync-in-no-sync"), "{err}");
        let err = parse_level("sync-in-no-sync", "loud").unwrap_err();
        assert!(matches!(err, LevelError::UnknownLevel { .. }), "{err}");
        assert!(overrides.is_empty());
    }

    #[test]
    fn apply_sets_levels_and_exit_status_follows() {
        let span = crate::diagnostics::Span {
            file: "src/lib.rs".into(),
            byte_start: 0,
            byte_end: 1,
            line_start: 1,
            column_start: 1,
            line_end: 1,
            column_end: 2,
        };
        let mut diagnostics = vec![
            Diagnostic::new(Code::SyncInNoSync, "a", span.clone()),
            Diagnostic::new(Code::PossibleSyncInNoSync, "b", span),
        ];
        assert_eq!(exit_status(reported(&diagnostics)), 1);
        let mut overrides = LevelOverrides::default();
        overrides.push(Subject::Code(Code::SyncInNoSync), Allow);
        overrides.apply(&mut diagnostics);
        assert_eq!(exit_status(reported(&diagnostics)), 0);
        assert_eq!(reported(&diagnostics).len(), 1);
        overrides.push(Subject::Warnings, Deny);
        overrides.apply(&mut diagnostics);
        assert_eq!(exit_status(reported(&diagnostics)), 1);
    }
}
