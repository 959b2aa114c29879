//! Two versions of one crate in one graph: each crate's paths resolve into the version it
//! depends on, never into the other's files.

use crate::test_support::*;

const GPU_NEW: &str = "pub struct Tensor { s: cudarc::driver::CudaStream }\n\
impl Tensor {\n\
    pub fn read(&self) { self.s.synchronize(); }\n\
    pub fn new_only(&self) { self.s.synchronize(); }\n\
}\n\
pub fn free(t: &Tensor) { t.read() }\n";

const GPU_OLD: &str = "pub struct Tensor { s: cudarc::driver::CudaStream }\n\
impl Tensor {\n\
    pub fn read(&self) {}\n\
    pub fn old_only(&self) { self.s.synchronize(); }\n\
}\n\
pub fn free(t: &Tensor) { t.old_only() }\n";

const APP: &str = "use nosync::no_sync;\n\
#[no_sync] pub fn read(t: &gpu::Tensor) { t.read() }\n\
#[no_sync] pub fn free(t: &gpu::Tensor) { gpu::free(t) }\n\
#[no_sync] pub fn via_helper(t: &gpu::Tensor) { helper::step(t) }\n";

const HELPER: &str = "use nosync::no_sync;\n\
#[no_sync] pub fn read(t: &gpu::Tensor) { t.read() }\n\
#[no_sync] pub fn free(t: &gpu::Tensor) { gpu::free(t) }\n\
pub fn step(t: &gpu::Tensor) { t.old_only() }\n";

