//! The configuration stage: each problem is a `config-error` at the exact place it is
//! written (the key, the value, the path), with a "did you mean" where a near name exists,
//! and the valid entries are still read.

use crate::diagnostics::{Code, Diagnostic};
use crate::test_support::*;

/// One line per diagnostic: `LINE:COL-LINE:COL code: message`, then `  = label`, then each
/// note (`  = help: ..` for a help).
fn show(diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        let p = &d.primary;
        out += &format!(
            "{}:{}-{}:{} {}: {}\n",
            p.line_start,
            p.column_start,
            p.line_end,
            p.column_end,
            d.code.as_str(),
            d.message
        );
        if let Some(label) = &d.label {
            out += &format!("  = {label}\n");
        }
        for n in &d.notes {
            out += &format!("  = {}\n", n.message);
        }
    }
    out
}

/// The configuration errors of `text`, read as a `--config` file.
fn config_errors(text: &str) -> String {
    let (_, _, diags) = config_from_toml(text);
    assert!(
        diags.iter().all(|d| d.code == Code::ConfigError),
        "{diags:?}"
    );
    show(&diags)
}

#[test]
fn a_mistyped_key_is_reported_at_its_line_not_at_a_comment_that_mentions_it() {
    let text = "# `sinkz` below is a typo of `sinks`\n\
                roots = [\"t::hot\"]\n\
                # sinkz = [\"t::old\"] was the old list\n\
                sinkz = [\"t::Dev::flush\"]\n";
    assert_eq!(
        config_errors(text),
        "4:1-4:6 config-error: unknown key `sinkz` (expected one of: roots, sinks, allow, models, levels)\n\
         \x20 = help: did you mean `sinks`?\n"
    );
    let (cfg, _, _) = config_from_toml(text);
    let roots: Vec<&str> = cfg.roots.iter().map(|e| e.path.text.as_str()).collect();
    assert_eq!(roots, ["t::hot"], "the valid keys are still read");
}

#[test]
fn a_root_that_matches_nothing_is_located_at_its_value_not_in_a_comment() {
    let text = "# \"t::nope\" was renamed to t::hot\n\
                roots = [\"t::hot\", \"t::nope\"]\n";
    let (cfg, sources, diags) = config_from_toml(text);
    assert_eq!(show(&diags), "");
    let a = analyze_src("pub fn hot() {}\n", &cfg, sources);
    let errors: Vec<Diagnostic> = a
        .diagnostics
        .into_iter()
        .filter(|d| d.code == Code::ConfigError)
        .collect();
    assert_eq!(
        show(&errors),
        "2:20-2:29 config-error: `t::nope` matches no function of the analysed crates\n"
    );
}

#[test]
fn values_of_the_wrong_type_are_located_errors_and_the_rest_is_read() {
    let text = "roots = \"t::hot\"\n\
                sinks = [1, \"t::Dev::flush\", { path = 2 }, { reason = \"r\" }]\n\
                allow = [\"t::ok\"]\n\
                levels = { \"sync-in-no-sync\" = 3 }\n";
    assert_eq!(
        config_errors(text),
        "1:9-1:17 config-error: `roots` must be a list of Rust paths\n\
         \x20 = invalid type: string \"t::hot\", expected a sequence\n\
         2:10-2:11 config-error: `sinks` entries must be strings or tables\n\
         \x20 = invalid type: integer `1`, expected a Rust path or a table `{ path = \"..\", reason = \"..\" }`\n\
         2:39-2:40 config-error: the `path` of an entry of `sinks` must be a string\n\
         \x20 = invalid type: integer `2`, expected a string\n\
         2:44-2:60 config-error: an entry of `sinks` has no `path`\n\
         4:32-4:33 config-error: the level of `sync-in-no-sync` must be a string: `allow`, `warn` or `deny`\n\
         \x20 = invalid type: integer `3`, expected a string\n"
    );
    let (cfg, _, _) = config_from_toml(text);
    let paths = |entries: &[crate::config::Entry]| -> Vec<String> {
        entries.iter().map(|e| e.path.text.clone()).collect()
    };
    assert_eq!(
        (paths(&cfg.roots), paths(&cfg.sinks), paths(&cfg.allow)),
        (
            vec![],
            vec!["t::Dev::flush".to_owned()],
            vec!["t::ok".to_owned()]
        )
    );
    assert!(cfg.levels.is_empty());
}

