//! `NOSYNC_REPORT=json:PATH`: the wait report (`docs/wait-report.md`, format version 1), written
//! at exit for `cargo nosync-lint --runtime-report PATH`.
//!
//! One entry per site and side of the scope line: a site that waited both inside and outside
//! forbid scopes is two entries. The JSON is written by hand (the runtime has no serde): strings
//! escaped as RFC 8259 asks (as the trace's are), everything else integers, booleans and `null`.

// With `--cfg nosync_off` the callback does nothing, and what it would use goes unused.
#![cfg_attr(nosync_off, allow(dead_code))]

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Mutex;
use std::sync::PoisonError;

use crate::Frame;
use crate::guard::env::say;
use crate::hook::check::waits::{WaitScope, WaitSite, Waited};

/// The report's `format`.
const FORMAT: &str = "nosync-wait-report";
/// The report's `version`.
const VERSION: u32 = 1;

/// The backend of the last installation (`interpose` or `cupti`), for `program.backend`.
static BACKEND: Mutex<&str> = Mutex::new("none");

/// Notes the installed hook's backend (`interpose` or `cupti`).
pub(in crate::hook) fn installed(backend: &'static str) {
    *BACKEND.lock().unwrap_or_else(PoisonError::into_inner) = backend;
}

/// The program that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::hook) struct Program {
    pub(in crate::hook) exe: String,
    pub(in crate::hook) pid: u32,
    pub(in crate::hook) backend: &'static str,
}

/// Writes the report of `sites` to `path`, and says so (or why not) in one line on stderr.
pub(in crate::hook) fn write(path: &Path, sites: &[&WaitSite]) {
    let program = Program {
        exe: std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        pid: std::process::id(),
        backend: *BACKEND.lock().unwrap_or_else(PoisonError::into_inner),
    };
    let cwd = std::env::current_dir().ok();
    let text = render(&program, sites, &|file| place(file, cwd.as_deref()));
    match std::fs::write(path, text) {
        Ok(()) => say(&format!(
            "wait report of {} sync sites written to {}",
            sites.len(),
            path.display()
        )),
        Err(e) => say(&format!(
            "the wait report was not written to {}: {e}",
            path.display()
        )),
    }
}

/// Where a frame's file is, as the report writes it: an absolute path as it is; a relative one
/// (`./src/main.rs`, shown from the working directory) under `cwd` where a file is there, else
/// unknown (the C library's line tables name files of its own build: `./csu/../csu/libc-start.c`).
fn place(file: &str, cwd: Option<&Path>) -> Option<String> {
    let path = Path::new(file);
    if path.is_absolute() {
        return Some(file.to_owned());
    }
    let under = cwd?.join(path.strip_prefix(".").unwrap_or(path));
    under.is_file().then(|| under.display().to_string())
}

/// The report's text; `place` gives each frame's file as written (`None`: file and line
/// `null`).
pub(in crate::hook) fn render(
    program: &Program,
    sites: &[&WaitSite],
    place: &dyn Fn(&str) -> Option<String>,
) -> String {
    let frames = sites.iter().flat_map(|s| &s.frames);
    let line_tables = frames.clone().next().is_none() || frames.clone().any(|f| f.line.is_some());
    let mut out = String::new();
    out.push_str("{\n");
    let _ = writeln!(out, "  \"format\": {},", Str(FORMAT));
    let _ = writeln!(out, "  \"version\": {VERSION},");
    let _ = writeln!(
        out,
        "  \"program\": {{ \"exe\": {}, \"pid\": {}, \"backend\": {} }},",
        Str(&program.exe),
        program.pid,
        Str(program.backend)
    );
    let _ = writeln!(out, "  \"line_tables\": {line_tables},");
    let entries: Vec<String> = sites
        .iter()
        .flat_map(|s| {
            let inside = (s.forbidden.count > 0).then(|| entry(s, &s.forbidden, true, place));
            let outside = (s.allowed.count > 0).then(|| entry(s, &s.allowed, false, place));
            inside.into_iter().chain(outside)
        })
        .collect();
    match entries.is_empty() {
        true => out.push_str("  \"sites\": []\n"),
        false => {
            let _ = writeln!(out, "  \"sites\": [\n{}\n  ]", entries.join(",\n"));
        }
    }
    out.push_str("}\n");
    out
}

