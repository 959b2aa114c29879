//! Lowering ahead changes no output: every fixture is analysed with the members' files
//! lowered while `cargo metadata` runs (`Options::lower_ahead`, `NOSYNC_LINT_AHEAD=1`) and
//! without, both without the caches (so that cargo runs, and nothing else is reused), and
//! the diagnostics (codes, messages, spans, hops, notes) must be identical.

use nosync_tests::fixture;

#[test]
fn lowering_ahead_changes_no_diagnostic() {
    let fixtures = fixture::selected().unwrap_or_else(|e| panic!("{e}"));
    let mut compared = 0;
    let mut failed = Vec::new();
    for f in fixtures {
        let args = f.lint_args().unwrap_or_else(|e| panic!("{e}"));
        let mut opts = nosync_lint::options_from_args(&args).unwrap_or_else(|e| panic!("{e}"));
        opts.workspace.cache = false;
        opts.lower_ahead = false;
        let plain = nosync_lint::analyze(&opts, &mut |_| {}).map(|a| a.diagnostics);
        opts.lower_ahead = true;
        let ahead = nosync_lint::analyze(&opts, &mut |_| {}).map(|a| a.diagnostics);
        let (plain, ahead) = (
            plain.map_err(|e| format!("{e:#}")),
            ahead.map_err(|e| format!("{e:#}")),
        );
        if plain != ahead {
            failed.push(format!("{}:\nplain: {plain:#?}\nahead: {ahead:#?}", f.name));
        }
        compared += 1;
    }
    assert!(
        failed.is_empty(),
        "ahead != plain:\n{}",
        failed.join("\n\n")
    );
    assert!(compared > 0, "no fixture compared");
}
