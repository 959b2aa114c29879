//! The repository's reference page of diagnostics (`docs/diagnostics.md`) is generated from
//! the lint's registry of codes and their `--explain` text: this test fails when the page and
//! the registry disagree, and `NOSYNC_UPDATE_DOCS=1` writes the page anew.

use std::path::Path;

#[test]
fn the_diagnostics_page_is_the_registry() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/diagnostics.md");
    let expected = nosync_lint_core::diagnostics::explain::reference();
    if std::env::var_os("NOSYNC_UPDATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::write(&page, &expected).expect("docs/diagnostics.md written");
    }
    let written = std::fs::read_to_string(&page).unwrap_or_default();
    assert!(
        written == expected,
        "docs/diagnostics.md is not what the registry and lint/core/docs/diagnostics.md make; \
         run `NOSYNC_UPDATE_DOCS=1 cargo test -p cargo-nosync-lint --test docs` and commit the page"
    );
    for code in nosync_lint_core::diagnostics::Code::ALL {
        let section = nosync_lint_core::diagnostics::explain::explain(*code).unwrap_or_default();
        assert!(
            !section.is_empty() && written.contains(section),
            "{}",
            code.as_str()
        );
    }
}
