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

/// A fn in a private module is suggested by the path a user can write: through the
/// public module nearest it that re-exports it (candle's `cuda_backend::device::CudaDevice`
/// is written `cuda_backend::CudaDevice`), not through `pub(crate)` re-exports.
#[test]
fn a_suggestion_goes_through_the_public_reexport() {
    let roots = [
        "t::cuda_backend::CudaDevice::get_or_load_fnc",
        "t::device::CudaDevice::get_or_load_func",
        "t::ops::sync_al",
        "t::hidden::helpr",
    ];
    let (cfg, sources, _) = config_from_toml(&format!("roots = {roots:?}\n"));
    let src = "pub mod cuda_backend {\n\
               \x20   mod device {\n\
               \x20       pub struct CudaDevice;\n\
               \x20       impl CudaDevice { pub fn get_or_load_func(&self) {} }\n\
               \x20   }\n\
               \x20   pub use device::CudaDevice;\n\
               }\n\
               pub use cuda_backend::CudaDevice;\n\
               pub use cuda_backend as cuda;\n\
               mod ops { pub fn sync_all() {} }\n\
               pub use ops::sync_all;\n\
               mod hidden { pub fn helper() {} }\n\
               pub(crate) use hidden::helper;\n";
    let a = analyze_src(src, &cfg, sources);
    let helps: Vec<Option<String>> = (a.diagnostics.iter())
        .filter(|d| d.code == crate::diagnostics::Code::ConfigError)
        .map(help)
        .collect();
    assert_eq!(
        helps,
        [
            Some("did you mean `t::cuda_backend::CudaDevice::get_or_load_func`?".to_owned()),
            Some("did you mean `t::cuda_backend::CudaDevice::get_or_load_func`?".to_owned()),
            Some("did you mean `t::sync_all`?".to_owned()),
            Some("did you mean `t::hidden::helper`?".to_owned()),
        ]
    );
}
