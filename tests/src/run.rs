//! The lint run in process, as the binary runs it: `nosync_lint::run` with captured
//! output, for the tests that compare two runs of one fixture.

use std::ffi::OsString;

/// `nosync_lint::run` on `args`: the exit code, stdout, and stderr without cargo's status
/// lines and without the lines `skip` picks.
pub fn lint(args: &[String], skip: impl Fn(&str) -> bool) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let args = args.iter().map(OsString::from);
    let exit = nosync_lint::run(args, &mut out, &mut err, nosync_lint::Terminal::No);
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    let stderr: String = text(err)
        .lines()
        .filter(|l| !nosync_lint_workspace::is_status_line(l) && !skip(l))
        .flat_map(|l| [l, "\n"])
        .collect();
    (exit, text(out), stderr)
}

/// `args` followed by `extra`.
pub fn with(args: &[String], extra: &[&str]) -> Vec<String> {
    let mut a = args.to_vec();
    a.extend(extra.iter().map(|s| (*s).to_owned()));
    a
}
