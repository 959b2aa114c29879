//! What an `internal-error` does to the run: exit status 2, with the findings printed. (The
//! safety nets that make one are tested beside them, in the core's unit tests, the one build
//! with fault-injection points.)

use super::*;
use crate::diagnostics::{Code, Diagnostic, Span};

#[test]
fn an_internal_error_makes_the_exit_status_2_with_the_findings_printed() {
    let mut a = analyze_src(
        &with_prelude("#[no_sync] pub fn step(s: &CudaStream) { s.synchronize(); }\n"),
        &Config::default(),
        SourceMap::new(Path::new(ROOT)),
    );
    let span = Span::start_of(PathBuf::from("src/lib.rs"));
    let internal = Diagnostic::new(Code::InternalError, "internal error while walking", span);
    a.diagnostics.push(internal);
    let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["sync-in-no-sync", "internal-error"]);
    let workspace = crate::report::Context {
        manifest_path: Path::new("Cargo.toml"),
        metadata: None,
        srcroot: None,
    };
    let report = |d| crate::report::Report::new(d, &a.sources, &workspace);
    assert_eq!(crate::cli::exit_status(&report(&a.diagnostics), true), 2);
    assert_eq!(
        crate::cli::exit_status(&report(&a.diagnostics[..1]), true),
        1
    );
    assert_eq!(
        crate::cli::exit_status(&report(&a.diagnostics[..1]), false),
        2
    );
    assert_eq!(crate::cli::exit_status(&report(&[]), true), 0);
}
