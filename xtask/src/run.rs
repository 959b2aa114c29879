//! One timed run of the lint over one input, and what it said.
//!
//! The lint runs as `cargo-nosync-lint --manifest-path M --all-features -v --message-format json`
//! in its own process group (a timeout kills the whole group), under `/usr/bin/time -f %M` for
//! the peak RSS when that exists (else `/proc/PID/status`'s `VmHWM`, sampled while it runs).
//! Its stdout (the JSON messages) and stderr (the `-v` statistics) are kept in `<scratch>/out/`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const GNU_TIME: &str = "/usr/bin/time";

/// What one run produced.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// The exit code; `None` when killed (timeout) or ended by a signal.
    pub code: Option<i32>,
    pub signal: Option<String>,
    pub timed_out: bool,
    pub wall: Duration,
    pub peak_rss_kib: Option<u64>,
    /// User + system CPU time (from GNU time), which the machine's load does not inflate.
    pub cpu: Option<Duration>,
    /// `-v`'s `crates: .., files: ..` figures, by name.
    pub stats: BTreeMap<String, u64>,
    /// Reported diagnostics by code.
    pub codes: BTreeMap<String, usize>,
    /// Each diagnostic with a code that means a lint bug.
    pub bugs: Vec<Bug>,
    /// The panic message line, if the lint panicked.
    pub panic: Option<String>,
}

/// A diagnostic with one of the [`BUG_CODES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bug {
    pub code: String,
    pub file: String,
    pub line: u64,
    pub message: String,
}

impl Bug {
    /// `CODE@FILE:LINE`, as a list's `known=` field names it.
    pub(crate) fn key(&self) -> String {
        format!("{}@{}:{}", self.code, self.file, self.line)
    }
}

impl std::fmt::Display for Bug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: [{}] {}",
            self.file, self.line, self.code, self.message
        )
    }
}

/// Codes that on a published crate mean the lint is wrong (not the code under analysis).
pub(crate) const BUG_CODES: [&str; 3] = ["internal-error", "missing-module", "parse-error"];

pub(crate) struct Run<'a> {
    pub lint: &'a Path,
    pub manifest: &'a Path,
    pub args: &'a [String],
    pub timeout: Duration,
    /// Where stdout and stderr go: `<logs>.json`, `<logs>.stderr`, `<logs>.rss`.
    pub logs: PathBuf,
}

pub(crate) fn run(r: &Run<'_>) -> std::io::Result<Outcome> {
    let out_file = with_suffix(&r.logs, ".json");
    let err_file = with_suffix(&r.logs, ".stderr");
    let rss_file = with_suffix(&r.logs, ".rss");
    let _ = std::fs::remove_file(&rss_file);
    let timed = Path::new(GNU_TIME).is_file();
    let mut cmd = if timed {
        let mut c = Command::new(GNU_TIME);
        c.args(["-f", "%M %U %S", "-o"]).arg(&rss_file).arg(r.lint);
        c
    } else {
        Command::new(r.lint)
    };
    cmd.arg("--manifest-path")
        .arg(r.manifest)
        .args(["--all-features", "-v", "--message-format", "json"])
        // The inputs have no roots on purpose (the sweep checks that the lint reads them):
        // a run that checks nothing is expected here, not a tool error.
        .args(["-A", "no-roots"])
        .args(r.args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file)?)
        .stderr(std::fs::File::create(&err_file)?)
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let (status, hwm) = wait(&mut child, r.timeout)?;
    let mut o = Outcome {
        wall: start.elapsed(),
        timed_out: status.is_none(),
        code: status.and_then(|s| s.code()),
        peak_rss_kib: if timed { None } else { hwm },
        ..Outcome::default()
    };
    if timed && let Ok(text) = std::fs::read_to_string(&rss_file) {
        read_time_output(&text, &mut o);
    }
    read_messages(
        &std::fs::read_to_string(&out_file).unwrap_or_default(),
        &mut o,
    );
    read_stderr(
        &std::fs::read_to_string(&err_file).unwrap_or_default(),
        &mut o,
    );
    Ok(o)
}

