//! The lint run in-process over the repository's fixtures (and copies of `fixtures/demo`),
//! with its output normalised and its JSON and SARIF checked.

use crate::formats_support::assert_valid_sarif;
use cargo_metadata::Message;
use nosync_lint_core::diagnostics::Code;
use nosync_lint_core::diagnostics::explain::explain;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The repository root.
pub(crate) fn repo() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

/// One run of the lint: exit code, stdout, stderr.
pub(crate) struct Run {
    pub(crate) exit: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `cargo nosync-lint ARGS` in-process.
pub(crate) fn lint(args: &[&str]) -> Run {
    let argv = std::iter::once("cargo-nosync-lint")
        .chain(args.iter().copied())
        .map(Into::into);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let exit = nosync_lint::run(argv, &mut out, &mut err, nosync_lint::Terminal::No);
    Run {
        exit,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
    }
}

/// Machine-specific paths replaced by `$ROOT`, `$CARGO_HOME` and `$TMP`; the version by
/// `$VERSION`.
pub(crate) fn normalise(text: &str, tmp: Option<&Path>) -> String {
    let mut pairs: Vec<(String, &str)> = vec![(repo().display().to_string(), "$ROOT")];
    if let Some(tmp) = tmp {
        pairs.push((tmp.display().to_string(), "$TMP"));
        if let Ok(canonical) = tmp.canonicalize() {
            pairs.push((canonical.display().to_string(), "$TMP"));
        }
    }
    if let Ok(home) = home::cargo_home() {
        pairs.push((home.display().to_string(), "$CARGO_HOME"));
    }
    pairs.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    let mut out = text.to_owned();
    for (from, to) in pairs.iter().filter(|(from, _)| from.len() > 1) {
        out = out.replace(from.as_str(), to);
    }
    out.replace(&format!("\"{}\"", nosync_lint::VERSION), "\"$VERSION\"")
}

pub(crate) fn manifest(fixture: &str) -> String {
    repo()
        .join("fixtures")
        .join(fixture)
        .join("Cargo.toml")
        .display()
        .to_string()
}

/// The JSON stream, checked line by line (cargo messages; one primary span in an existing
/// file; the explanation is the docs section), with the explanations shortened for snapshots.
pub(crate) fn check_json(stdout: &str, workspace: &Path) -> Vec<Value> {
    let messages: Vec<Message> = Message::parse_stream(stdout.as_bytes())
        .collect::<Result<_, _>>()
        .expect("the stream parses as cargo messages");
    assert!(
        matches!(messages.last(), Some(Message::BuildFinished(_))),
        "{stdout}"
    );
    let mut lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    for (line, message) in lines.iter_mut().zip(&messages) {
        let Message::CompilerMessage(m) = message else {
            continue;
        };
        let primary: Vec<_> = m.message.spans.iter().filter(|s| s.is_primary).collect();
        assert_eq!(primary.len(), 1, "one primary span: {line}");
        assert!(
            workspace.join(&primary[0].file_name).exists(),
            "span file exists: {}",
            primary[0].file_name
        );
        let code = m.message.code.as_ref().expect("a code");
        let known = Code::from_name(&code.code).expect("a known code");
        assert_eq!(code.explanation.as_deref(), explain(known));
        line["message"]["code"]["explanation"] =
            format!("<docs/diagnostics.md: {}>", code.code).into();
    }
    lines
}

/// The SARIF log, validated, with the rules (tested in `formats.rs`) shortened to their ids.
pub(crate) fn check_sarif(stdout: &str) -> Value {
    let mut log: Value = serde_json::from_str(stdout).expect("SARIF is JSON");
    assert_valid_sarif(&log);
    let rules = &mut log["runs"][0]["tool"]["driver"]["rules"];
    let ids: Vec<Value> = rules
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["id"].clone())
        .collect();
    *rules = Value::Array(ids);
    log
}

/// A copy of `fixtures/demo` in a temporary directory (its path dependency on the runtime made
/// absolute), with `edit` applied to its manifest text.
pub(crate) fn demo_copy(edit: impl FnOnce(String) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let from = repo().join("fixtures/demo");
    std::fs::create_dir_all(dir.path().join("src")).expect("src dir");
    for entry in std::fs::read_dir(from.join("src")).expect("demo sources") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("file name");
        std::fs::copy(&path, dir.path().join("src").join(name)).expect("copy source");
    }
    std::fs::copy(from.join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("copy lock");
    let manifest = std::fs::read_to_string(from.join("Cargo.toml")).expect("demo manifest");
    let runtime = repo().join("runtime").display().to_string();
    let manifest = manifest.replace("\"../../runtime\"", &format!("{runtime:?}"));
    assert!(manifest.contains(&runtime), "runtime path rewritten");
    std::fs::write(dir.path().join("Cargo.toml"), edit(manifest)).expect("write manifest");
    dir
}

pub(crate) fn edit_file(path: &Path, edit: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).expect("read");
    std::fs::write(path, edit(text)).expect("write");
}

/// The lint on the crate at `manifest`, without colour, with `flags` after.
pub(crate) fn lint_manifest(manifest: &Path, flags: &[&str]) -> Run {
    let manifest = manifest.display().to_string();
    let mut args = vec!["--manifest-path", manifest.as_str(), "--color", "never"];
    args.extend(flags);
    lint(&args)
}

/// The extra arguments a fixture is linted with (`lint-args.txt`, one per line).
pub(crate) fn fixture_args(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("lint-args.txt")).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.replace("$FIXTURE", &dir.display().to_string()))
        .collect()
}
