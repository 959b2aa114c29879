//! Target `baseline`: the input is a `--baseline` file, applied to the findings of the fixed
//! crate of the `config` target (analysed once per process); the stale entries it produces
//! point into the file and must render like every other diagnostic.

use crate::configs::CONFIG_CRATE;
use crate::{check_span, spec};
use nosync_lint::{Analysis, Baseline, analyze_crates, render_human};
use nosync_lint_core::config::Config;
use nosync_lint_core::diagnostics::Code;
use nosync_lint_core::source::{MemLoader, SourceMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const ROOT: &str = "/mem/t";
/// The baseline as the command line names it (relative to the workspace root).
const BASELINE: &str = "nosync-baseline.toml";

fn fixed_analysis() -> &'static Analysis {
    static ANALYSIS: OnceLock<Analysis> = OnceLock::new();
    ANALYSIS.get_or_init(|| {
        let root = PathBuf::from(ROOT);
        let lib = root.join("src/lib.rs");
        let files = MemLoader::new().with(&lib, CONFIG_CRATE);
        let sources = SourceMap::new(&root);
        let a = analyze_crates(
            root,
            vec![spec("t", lib)],
            &Config::default(),
            &files,
            sources,
        );
        assert!(
            a.diagnostics.iter().any(|d| d.finding.is_some()),
            "the fixed crate has findings for a baseline to match"
        );
        a
    })
}

/// Parses `text` as a baseline and applies it to the fixed crate's diagnostics.
pub fn baseline_file(text: &str) {
    let a = fixed_analysis();
    // A baseline that does not parse is a tool error (exit status 2), not a crash.
    let Ok(baseline) = Baseline::parse(Path::new(BASELINE), text.to_owned()) else {
        return;
    };
    let mut file = SourceMap::new(Path::new(ROOT));
    file.add(Path::new(ROOT).join(BASELINE), text.to_owned());
    let applied = baseline.apply(a.diagnostics.clone());
    let findings = a.diagnostics.iter().filter(|d| d.finding.is_some()).count();
    assert!(applied.suppressed <= findings, "more suppressed than found");
    for d in &applied.diagnostics {
        let sources = if d.code == Code::StaleBaselineEntry {
            &file
        } else {
            &a.sources
        };
        if let Err(e) = check_span(sources, &d.primary) {
            panic!("{e} in `{}: {}`", d.code.as_str(), d.message);
        }
        let rendered = render_human(d, sources, false);
        assert!(!rendered.is_empty(), "empty rendering of `{}`", d.message);
    }
}
