//! Bounded work on hostile input: deeply nested and repeated configured paths.

use crate::test_support::*;

/// Guards against a stack overflow on configured paths: given to syn unchecked, 20 000
/// levels of `&` or `Vec<` overflowed the stack. They are located `config-error`s of the
/// config stage (which checks path syntax), and the analysis gets no entry for them.
#[test]
fn deeply_nested_configured_paths_are_config_errors() {
    let n = 20_000;
    let roots = [
        format!("<{}t::Dev as X>::m", "&".repeat(n)),
        // Short, but still deeper than any real path.
        format!("t::Dev::<{}u8{}>::m", "Vec<".repeat(100), ">".repeat(100)),
        format!("t::{}m", "a::".repeat(n)),
    ];
    let text = format!("roots = {roots:?}\n");
    let (cfg, sources, diags) = config_from_toml(&text);
    assert!(cfg.roots.is_empty(), "{:?}", cfg.roots);
    let a = analyze_src("pub struct Dev;\n", &cfg, sources);
    assert!(
        a.diagnostics
            .iter()
            .all(|d| d.code != crate::diagnostics::Code::ConfigError)
    );
    let errors: Vec<_> = diags
        .iter()
        .filter(|d| d.code == crate::diagnostics::Code::ConfigError)
        .collect();
    let tails: Vec<&str> = errors
        .iter()
        .map(|d| &d.message[d.message.len().saturating_sub(60)..])
        .collect();
    assert_eq!((errors.len(), diags.len()), (3, 3), "{tails:?}");
    assert!(
        errors
            .iter()
            .all(|d| d.primary.file.ends_with("nosync.toml"))
    );
    assert!(tails[0].contains("too long"), "{tails:?}");
    assert!(tails[1].contains("too deeply nested"), "{tails:?}");
    assert!(tails[2].contains("too long"), "{tails:?}");
}

/// Guards against quadratic output on repeated config entries: a path that matches nothing,
/// listed many times, is one `config-error` (with a note saying how many times), not one
/// per copy (each rendering the whole line).
#[test]
fn repeated_unmatched_config_paths_are_one_error() {
    let text = format!(
        "sinks = [{}]\nroots = [\"t::nope\"]\n",
        vec!["\"t::nope\""; 2000].join(", ")
    );
    let (cfg, sources, _) = config_from_toml(&text);
    let a = analyze_src("pub struct Dev;\n", &cfg, sources);
    let errors: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.code == crate::diagnostics::Code::ConfigError)
        .collect();
    // One for the 2 000 sinks, one for the root (another list: its own error).
    assert_eq!(errors.len(), 2, "{errors:?}");
    let noted: Vec<_> = errors.iter().flat_map(|d| &d.notes).collect();
    assert_eq!(noted.len(), 1, "{noted:?}");
    assert!(noted[0].message.contains("listed 2000 times"), "{noted:?}");
}