#[test]
fn an_unknown_level_name_gets_the_closest_level_at_the_value() {
    assert_eq!(
        config_errors("levels = { \"sync-in-no-sync\" = \"deni\", \"parse-error\" = \"loud\" }\n"),
        "1:32-1:38 config-error: unknown level `deni` for `sync-in-no-sync`; expected `allow`, `warn` or `deny`\n\
         \x20 = in this `levels` entry\n\
         \x20 = help: did you mean `deny`?\n\
         1:56-1:62 config-error: unknown level `loud` for `parse-error`; expected `allow`, `warn` or `deny`\n\
         \x20 = in this `levels` entry\n"
    );
}

#[test]
fn an_unknown_code_in_levels_gets_the_closest_code_at_the_key() {
    let known: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    let text =
        "levels = { \"possible-sync-in-no-sync\" = \"deny\", \"sync-in-nosync\" = \"warn\" }\n";
    assert_eq!(
        config_errors(text),
        format!(
            "1:49-1:65 config-error: unknown diagnostic code `sync-in-nosync`; known codes: warnings, {}\n\
             \x20 = in this `levels` entry\n\
             \x20 = help: did you mean `sync-in-no-sync`?\n",
            known.join(", ")
        )
    );
    let (cfg, sources, _) = config_from_toml(text);
    let levels: Vec<_> = cfg
        .levels
        .iter()
        .map(|l| {
            let at = sources.span(l.span);
            (
                l.target.to_string(),
                l.level,
                at.line_start,
                at.column_start,
            )
        })
        .collect();
    assert_eq!(
        levels,
        [(
            "possible-sync-in-no-sync".to_owned(),
            crate::diagnostics::Level::Deny,
            1,
            12
        )]
    );
}

#[test]
fn malformed_paths_are_errors_of_the_config_stage_at_the_path() {
    let text = "roots = [\"t::f(\", \"<[t::Dev] as t::X>::m\"]\n\
                sinks = [{ path = \"t::\", reason = \"waits\" }]\n";
    assert_eq!(
        config_errors(text),
        "1:10-1:17 config-error: `t::f(` is not a Rust path\n\
         1:19-1:42 config-error: `<[t::Dev] as t::X>::m` has an unsupported qualified type\n\
         2:19-2:24 config-error: `t::` is not a Rust path\n"
    );
    let (cfg, _, _) = config_from_toml(text);
    assert!(cfg.roots.is_empty() && cfg.sinks.is_empty());
}

#[test]
fn an_unknown_key_in_an_entry_table_gets_the_closest_key() {
    assert_eq!(
        config_errors("sinks = [{ path = \"t::f\", reasn = \"copies\" }]\n"),
        "1:27-1:32 config-error: unknown key `reasn` in an entry of `sinks` (expected one of: path, reason)\n\
         \x20 = help: did you mean `reason`?\n"
    );
}

#[test]
fn invalid_toml_is_one_located_error() {
    assert_eq!(
        config_errors("roots = [\"t::hot\"]\nsinks = [\n"),
        "2:10-2:10 config-error: invalid TOML: unclosed array, expected `]`\n"
    );
}

#[test]
fn a_config_file_reads_its_nosync_lint_table_when_it_has_one() {
    let text = "[other-tool]\nroots = 3\n\n[nosync-lint]\nroots = [\"t::hot\"]\nrots = []\n";
    assert_eq!(
        config_errors(text),
        "6:1-6:5 config-error: unknown key `rots` (expected one of: roots, sinks, allow, models, levels)\n\
         \x20 = help: did you mean `roots`?\n"
    );
    assert_eq!(
        config_errors("nosync-lint = 3\n"),
        "1:1-1:12 config-error: the nosync-lint configuration must be a table\n"
    );
}

/// A root named by a path its item does not have (a trait `pub(crate)` in a submodule,
/// named where the crate uses it) gets the item's real path as its "did you mean".
#[test]
fn a_root_by_a_path_its_item_lacks_gets_the_real_path() {
    let text = "roots = [\"t::ops::Kernel::forward\", \"<t::X as t::Kernel>::forward\"]\n";
    let (cfg, sources, _) = config_from_toml(text);
    let src = "pub mod ops { pub(crate) mod utilities { pub trait Kernel { fn forward(&self); } } }\n\
               pub struct X;\n\
               impl ops::utilities::Kernel for X { fn forward(&self) {} }\n";
    let a = analyze_src(src, &cfg, sources);
    let helps: Vec<String> = (a.diagnostics.iter())
        .filter(|d| d.code == Code::ConfigError)
        .flat_map(|d| d.notes.iter().map(|n| n.message.clone()))
        .collect();
    assert_eq!(
        helps,
        [
            "help: did you mean `t::ops::utilities::Kernel::forward`?",
            "help: did you mean `t::ops::utilities::Kernel::forward`?"
        ]
    );
}
