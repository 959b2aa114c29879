//! "Did you mean" on mistyped configuration keys and configured paths.

use crate::test_support::*;

fn helps(diags: &[crate::diagnostics::Diagnostic]) -> Vec<String> {
    diags.iter().flat_map(help).collect()
}

fn help(d: &crate::diagnostics::Diagnostic) -> Option<String> {
    d.notes
        .iter()
        .find_map(|n| n.help_text().map(str::to_owned))
}

#[test]
fn a_mistyped_config_key_gets_the_closest_key() {
    let (_, _, diags) = config_from_toml("root = [\"t::step\"]\n");
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(
        diags[0].message,
        "unknown key `root` (expected one of: roots, sinks, allow, models, levels)"
    );
    assert_eq!(helps(&diags), ["did you mean `roots`?"]);
}

#[test]
fn a_mistyped_root_gets_the_closest_function() {
    let (cfg, sources, _) = config_from_toml("roots = [\"t::Trainer::stpe\", \"t::elsewhere\"]\n");
    let src = "pub struct Trainer;\nimpl Trainer { pub fn step(&self) {} }\n";
    let a = analyze_src(src, &cfg, sources);
    let errors: Vec<&crate::diagnostics::Diagnostic> = a
        .diagnostics
        .iter()
        .filter(|d| d.code == crate::diagnostics::Code::ConfigError)
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(
        help(errors[0]).as_deref(),
        Some("did you mean `t::Trainer::step`?")
    );
    // Nothing is close to `t::elsewhere`: no guess.
    assert_eq!(help(errors[1]), None);
}