/// Waits for the child up to `timeout` (then kills its process group); the status (`None` on
/// timeout) and the largest `VmHWM` seen, in KiB.
fn wait(
    child: &mut Child,
    timeout: Duration,
) -> std::io::Result<(Option<ExitStatus>, Option<u64>)> {
    let deadline = Instant::now() + timeout;
    let mut hwm = None;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok((Some(status), hwm));
        }
        if Instant::now() >= deadline {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.kill();
            child.wait()?;
            return Ok((None, hwm));
        }
        hwm = hwm.max(vm_hwm(child.id()));
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn vm_hwm(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// GNU time's `-o` file: `%M %U %S`, preceded by `Command terminated by signal N` when it was.
fn read_time_output(text: &str, o: &mut Outcome) {
    for line in text.lines() {
        if let Some(sig) = line.strip_prefix("Command terminated by signal ") {
            o.signal = Some(sig.trim().to_owned());
            o.code = None;
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let [rss, user, sys] = fields[..]
            && let (Ok(kib), Ok(u), Ok(s)) = (rss.parse(), user.parse::<f64>(), sys.parse::<f64>())
        {
            o.peak_rss_kib = Some(kib);
            o.cpu = Some(Duration::from_secs_f64(u + s));
        }
    }
}

/// The JSON message stream: counts by code, and the location of every bug code.
pub(crate) fn read_messages(text: &str, o: &mut Outcome) {
    for line in text.lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-message" {
            continue;
        }
        let m = &msg["message"];
        let code = m["code"]["code"].as_str().unwrap_or("(none)").to_owned();
        if BUG_CODES.contains(&code.as_str()) {
            let span = &m["spans"][0];
            o.bugs.push(Bug {
                code: code.clone(),
                file: span["file_name"].as_str().unwrap_or("?").to_owned(),
                line: span["line_start"].as_u64().unwrap_or(0),
                message: m["message"].as_str().unwrap_or("").to_owned(),
            });
        }
        *o.codes.entry(code).or_default() += 1;
    }
}

/// `-v`'s statistics lines (`  crates: 3, files: 40, ...`) and a panic's `panicked at` line.
pub(crate) fn read_stderr(text: &str, o: &mut Outcome) {
    for line in text.lines() {
        if line.contains("panicked at") && o.panic.is_none() {
            o.panic = Some(line.trim().to_owned());
        }
        for pair in line.trim().split(", ") {
            if let Some((key, value)) = pair.split_once(": ")
                && let Ok(n) = value.trim().parse::<u64>()
                && key.chars().all(|c| c.is_ascii_lowercase())
            {
                o.stats.insert(key.to_owned(), n);
            }
        }
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_and_panics_are_read_from_stderr() {
        let mut o = Outcome::default();
        read_stderr(
            "thread 'main' panicked at lint/core/src/resolve/scope.rs:71:5:\n\
             nosync-lint statistics:\n  crates: 3, files: 40, lines: 5120, fns: 200, roots: 2\n  \
             edges: 10 exact, 2 inferred, 0 name-only; unresolved calls: 7\n",
            &mut o,
        );
        let stats: Vec<(&str, u64)> = o.stats.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            stats,
            [
                ("crates", 3),
                ("files", 40),
                ("fns", 200),
                ("lines", 5120),
                ("roots", 2)
            ]
        );
        assert_eq!(
            o.panic.as_deref(),
            Some("thread 'main' panicked at lint/core/src/resolve/scope.rs:71:5:")
        );
    }

    #[test]
    fn messages_are_counted_by_code_and_bug_codes_located() {
        let mut o = Outcome::default();
        let stream = concat!(
            r#"{"reason":"compiler-message","message":{"code":{"code":"sync-in-no-sync"},"message":"a","spans":[]}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"code":{"code":"missing-module"},"message":"file not found for module `x`","spans":[{"file_name":"src/lib.rs","line_start":4}]}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"code":{"code":"sync-in-no-sync"},"message":"b","spans":[]}}"#,
            "\nnot json\n",
            r#"{"reason":"build-finished","success":false}"#,
        );
        read_messages(stream, &mut o);
        let codes: Vec<(&str, usize)> = o.codes.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(codes, [("missing-module", 1), ("sync-in-no-sync", 2)]);
        let bugs: Vec<String> = o.bugs.iter().map(ToString::to_string).collect();
        assert_eq!(
            bugs,
            ["src/lib.rs:4: [missing-module] file not found for module `x`"]
        );
        assert_eq!(o.bugs[0].key(), "missing-module@src/lib.rs:4");
    }

    #[test]
    fn gnu_time_output_gives_rss_and_signal() {
        let mut o = Outcome {
            code: Some(0),
            ..Outcome::default()
        };
        read_time_output("Command terminated by signal 11\n81234 1.50 0.25\n", &mut o);
        assert_eq!(
            (o.code, o.signal.as_deref(), o.peak_rss_kib),
            (None, Some("11"), Some(81234))
        );
        assert_eq!(o.cpu, Some(Duration::from_millis(1750)));
    }
}
