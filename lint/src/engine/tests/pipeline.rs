//! What the engine adds to the stages' output: the configuration's levels, carried to the
//! level overrides, and the workspace stage's metadata, in the JSON output.

use super::*;

#[test]
fn config_levels_are_carried_from_the_config_stage_whatever_the_file_is_called() {
    let conf = Path::new("/mem/conf/lint.conf");
    let files = MemLoader::new().with(
        conf,
        "roots = []\nlevels = { \"sync-in-no-sync\" = \"warn\" }\n",
    );
    let (mut cfg, mut sources, mut diags) = (
        Config::default(),
        SourceMap::new(Path::new(ROOT)),
        Vec::new(),
    );
    crate::config::load_file(conf, &mut cfg, &files, &mut sources, &mut diags).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    let src = with_prelude("#[no_sync] fn r(s: &CudaStream) { s.synchronize(); }\n");
    let mut a = analyze_src(&src, &cfg, sources);
    let [(code, level, at)] = &a.config_levels[..] else {
        panic!("{:?}", a.config_levels)
    };
    assert_eq!(
        (code.to_string(), *level, at.line_start, at.column_start),
        (
            "sync-in-no-sync".to_owned(),
            crate::diagnostics::Level::Warn,
            2,
            12
        )
    );
    let out = crate::cli::finish(&Default::default(), &mut a, &mut Vec::new()).unwrap();
    let levels: Vec<_> = out.iter().map(|d| (d.code, d.level)).collect();
    assert_eq!(
        levels,
        [(
            crate::diagnostics::Code::SyncInNoSync,
            crate::diagnostics::Level::Warn
        )]
    );
}

#[test]
fn json_targets_come_from_the_workspace_stage_metadata() {
    let src = with_prelude("#[no_sync] fn r(s: &CudaStream) { s.synchronize(); }\n");
    let mut a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let metadata = serde_json::json!({
        "packages": [{
            "name": "t", "version": "0.1.0", "id": "t", "source": null, "dependencies": [],
            "license": null, "license_file": null, "description": null, "features": {},
            "manifest_path": "/mem/t/Cargo.toml", "edition": "2018",
            "targets": [{
                "name": "t", "kind": ["lib"], "crate_types": ["lib"], "src_path": "/mem/t/src/lib.rs",
                "edition": "2018", "doctest": false, "test": true, "doc": true
            }]
        }],
        "workspace_members": ["t"], "resolve": null, "workspace_root": "/mem/t",
        "target_directory": "/mem/t/target", "version": 1
    });
    a.metadata = Some(serde_json::from_value(metadata).unwrap());
    let workspace = crate::report::Context {
        manifest_path: Path::new("/mem/t/Cargo.toml"),
        metadata: a.metadata.as_ref(),
        srcroot: None,
    };
    let report = crate::report::Report::new(&a.diagnostics, &a.sources, &workspace);
    let format = crate::render::Format::Json {
        ansi: false,
        short: false,
    };
    let mut out = Vec::new();
    crate::render::render(format, &report, &mut out).unwrap();
    let first: serde_json::Value =
        serde_json::from_slice(out.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(first["target"]["edition"], "2018", "{first}");
    assert_eq!(first["target"]["doctest"], false, "{first}");
}
