//! The sweep's input list: one input per line, `#` starts a comment.
//!
//! ```text
//! git    candle  https://github.com/huggingface/candle  2a13b0f3ff62f7e67013597f2996f764c5735e21
//! crate  tokio   =1.16.1
//! crate  burn-cuda  =0.18.0  -- --exclude foo
//! ```
//!
//! `git NAME URL COMMIT`: a workspace at that commit (located as `<scratch>/git/NAME`, else cloned).
//! `crate NAME REQ`: a published crate, the version cargo picks for the requirement `REQ`.
//! `known=CODE@FILE:LINE` fields (after those) name diagnostics expected on that input, each
//! with a reason in a comment: a file the published package leaves out, a documented limit.
//! Anything after a `--` field is passed to the lint as extra arguments.

use std::fmt;

/// Where an input's sources come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    Git { url: String, commit: String },
    Crate { req: String },
}

/// One line of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Input {
    pub name: String,
    pub source: Source,
    /// Extra arguments for the lint (after `--`).
    pub args: Vec<String>,
    /// Expected diagnostics, as `CODE@FILE:LINE`.
    pub known: Vec<String>,
}

/// A line that is not an input, with its 1-based number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Parses the whole list; every bad line is reported, none is skipped silently.
pub(crate) fn parse(text: &str) -> Result<Vec<Input>, Vec<ListError>> {
    let mut inputs = Vec::new();
    let mut errors = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        match parse_line(line) {
            Ok(input) => inputs.push(input),
            Err(message) => errors.push(ListError {
                line: i + 1,
                message,
            }),
        }
    }
    if let Some(dup) = duplicate(&inputs) {
        errors.push(ListError {
            line: 0,
            message: format!("input `{dup}` is listed twice"),
        });
    }
    if errors.is_empty() {
        Ok(inputs)
    } else {
        Err(errors)
    }
}

fn parse_line(line: &str) -> Result<Input, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (head, args) = match fields.iter().position(|f| *f == "--") {
        Some(i) => (&fields[..i], &fields[i + 1..]),
        None => (&fields[..], &[][..]),
    };
    let args = args.iter().map(|a| (*a).to_owned()).collect();
    let (known, head): (Vec<&str>, Vec<&str>) = head.iter().partition(|f| f.starts_with("known="));
    let known: Vec<String> = known
        .iter()
        .map(|k| k["known=".len()..].to_owned())
        .collect();
    if let Some(bad) = known.iter().find(|k| !k.contains('@') || !k.contains(':')) {
        return Err(format!("`known={bad}` is not CODE@FILE:LINE"));
    }
    if known.iter().any(|k| k.starts_with("internal-error@")) {
        return Err("an `internal-error` is never known: it is a bug to fix".to_owned());
    }
    let input = |name: &str, source, args| Input {
        name: name.to_owned(),
        source,
        args,
        known: known.clone(),
    };
    match head.as_slice() {
        ["git", name, url, commit] => {
            if commit.len() != 40 || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!("`{commit}` is not a 40-digit commit hash"));
            }
            let source = Source::Git {
                url: (*url).to_owned(),
                commit: (*commit).to_owned(),
            };
            Ok(input(name, source, args))
        }
        ["crate", name, req] => {
            let source = Source::Crate {
                req: (*req).to_owned(),
            };
            Ok(input(name, source, args))
        }
        [kind @ ("git" | "crate"), ..] => Err(format!(
            "`{kind}` takes {} fields, found {}",
            if *kind == "git" { 4 } else { 3 },
            head.len()
        )),
        [kind, ..] => Err(format!("unknown kind `{kind}` (expected `git` or `crate`)")),
        [] => Err("no fields before `--`".to_owned()),
    }
}

/// The key an input is known by in the table and the scratch directory.
pub(crate) fn key(input: &Input) -> String {
    match &input.source {
        Source::Git { .. } => input.name.clone(),
        Source::Crate { req } => format!("{}@{}", input.name, req.trim_start_matches('=')),
    }
}

fn duplicate(inputs: &[Input]) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    inputs.iter().map(key).find(|k| !seen.insert(k.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_both_kinds_with_comments_and_extra_args() {
        let text = "# header\n\
            git candle https://github.com/huggingface/candle 2a13b0f3ff62f7e67013597f2996f764c5735e21\n\
            \n\
            crate tokio =1.16.1   # the missing-module case\n\
            crate burn-cuda * known=parse-error@src/a.rs:3 -- --exclude x -p y\n";
        let inputs = parse(text).unwrap();
        assert_eq!(
            inputs,
            vec![
                Input {
                    name: "candle".into(),
                    source: Source::Git {
                        url: "https://github.com/huggingface/candle".into(),
                        commit: "2a13b0f3ff62f7e67013597f2996f764c5735e21".into(),
                    },
                    args: vec![],
                    known: vec![],
                },
                Input {
                    name: "tokio".into(),
                    source: Source::Crate {
                        req: "=1.16.1".into()
                    },
                    args: vec![],
                    known: vec![],
                },
                Input {
                    name: "burn-cuda".into(),
                    source: Source::Crate { req: "*".into() },
                    args: vec!["--exclude".into(), "x".into(), "-p".into(), "y".into()],
                    known: vec!["parse-error@src/a.rs:3".into()],
                },
            ]
        );
        assert_eq!(key(&inputs[1]), "tokio@1.16.1");
        assert_eq!(key(&inputs[0]), "candle");
    }

    #[test]
    fn every_bad_line_is_reported_with_its_number() {
        let text = "crate serde\n\
            git x https://example.org/x deadbeef\n\
            svn y z\n\
            crate serde 1\n\
            crate serde 1\n\
            crate serde 2 known=src/lib.rs\n";
        let errors = parse(text).unwrap_err();
        let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            vec![
                "line 1: `crate` takes 3 fields, found 2",
                "line 2: `deadbeef` is not a 40-digit commit hash",
                "line 3: unknown kind `svn` (expected `git` or `crate`)",
                "line 6: `known=src/lib.rs` is not CODE@FILE:LINE",
                "line 0: input `serde@1` is listed twice",
            ]
        );
    }
}
