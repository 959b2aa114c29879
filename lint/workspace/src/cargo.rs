//! Asking cargo and rustc: `cargo metadata` as the stage runs it (how, with cargo's
//! status lines passed on as they come and its own words when it fails), and what rustc
//! says about the host (its triple, for `--filter-platform`, and its cfgs).

use super::WorkspaceOptions;
use cargo_metadata::{CargoOpt, Metadata, MetadataCommand};

/// How `cargo metadata` is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ask {
    /// `--no-deps`: the members alone, never the network.
    NoDeps,
    /// `--frozen` (`--offline --locked`): the lock file as it is and what is already
    /// downloaded; it fails when the lock file would change or something is missing.
    Frozen,
    /// As the user would run it, except that a network error is not retried unless the
    /// environment says so (`CARGO_NET_RETRY`): without a network, cargo's three
    /// retries wait 11 s before the fallback could start.
    Online,
}

pub(super) fn metadata(
    opts: &WorkspaceOptions,
    ask: Ask,
    progress: &mut dyn FnMut(&str),
) -> Result<Metadata, CargoFailed> {
    let mut cmd = MetadataCommand::new();
    if let Some(p) = &opts.manifest_path {
        cmd.manifest_path(p);
    }
    if opts.all_features {
        cmd.features(CargoOpt::AllFeatures);
    }
    if opts.no_default_features {
        cmd.features(CargoOpt::NoDefaultFeatures);
    }
    if !opts.features.is_empty() {
        let split = opts
            .features
            .iter()
            .flat_map(|f| f.split([',', ' ']))
            .filter(|f| !f.is_empty());
        cmd.features(CargoOpt::SomeFeatures(split.map(str::to_owned).collect()));
    }
    let mut other = Vec::new();
    if ask == Ask::NoDeps {
        cmd.no_deps();
    } else if let Some(triple) = opts.target.as_deref().or_else(|| host_triple()) {
        other.extend(["--filter-platform".to_owned(), triple.to_owned()]);
    }
    if ask == Ask::Frozen {
        other.push("--frozen".to_owned());
    }
    if ask == Ask::Online && std::env::var_os("CARGO_NET_RETRY").is_none() {
        cmd.env("CARGO_NET_RETRY", "0");
    }
    cmd.other_options(other);
    exec(&cmd, progress)
}

/// `cargo metadata` failed; cargo's own words (its `error:` line and what follows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoFailed(pub String);

impl std::fmt::Display for CargoFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let said = self.0.strip_prefix("error: ").unwrap_or(&self.0);
        write!(f, "{said} (from `cargo metadata`)")
    }
}

impl std::error::Error for CargoFailed {}

/// Runs the metadata command, passing cargo's status lines to `progress` as they come.
pub(super) fn exec(
    cmd: &MetadataCommand,
    progress: &mut dyn FnMut(&str),
) -> Result<Metadata, CargoFailed> {
    use std::io::{BufRead, Read};
    let failed = |what: &str, e: &dyn std::fmt::Display| CargoFailed(format!("{what}: {e}"));
    let mut command = cmd.cargo_command();
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| failed("cannot run cargo", &e))?;
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout
            .map(|mut s| s.read_to_string(&mut text))
            .transpose()
            .map(|_| text)
    });
    let mut said = String::new();
    if let Some(stderr) = child.stderr.take() {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if is_status_line(&line) {
                progress(&line);
            }
            said.push_str(&line);
            said.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(|e| failed("cargo did not finish", &e))?;
    let out = reader.join().ok().and_then(Result::ok).unwrap_or_default();
    if !status.success() {
        return Err(CargoFailed(cargo_error(&said)));
    }
    MetadataCommand::parse(out).map_err(|e| failed("cannot read cargo's output", &e))
}

/// Cargo's right-aligned status lines (`    Updating ..`), not its warnings or errors.
pub fn is_status_line(line: &str) -> bool {
    let word = line.trim_start();
    line.len() > word.len()
        && word.split(' ').next().is_some_and(|w| {
            w.len() > 1
                && w.starts_with(|c: char| c.is_ascii_uppercase())
                && w[1..].chars().all(|c| c.is_ascii_lowercase())
        })
}

