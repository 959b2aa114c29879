//! Lazy fn bodies change no output: every fixture is analysed with its fn bodies lowered
//! only when the call graph reads them (the default) and with every body lowered with its
//! file (`Options::pipeline.eager_bodies`), and the diagnostics (codes, messages, spans, hops,
//! notes) must be identical.

use nosync_tests::fixture;

/// A syntax error inside a fn body drops the whole file when bodies are lowered eagerly
/// (syn parses the file at once), and only that body when they are lazy: that fixture
/// shows the difference on purpose (its snapshot is the lazy output).
const DIFFERS_BY_DESIGN: &[&str] = &["syntax-error"];

#[test]
fn lazy_bodies_change_no_diagnostic() {
    let fixtures = fixture::selected().unwrap_or_else(|e| panic!("{e}"));
    let mut compared = 0;
    let mut failed = Vec::new();
    for f in fixtures {
        if DIFFERS_BY_DESIGN.contains(&f.name.as_str()) {
            continue;
        }
        let args = f.lint_args().unwrap_or_else(|e| panic!("{e}"));
        let mut opts = nosync_lint::options_from_args(&args).unwrap_or_else(|e| panic!("{e}"));
        let lazy = nosync_lint::analyze(&opts, &mut |_| {}).map(|a| a.diagnostics);
        opts.pipeline.eager_bodies = true;
        let eager = nosync_lint::analyze(&opts, &mut |_| {}).map(|a| a.diagnostics);
        let (lazy, eager) = (
            lazy.map_err(|e| format!("{e:#}")),
            eager.map_err(|e| format!("{e:#}")),
        );
        if lazy != eager {
            failed.push(format!("{}:\nlazy: {lazy:#?}\neager: {eager:#?}", f.name));
        }
        compared += 1;
    }
    assert!(failed.is_empty(), "lazy != eager:\n{}", failed.join("\n\n"));
    assert!(compared > 0, "no fixture compared");
}