#[test]
fn each_crate_reads_the_version_it_depends_on() {
    let files = [
        ("app/src/lib.rs", APP),
        ("helper/src/lib.rs", HELPER),
        ("gpu-0.2/src/lib.rs", GPU_NEW),
        ("gpu-0.1/src/lib.rs", GPU_OLD),
    ];
    let crates = [
        ("app", "app/src/lib.rs"),
        ("helper", "helper/src/lib.rs"),
        ("gpu", "gpu-0.2/src/lib.rs"),
        ("gpu", "gpu-0.1/src/lib.rs"),
    ];
    let mut fixture = Fixture::tree(&files, &crates, &[(0, 1), (0, 2), (1, 3)]);
    for (k, version) in [(2, "0.2.0"), (3, "0.1.0")] {
        let c = &mut fixture.crates[k];
        c.origin.package_id = format!("gpu {version}");
        c.versions.own = Some(version.to_owned());
    }
    let sources = fixture.sources();
    let analysis = analyze_fixture(&fixture, &Default::default(), sources);
    // Each hop with the file its call is in: the helper's chains run through gpu-0.1 only.
    let hops: String = analysis
        .diagnostics()
        .iter()
        .filter_map(|d| d.finding.as_ref())
        .map(|f| {
            let files = f
                .chain
                .iter()
                .map(|h| h.call_site.file.display().to_string());
            format!("{}: {}\n", f.root, files.collect::<Vec<_>>().join(" > "))
        })
        .collect();
    insta::assert_snapshot!(hops, @"
    app::read: app/src/lib.rs > gpu-0.2/src/lib.rs
    app::free: app/src/lib.rs > gpu-0.2/src/lib.rs > gpu-0.2/src/lib.rs
    app::via_helper: app/src/lib.rs > helper/src/lib.rs > gpu-0.1/src/lib.rs
    helper::free: helper/src/lib.rs > gpu-0.1/src/lib.rs > gpu-0.1/src/lib.rs
    ");
    insta::assert_snapshot!(chains_of(&analysis, true), @"
    app/src/lib.rs:2:45 sync-in-no-sync: `read` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      app::read -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 2:45 app::read (exact)
      via 3:29 gpu::Tensor::read (inferred)
    app/src/lib.rs:3:43 sync-in-no-sync: `free` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      app::free -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 3:43 app::free (exact)
      via 6:29 gpu::free (exact)
      via 3:29 gpu::Tensor::read (inferred)
    app/src/lib.rs:4:49 sync-in-no-sync: `via_helper` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      app::via_helper -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 4:49 app::via_helper (exact)
      via 4:34 helper::step (exact)
      via 4:33 gpu@0.1.0::Tensor::old_only (inferred)
    helper/src/lib.rs:3:43 sync-in-no-sync: `free` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      helper::free -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 3:43 helper::free (exact)
      via 6:29 gpu@0.1.0::free (exact)
      via 4:33 gpu@0.1.0::Tensor::old_only (inferred)
    ");
}

const GPU_NEW_API: &str = "pub struct Tensor { s: cudarc::driver::CudaStream }\n\
impl Tensor {\n\
    pub fn read(&self) { self.s.synchronize(); }\n\
    pub fn dims(&self) {}\n\
}\n";

const GPU_OLD_API: &str = "pub struct Tensor { s: cudarc::driver::CudaStream }\n\
impl Tensor {\n\
    pub fn read(&self) {}\n\
    pub fn dims(&self) {}\n\
    pub fn old_only(&self) { self.s.synchronize(); }\n\
}\n";

/// A graph with gpu 0.1.0 (first) and 0.2.0, and `members` (crate name, source, the index of
/// the gpu it depends on) that are checked; the gpus are dependencies, not checked.
fn two_gpus(members: &[(&str, &str, usize)], config: &str) -> String {
    let roots: Vec<String> = members
        .iter()
        .map(|(name, ..)| format!("{name}/src/lib.rs"))
        .collect();
    let mut files = vec![
        ("gpu-0.1/src/lib.rs", GPU_OLD_API),
        ("gpu-0.2/src/lib.rs", GPU_NEW_API),
    ];
    let mut crates = vec![("gpu", "gpu-0.1/src/lib.rs"), ("gpu", "gpu-0.2/src/lib.rs")];
    let mut deps = Vec::new();
    for (i, (&(name, src, gpu), root)) in members.iter().zip(&roots).enumerate() {
        files.push((root, src));
        crates.push((name, root));
        deps.push((2 + i, gpu));
    }
    let mut fixture = Fixture::tree(&files, &crates, &deps);
    for (k, version) in [(0, "0.1.0"), (1, "0.2.0")] {
        let c = &mut fixture.crates[k];
        c.origin.package_id = format!("gpu {version}");
        c.versions.own = Some(version.to_owned());
        c.check_roots = false;
    }
    let (cfg, sources, diags) = config_from_toml(config);
    assert!(diags.is_empty(), "{diags:?}");
    render(&analyze_fixture(&fixture, &cfg, sources), true)
}

/// A config path in a crate the graph holds twice names the version the members depend on:
/// here 0.2.0, though 0.1.0 comes first. `gpu::Tensor::old_only`, only in 0.1.0, matches
/// nothing rather than the other version; `gpu@0.1.0::..` names it.
#[test]
fn a_config_path_names_the_version_the_members_depend_on() {
    let app = "pub fn dims(t: &gpu::Tensor) { t.dims() }\n";
    let config = "roots = [\"gpu::Tensor::read\", \"gpu::Tensor::old_only\", \
                  \"gpu@0.1.0::Tensor::old_only\", \"gpu@0.3.0::Tensor::read\", \"app::dims\"]\n\
                  sinks = [\"gpu::Tensor::dims\"]\n";
    insta::assert_snapshot!(two_gpus(&[("app", app, 1)], config), @"
    /mem/tree/app/src/lib.rs:1:34 sync-in-no-sync: `dims` is a configured no-sync root but reaches a host-blocking call: `Tensor::dims`
      = this call reaches `gpu::Tensor::dims`, which blocks the host
      via 1:34 app::dims (exact)
    /mem/tree/gpu-0.1/src/lib.rs:5:33 sync-in-no-sync: `old_only` is a configured no-sync root but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      via 5:33 gpu@0.1.0::Tensor::old_only (inferred)
    /mem/tree/gpu-0.2/src/lib.rs:3:29 sync-in-no-sync: `read` is a configured no-sync root but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      via 3:29 gpu::Tensor::read (inferred)
    nosync.toml:1:31 config-error: `gpu::Tensor::old_only` matches no function of the analysed crates
    nosync.toml:1:87 config-error: `gpu@0.3.0::Tensor::read` matches nothing: the analysed `gpu` is at 0.1.0 or 0.2.0, not 0.3.0
      stats: 3 edges, 0 unresolved
    ");
}

/// Where the members depend on both versions, a path names both: each version's fn is a
/// root (or a sink); none is silently picked.
#[test]
fn a_config_path_names_every_version_the_members_depend_on() {
    let a = "pub fn dims(t: &gpu::Tensor) { t.dims() }\n";
    let config = "roots = [\"gpu::Tensor::read\", \"gpu::Tensor::old_only\", \"a::dims\", \
                  \"b::dims\"]\nsinks = [\"gpu::Tensor::dims\"]\n";
    let members = [("a", a, 0), ("b", a, 1)];
    insta::assert_snapshot!(two_gpus(&members, config), @"
    /mem/tree/a/src/lib.rs:1:34 sync-in-no-sync: `dims` is a configured no-sync root but reaches a host-blocking call: `Tensor::dims`
      = this call reaches `gpu@0.1.0::Tensor::dims`, which blocks the host
      via 1:34 a::dims (exact)
    /mem/tree/b/src/lib.rs:1:34 sync-in-no-sync: `dims` is a configured no-sync root but reaches a host-blocking call: `Tensor::dims`
      = this call reaches `gpu::Tensor::dims`, which blocks the host
      via 1:34 b::dims (exact)
    /mem/tree/gpu-0.1/src/lib.rs:5:33 sync-in-no-sync: `old_only` is a configured no-sync root but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      via 5:33 gpu@0.1.0::Tensor::old_only (inferred)
    /mem/tree/gpu-0.2/src/lib.rs:3:29 sync-in-no-sync: `read` is a configured no-sync root but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      via 3:29 gpu::Tensor::read (inferred)
      stats: 4 edges, 0 unresolved
    ");
}
