//! The text of a fixture's golden snapshot (`tests/golden/<fixture>.snap`, an insta snapshot
//! compared by `tests/tests/golden.rs`): the exit code, stdout and stderr of one lint run with
//! machine-specific paths and `-v` timings normalised away.

use std::path::{Path, PathBuf};

/// The command that rewrites every golden snapshot from the current lint (insta's own switch;
/// `cargo insta review` shows the `.snap.new` files a plain failing run leaves).
pub const BLESS_COMMAND: &str = "INSTA_UPDATE=always cargo test -p nosync-tests --test golden";

/// `tests/golden/`, where the snapshots live.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

/// The golden text of one run: the exit code line, then stdout, then stderr.
pub fn render(exit: i32, stdout: &str, stderr: &str) -> String {
    let mut text = format!("exit: {exit}\n--- stdout\n{stdout}");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text += "--- stderr\n";
    text += stderr;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Machine-specific text replaced by a placeholder, longest first so that a path
/// inside another is replaced by the more specific placeholder.
pub fn placeholders(repo_root: &Path) -> Vec<(String, &'static str)> {
    let mut pairs = vec![(repo_root.display().to_string(), "$ROOT")];
    let raw_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if let Ok(canonical) = raw_root.canonicalize() {
        pairs.push((canonical.display().to_string(), "$ROOT"));
    }
    if let Some(home) = cargo_home() {
        if let Ok(canonical) = home.canonicalize() {
            pairs.push((canonical.display().to_string(), "$CARGO_HOME"));
        }
        pairs.push((home.display().to_string(), "$CARGO_HOME"));
    }
    pairs.retain(|(from, _)| from.len() > 1);
    pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
    pairs.dedup();
    pairs
}

fn cargo_home() -> Option<PathBuf> {
    home::cargo_home().ok()
}

/// Replaces machine-specific paths; with `verbose`, drops lines that report a duration or a memory size
/// (the `-v` timings), which change from run to run, and the JSON statistics, which hold them too.
pub fn normalise(text: &str, placeholders: &[(String, &str)], verbose: bool) -> String {
    let mut out = text.to_owned();
    for (from, to) in placeholders {
        out = out.replace(from.as_str(), to);
    }
    if verbose {
        // The JSON statistics (`-v` with a JSON format) hold the phases' times too.
        let timed = |l: &&str| has_measure(l) || l.starts_with("{\"reason\":\"nosync-statistics\"");
        let kept: Vec<&str> = out.lines().filter(|l| !timed(l)).collect();
        let mut joined = kept.join("\n");
        if out.ends_with('\n') && !joined.is_empty() {
            joined.push('\n');
        }
        out = joined;
    }
    out
}

/// Whether a line contains a number directly followed by a time unit (`12ms`, `0.4 s`) or
/// a memory size (`88.8 MiB`): figures that differ from run to run.
pub fn has_measure(line: &str) -> bool {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            i += 1;
        }
        let rest = line[i..].trim_start_matches(' ');
        let unit: String = rest.chars().take_while(|c| c.is_alphabetic()).collect();
        if [
            "ns", "us", "µs", "ms", "s", "sec", "secs", "KiB", "MiB", "GiB",
        ]
        .contains(&unit.as_str())
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_sections_end_with_newlines() {
        assert_eq!(render(1, "a", ""), "exit: 1\n--- stdout\na\n--- stderr\n");
    }

    #[test]
    fn normalise_replaces_the_longest_path_first() {
        let pairs = vec![
            ("/r/x/.cargo".to_owned(), "$CARGO_HOME"),
            ("/r/x".to_owned(), "$ROOT"),
        ];
        let text = " --> /r/x/src/a.rs:1:1\n --> /r/x/.cargo/registry/b.rs:2:2\ntotal 3.5 ms\n";
        assert_eq!(
            normalise(text, &pairs, true),
            " --> $ROOT/src/a.rs:1:1\n --> $CARGO_HOME/registry/b.rs:2:2\n"
        );
        assert!(normalise(text, &pairs, false).ends_with("total 3.5 ms\n"));
    }

    #[test]
    fn durations_are_numbers_followed_by_time_units() {
        assert!(has_measure("parse: 12ms"));
        assert!(has_measure("total 0.25 s"));
        assert!(has_measure("memory: peak RSS 88.8 MiB (this process)"));
        assert!(!has_measure("files: 12, lines: 340"));
        assert!(!has_measure("--> src/lib.rs:3:5"));
        assert!(!has_measure("cuda13000 2 steps"));
    }
}