/// Cargo's own `error:` line (and what it says under it), not its progress lines.
pub(super) fn cargo_error(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let Some(start) = lines.iter().position(|l| l.starts_with("error")) else {
        let last = lines.iter().rev().find(|l| !l.is_empty());
        return last.copied().unwrap_or("").to_owned();
    };
    // The error line and what cargo says right under it, up to a blank line or "Caused by".
    let said: Vec<&str> = lines[start..]
        .iter()
        .take_while(|l| !l.is_empty() && !l.starts_with("Caused by"))
        .take(3)
        .copied()
        .collect();
    said.join("; ")
}

/// What rustc says about the host, asked once per process.
pub(super) struct Host {
    /// Its target triple.
    triple: Option<String>,
    /// Its `--print cfg` lines, when the same process printed them.
    cfg: Option<String>,
}

pub(super) fn host() -> &'static Host {
    static HOST: std::sync::OnceLock<Host> = std::sync::OnceLock::new();
    HOST.get_or_init(ask_host)
}

/// The host's target triple (`rustc --print host-tuple`, else `rustc -vV`).
pub(super) fn host_triple() -> Option<&'static str> {
    host().triple.as_deref()
}

/// The host's `rustc --print cfg` output, when the process that told the triple printed
/// it too (a rustc that knows `--print host-tuple`); else the caller asks rustc itself.
pub(super) fn host_cfg_text() -> Option<&'static str> {
    host().cfg.as_deref()
}

/// `rustc --print cfg`'s lines for `target` (the host's when `None`), asked once per
/// process and target. `Ok(None)` when rustc cannot tell the host's; `Err` with rustc's
/// words when it refuses the target.
pub(super) fn target_cfg_text(target: Option<&str>) -> Result<Option<String>, String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Asked = Mutex<HashMap<Option<String>, Result<Option<String>, String>>>;
    static ASKED: std::sync::OnceLock<Asked> = std::sync::OnceLock::new();
    let asked = ASKED.get_or_init(Default::default);
    let key = target.map(str::to_owned);
    if let Some(known) = asked.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return known;
    }
    let answer = match (target, host_cfg_text()) {
        (None, Some(text)) => Ok(Some(text.to_owned())),
        (None, None) => Ok(ask_cfg(None).ok()),
        (Some(triple), _) => ask_cfg(Some(triple)).map(Some),
    };
    if let Ok(mut m) = asked.lock() {
        m.insert(key, answer.clone());
    }
    answer
}

/// Runs `rustc --print cfg [--target triple]`: its output, or its error line.
fn ask_cfg(target: Option<&str>) -> Result<String, String> {
    let mut cmd = rustc();
    cmd.args(["--print", "cfg"]);
    if let Some(triple) = target {
        cmd.args(["--target", triple]);
    }
    let out = cmd.output().map_err(|e| format!("cannot run rustc: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let line = said.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(line.strip_prefix("error: ").unwrap_or(line).to_owned());
    }
    String::from_utf8(out.stdout).map_err(|_| "rustc printed no UTF-8".to_owned())
}

pub(super) fn rustc() -> std::process::Command {
    std::process::Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
}

/// One rustc process for the triple and the cfgs (each process costs ~20 ms of CPU
/// through the rustup proxy); an older rustc, which does not know `host-tuple`, fails,
/// and `-vV` tells the triple alone.
pub(super) fn ask_host() -> Host {
    let both = rustc()
        .args(["--print", "host-tuple", "--print", "cfg"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok());
    let split = both.as_deref().and_then(|text| {
        let (triple, cfg) = text.split_once('\n')?;
        let plain = !triple.is_empty() && !triple.contains(['=', ' ', '"']);
        plain.then(|| (triple.trim_end_matches('\r').to_owned(), cfg.to_owned()))
    });
    match split {
        Some((triple, cfg)) => Host {
            triple: Some(triple),
            cfg: Some(cfg),
        },
        None => Host {
            triple: ask_host_triple(),
            cfg: None,
        },
    }
}

pub(super) fn ask_host_triple() -> Option<String> {
    let out = rustc().arg("-vV").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
}