/// One entry: `site`'s waits `waited`, inside a forbid scope or outside.
fn entry(
    site: &WaitSite,
    waited: &Waited,
    in_scope: bool,
    place: &dyn Fn(&str) -> Option<String>,
) -> String {
    let scope = match (in_scope, site.scope) {
        (true, Some(scope)) => scope_json(scope, &site.frames),
        _ => String::from("null"),
    };
    let frames: Vec<String> = site.frames.iter().map(|f| frame_json(f, place)).collect();
    let frames = match frames.is_empty() {
        true => String::from("[]"),
        false => format!("[\n        {}\n      ]", frames.join(",\n        ")),
    };
    let mut out = String::from("    {\n");
    let _ = writeln!(out, "      \"api\": {},", Str(site.site.api));
    let _ = writeln!(out, "      \"why\": {},", Str(site.site.reason));
    let _ = writeln!(out, "      \"in_scope\": {in_scope},");
    let _ = writeln!(out, "      \"scope\": {scope},");
    let _ = writeln!(out, "      \"frames\": {frames},");
    let _ = writeln!(out, "      \"count\": {},", waited.count);
    let _ = writeln!(out, "      \"total_ns\": {},", waited.total.as_nanos());
    let _ = writeln!(out, "      \"max_ns\": {}", waited.max.as_nanos());
    out.push_str("    }");
    out
}

/// A scope: `no_sync` with its fn's path (found among the frames), or `forbid` where it opened.
fn scope_json(scope: WaitScope, frames: &[Frame]) -> String {
    let (kind, function) = match scope.function {
        Some(name) => {
            let file = scope.location.map(|at| at.file());
            ("no_sync", Some(fn_path(name, file, frames)))
        }
        None => ("forbid", None),
    };
    let function = function.map_or_else(|| String::from("null"), |f| Str(&f).to_string());
    let (file, line) = match scope.location {
        Some(at) => (Str(at.file()).to_string(), at.line().to_string()),
        None => (String::from("null"), String::from("null")),
    };
    format!(
        "{{ \"kind\": {}, \"function\": {function}, \"file\": {file}, \"line\": {line} }}",
        Str(kind)
    )
}

/// The path of the `#[no_sync]` fn `name` written in `file` (the attribute knows only its name
/// and place): the innermost frame whose last segment is `name` and whose file is `file`, else
/// the innermost whose last segment is `name` (frames without line tables), else `name` alone.
/// A library's method of the same name below the scope (`Device::synchronize` called from a
/// `#[no_sync] fn synchronize`) is in another file.
fn fn_path(name: &str, file: Option<&str>, frames: &[Frame]) -> String {
    let named = || {
        frames
            .iter()
            .filter(|f| trimmed(&f.function).rsplit("::").next() == Some(name))
    };
    let in_file = |f: &&Frame| match (f.file.as_deref(), file) {
        (Some(at), Some(file)) => same_file(at, file),
        _ => false,
    };
    let found = named().find(in_file).or_else(|| {
        let lines = named().any(|f| f.file.is_some()) && file.is_some();
        named().find(|_| !lines)
    });
    found.map_or_else(|| name.to_owned(), |f| trimmed(&f.function).to_owned())
}

/// Whether a frame's file (absolute, or from the working directory: `./tests/a.rs`) and a
/// scope's (as rustc was given it: `runtime/tests/a.rs`) are one: one ends with the other.
fn same_file(frame: &str, scope: &str) -> bool {
    let clean = |p: &str| -> std::path::PathBuf {
        let keep = |c: &std::path::Component<'_>| !matches!(c, std::path::Component::CurDir);
        Path::new(p).components().filter(keep).collect()
    };
    let (a, b) = (clean(frame), clean(scope));
    a.ends_with(&b) || (a.is_relative() && b.ends_with(&a))
}

/// A demangled path without its trailing closure segments, hash or generic arguments.
fn trimmed(path: &str) -> &str {
    let mut path = path;
    loop {
        let Some((head, last)) = path.rsplit_once("::") else {
            return path;
        };
        let hash = last.len() == 17
            && last.starts_with('h')
            && last[1..].bytes().all(|b| b.is_ascii_hexdigit());
        if hash || last.starts_with('{') || last.starts_with('<') {
            path = head;
        } else {
            return path;
        }
    }
}

fn frame_json(frame: &Frame, place: &dyn Fn(&str) -> Option<String>) -> String {
    let (file, line) = match frame.file.as_deref().and_then(place) {
        Some(file) => (Str(&file).to_string(), frame.line),
        None => (String::from("null"), None),
    };
    format!(
        "{{ \"function\": {}, \"file\": {file}, \"line\": {} }}",
        Str(&frame.function),
        line.map_or_else(|| String::from("null"), |l| l.to_string())
    )
}

/// A JSON string: quoted, with `"`, `\` and the control characters escaped (RFC 8259).
struct Str<'a>(&'a str);

impl std::fmt::Display for Str<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::with_capacity(self.0.len() + 2);
        super::trace::string(&mut out, self.0);
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests;
