//! The library models (`known::models`): argument-aware models of analysed crates (candle's
//! `Tensor::to_device`), the cudarc table by the cudarc version of each crate, and models
//! from the configuration.

use crate::config::Config;
use crate::test_support::*;

/// A small `candle_core` whose `to_device` has a CUDA-to-CPU arm that waits, and ops that
/// call `to_device(self.device())` as candle's scalar ops and indexing do.
const CANDLE: &str = "use cudarc::driver::CudaStream;\n\
pub enum Device { Cpu, Cuda(CudaStream) }\n\
pub struct Tensor { dev: Device, s: CudaStream }\n\
impl Tensor {\n\
    pub fn device(&self) -> &Device { &self.dev }\n\
    pub fn to_device(&self, device: &Device) -> Tensor {\n\
        match device { Device::Cpu => { self.s.synchronize(); } _ => {} }\n\
        Tensor { dev: Device::Cpu, s: self.s.clone() }\n\
    }\n\
    pub fn clamp(&self, lo: f32) -> Tensor { self.to_device(self.device()) }\n\
    pub fn i(&self, ix: &Tensor) -> Tensor { ix.to_device(self.device()) }\n\
}\n";

const APP: &str = "use nosync::no_sync;\nuse candle_core::{Device, Tensor};\n\
#[no_sync] fn clamp(t: &Tensor) -> Tensor { t.clamp(0.0) }\n\
#[no_sync] fn index(t: &Tensor, ix: &Tensor) -> Tensor { t.i(ix) }\n\
#[no_sync] fn own(t: &Tensor, u: &Tensor) -> Tensor { t.to_device(u.device()) }\n\
#[no_sync] fn to_cpu(t: &Tensor) -> Tensor { t.to_device(&Device::Cpu) }\n\
#[no_sync] fn to_cpu_path(t: &Tensor) -> Tensor { t.to_device(&candle_core::Device::Cpu) }\n\
#[no_sync] fn unknown(t: &Tensor, d: &Device) -> Tensor { t.to_device(d) }\n\
#[no_sync] fn path_cpu(t: &Tensor) -> Tensor { Tensor::to_device(t, &Device::Cpu) }\n\
#[no_sync] fn path_own(t: &Tensor) -> Tensor { Tensor::to_device(t, t.device()) }\n";

#[test]
fn to_device_waits_toward_the_cpu_only() {
    let files = [("app/src/lib.rs", APP), ("candle/src/lib.rs", CANDLE)];
    let crates = [
        ("app", "app/src/lib.rs"),
        ("candle_core", "candle/src/lib.rs"),
    ];
    insta::assert_snapshot!(chains_tree(&files, &crates, &[(0, 1)]), @"
    app/src/lib.rs:6:48 sync-in-no-sync: `to_cpu` is #[no_sync] but reaches a host-blocking call: `Tensor::to_device`
      = this call reaches `candle_core::Tensor::to_device`, which blocks the host
      app::to_cpu -> candle_core::Tensor::to_device (Blocks, exact, Deny)
      via 6:48 app::to_cpu (exact)
    app/src/lib.rs:7:53 sync-in-no-sync: `to_cpu_path` is #[no_sync] but reaches a host-blocking call: `Tensor::to_device`
      = this call reaches `candle_core::Tensor::to_device`, which blocks the host
      app::to_cpu_path -> candle_core::Tensor::to_device (Blocks, exact, Deny)
      via 7:53 app::to_cpu_path (exact)
    app/src/lib.rs:8:61 possible-sync-in-no-sync: `unknown` is #[no_sync] but reaches a host-blocking call: `Tensor::to_device`
      = this call reaches `candle_core::Tensor::to_device`, which blocks the host
      app::unknown -> candle_core::Tensor::to_device (Blocks, exact, Warn)
      via 8:61 app::unknown (exact)
    app/src/lib.rs:9:48 sync-in-no-sync: `path_cpu` is #[no_sync] but reaches a host-blocking call: `Tensor::to_device`
      = this call reaches `candle_core::Tensor::to_device`, which blocks the host
      app::path_cpu -> candle_core::Tensor::to_device (Blocks, exact, Deny)
      via 9:48 app::path_cpu (exact)
    ");
}

#[test]
fn a_crate_that_is_not_candle_keeps_its_to_device() {
    // The model is `candle_core`'s: the same code in another crate is walked as written.
    let files = [
        ("app/src/lib.rs", &*APP.replace("candle_core", "mycandle")),
        ("candle/src/lib.rs", CANDLE),
    ];
    let crates = [("app", "app/src/lib.rs"), ("mycandle", "candle/src/lib.rs")];
    let out = chains_tree(&files, &crates, &[(0, 1)]);
    let roots: Vec<&str> = out.lines().filter(|l| l.contains(" -> ")).collect();
    insta::assert_snapshot!(roots.join("\n"), @"
    app::clamp -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
    app::index -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
    app::own -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
    app::to_cpu -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
    app::to_cpu_path -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
    app::unknown -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
    app::path_cpu -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
    app::path_own -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
    ");
}

/// Analyses `src` as crate `t` depending on cudarc `version`.
fn chains_on_cudarc(src: &str, version: &str) -> String {
    let mut fx = Fixture::src(src);
    fx.crates[0].versions.cudarc = Some(version.to_owned());
    let a = analyze_fixture(&fx, &Config::default(), fx.sources());
    chains_of(&a, false)
}

#[test]
fn each_crate_gets_its_cudarc_versions_table() {
    let src = with_prelude(
        "#[no_sync] fn read(s: &CudaStream, d: &u8) -> Vec<f32> { s.clone_dtoh(d).unwrap() }\n",
    );
    // `clone_dtoh` is not in cudarc 0.17 (its models say so): a call of it there is none of
    // the table's; in 0.19 it is a device-to-host copy.
    assert_eq!(chains_on_cudarc(&src, "0.17.8"), "");
    insta::assert_snapshot!(chains_on_cudarc(&src, "0.19.10"), @"
    4:60 sync-in-no-sync: `read` is #[no_sync] but reaches a host-blocking call: `CudaStream::clone_dtoh`
      = this call reaches `cudarc::driver::CudaStream::clone_dtoh`, which blocks the host
      t::read -> cudarc::driver::CudaStream::clone_dtoh (Blocks, exact, Deny)
      via 4:60 t::read (exact)
    ");
}

/// cudarc before 0.16 (candle 0.6 to 0.8): `CudaSlice::device()` is an `Arc<CudaDevice>`
/// whose `*_sync_*` copies wait, and from 0.11 raw calls go through `sys::lib()`.
#[test]
fn the_cuda_device_era_is_typed_and_modelled() {
    let src = "use nosync::no_sync;\nuse cudarc::driver::{sys, CudaSlice};\n\
         #[no_sync] fn read(s: &CudaSlice<f32>) -> Vec<f32> { let dev = s.device(); dev.dtoh_sync_copy(s).unwrap() }\n\
         #[no_sync] fn upload(s: &CudaSlice<f32>, h: &[f32]) { s.device().htod_sync_copy(h).unwrap(); }\n\
         #[no_sync] fn wait(ev: sys::CUevent) { unsafe { sys::lib().cuEventSynchronize(ev) }; }\n\
         #[no_sync] fn queue(s: &CudaSlice<f32>) { let _ = s.device().htod_copy(vec![0f32]); }\n";
    insta::assert_snapshot!(chains_on_cudarc(src, "0.13.9"), @"
    3:80 sync-in-no-sync: `read` is #[no_sync] but reaches a host-blocking call: `CudaDevice::dtoh_sync_copy`
      = this call reaches `cudarc::driver::CudaDevice::dtoh_sync_copy`, which blocks the host
      t::read -> cudarc::driver::CudaDevice::dtoh_sync_copy (Blocks, inferred, Deny)
      via 3:80 t::read (inferred)
    4:66 sync-in-no-sync: `upload` is #[no_sync] but reaches a host-blocking call: `CudaDevice::htod_sync_copy`
      = this call reaches `cudarc::driver::CudaDevice::htod_sync_copy`, which blocks the host
      t::upload -> cudarc::driver::CudaDevice::htod_sync_copy (Blocks, exact, Deny)
      via 4:66 t::upload (exact)
    5:60 sync-in-no-sync: `wait` is #[no_sync] but reaches a host-blocking call: `Lib::cuEventSynchronize`
      = this call reaches `cudarc::driver::Lib::cuEventSynchronize`, which blocks the host
      t::wait -> cudarc::driver::Lib::cuEventSynchronize (Blocks, inferred, Deny)
      via 5:60 t::wait (inferred)
    ");
    // In cudarc 0.16 `CudaDevice` is gone: its models do not hold (`sys::lib()` is typed in
    // every version).
    insta::assert_snapshot!(chains_on_cudarc(src, "0.16.6"), @"
    5:60 sync-in-no-sync: `wait` is #[no_sync] but reaches a host-blocking call: `Lib::cuEventSynchronize`
      = this call reaches `cudarc::driver::Lib::cuEventSynchronize`, which blocks the host
      t::wait -> cudarc::driver::Lib::cuEventSynchronize (Blocks, inferred, Deny)
      via 5:60 t::wait (inferred)
    ");
}

/// A type's `Drop` is modelled per cudarc version: a pinned buffer waits for its event from
/// 0.16, only frees in 0.13 to 0.15, and is no cudarc type before.
#[test]
fn a_drop_is_the_one_of_the_crate_s_cudarc() {
    let src = "use nosync::no_sync;\nuse cudarc::driver::PinnedHostSlice;\n\
         #[no_sync] fn f(p: PinnedHostSlice<f32>) { let _q = p; }\n";
    // The notes of the findings: the sink's reason says which model was taken.
    let reasons = |v: &str| -> Vec<String> {
        let mut fx = Fixture::src(src);
        fx.crates[0].versions.cudarc = Some(v.to_owned());
        let a = analyze_fixture(&fx, &Config::default(), fx.sources());
        let found = a.diagnostics().iter().filter(|d| d.finding.is_some());
        found
            .flat_map(|d| d.notes.iter().map(|n| n.message.clone()))
            .collect()
    };
    assert_eq!(reasons("0.12.1"), Vec::<String>::new());
    insta::assert_debug_snapshot!(reasons("0.13.9"), @r#"
    [
        "`t::f` drops `_q`, which calls `cudarc::driver::PinnedHostSlice::drop` (inferred)",
        "`cudarc::driver::PinnedHostSlice::drop` blocks the host: frees page-locked memory with `cuMemFreeHost`, which waits for the device",
        "help: if this wait is intended, wrap the call in `nosync::allow_sync(|| ..)` or mark the called function #[allow_sync]",
    ]
    "#);
    insta::assert_debug_snapshot!(reasons("0.19.10"), @r#"
    [
        "`t::f` drops `_q`, which calls `cudarc::driver::PinnedHostSlice::drop` (inferred)",
        "`cudarc::driver::PinnedHostSlice::drop` blocks the host: waits for the buffer's last use (`cuEventSynchronize`), then frees page-locked memory with `cuMemFreeHost`, which waits for the device",
        "help: if this wait is intended, wrap the call in `nosync::allow_sync(|| ..)` or mark the called function #[allow_sync]",
    ]
    "#);
}

#[test]
fn the_raw_layer_cubecl_calls_is_modelled() {
    let src = with_prelude(
        "use cudarc::driver::result;\n\
         #[no_sync] fn free(p: u64) { unsafe { result::free_sync(p) }; }\n\
         #[no_sync] fn read(dst: &mut [u8], p: u64, s: u64) { unsafe { result::memcpy_dtoh_async(dst, p, s) }; }\n\
         #[no_sync] fn write(p: u64, src: &[u8], s: u64) { unsafe { result::memcpy_htod_async(p, src, s) }; }\n\
         #[no_sync] fn load(img: u64) { unsafe { result::module::load_data(img) }; }\n\
         #[no_sync] fn limit(ctx: &Arc<CudaContext>) { ctx.set_limit(0, 1).unwrap(); }\n\
         #[no_sync] fn to_vec(s: cudarc::driver::CudaSlice<f32>) -> Vec<f32> { Vec::try_from(s).unwrap() }\n\
         #[no_sync] fn not_a_slice(s: [f32; 2]) -> Vec<f32> { Vec::try_from(s).unwrap() }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    5:39 sync-in-no-sync: `free` is #[no_sync] but reaches a host-blocking call: `result::free_sync`
      = this call reaches `cudarc::driver::result::free_sync`, which blocks the host
      t::free -> cudarc::driver::result::free_sync (Blocks, exact, Deny)
      via 5:39 t::free (exact)
    6:63 sync-in-no-sync: `read` is #[no_sync] but reaches a host-blocking call: `result::memcpy_dtoh_async`
      = this call reaches `cudarc::driver::result::memcpy_dtoh_async`, which blocks the host
      t::read -> cudarc::driver::result::memcpy_dtoh_async (Blocks, exact, Deny)
      via 6:63 t::read (exact)
    7:60 possible-sync-in-no-sync: `write` is #[no_sync] but reaches a call that may block the host: `result::memcpy_htod_async`
      = this call reaches `cudarc::driver::result::memcpy_htod_async`, which may block the host
      t::write -> cudarc::driver::result::memcpy_htod_async (May, exact, Warn)
      via 7:60 t::write (exact)
    8:41 setup-sync-in-no-sync: `load` is #[no_sync] but reaches one-time setup that blocks the host: `module::load_data`
      = this call reaches `cudarc::driver::result::module::load_data`, which blocks the host while it sets up
      t::load -> cudarc::driver::result::module::load_data (Setup, exact, Warn)
      via 8:41 t::load (exact)
    9:51 setup-sync-in-no-sync: `limit` is #[no_sync] but reaches one-time setup that blocks the host: `CudaContext::set_limit`
      = this call reaches `cudarc::driver::CudaContext::set_limit`, which blocks the host while it sets up
      t::limit -> cudarc::driver::CudaContext::set_limit (Setup, exact, Warn)
      via 9:51 t::limit (exact)
    10:71 sync-in-no-sync: `to_vec` is #[no_sync] but reaches a host-blocking call: `Vec::try_from`
      = this call reaches `std::Vec::try_from`, which blocks the host
      t::to_vec -> std::Vec::try_from (Blocks, exact, Deny)
      via 10:71 t::to_vec (exact)
    ");
}

#[test]
fn load_function_is_no_wait_and_module_drops_are() {
    let src = with_prelude(
        "use cudarc::driver::CudaModule;\n\
         #[no_sync] fn get(m: &Arc<CudaModule>) { m.load_function(\"k\").unwrap(); }\n\
         #[no_sync] fn unload(m: CudaModule) { drop(m); }\n\
         #[no_sync] fn blas(b: cudarc::cublas::CudaBlas) { drop(b); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    6:39 sync-in-no-sync: `unload` is #[no_sync] but reaches a host-blocking call: `CudaModule::drop`
      = `m` is dropped here, and its `Drop` (`cudarc::driver::CudaModule::drop`) blocks the host
      t::unload -> cudarc::driver::CudaModule::drop (Blocks, exact, Deny)
      via 6:39 t::unload (exact)
    7:51 sync-in-no-sync: `blas` is #[no_sync] but reaches a host-blocking call: `CudaBlas::drop`
      = `b` is dropped here, and its `Drop` (`cudarc::cublas::CudaBlas::drop`) blocks the host
      t::blas -> cudarc::cublas::CudaBlas::drop (Blocks, exact, Deny)
      via 7:51 t::blas (exact)
    ");
}

#[test]
fn a_configured_model_decides_calls_of_an_analysed_fn() {
    let (cfg, sources, diags) = config_from_toml(
        "[[models]]\npath = \"t::Buf::read\"\nreason = \"reads the buffer back\"\n\
         when = { arg = 0, blocks = [{ memory = \"pageable\" }], never = [{ memory = \"pinned\" }] }\n\
         [[models]]\npath = \"t::Buf::nothing\"\n",
    );
    let src = with_prelude(
        "use cudarc::driver::PinnedHostSlice;\n\
         pub struct Buf;\n\
         impl Buf { pub fn read<D>(&self, dst: &mut D) {} }\n\
         #[no_sync] fn pageable(b: &Buf, v: &mut Vec<f32>) { b.read(v) }\n\
         #[no_sync] fn pinned(b: &Buf, p: &mut PinnedHostSlice<f32>) { b.read(p) }\n\
         #[no_sync] fn unknown<D>(b: &Buf, d: &mut D) { b.read(d) }\n",
    );
    let a = analyze_src(&src, &cfg, sources);
    let rendered: Vec<String> = diags.iter().map(|d| render_one(d, false, false)).collect();
    insta::assert_snapshot!(rendered.concat() + &chains_of(&a, false), @"
    6:8 config-error: `t::Buf::nothing` matches no function of the analysed crates (a model's path starts with a crate name)
    7:55 sync-in-no-sync: `pageable` is #[no_sync] but reaches a host-blocking call: `Buf::read`
      = this call reaches `t::Buf::read`, which blocks the host
      t::pageable -> t::Buf::read (Blocks, exact, Deny)
      via 7:55 t::pageable (exact)
    9:50 possible-sync-in-no-sync: `unknown` is #[no_sync] but reaches a host-blocking call: `Buf::read`
      = this call reaches `t::Buf::read`, which blocks the host
      t::unknown -> t::Buf::read (Blocks, exact, Warn)
      via 9:50 t::unknown (exact)
    ");
}

/// A small `cubecl_common` whose `DeviceHandle` runs tasks on a runner thread: `submit`
/// queues one and returns, `submit_blocking` waits for its result.
const CUBECL_COMMON: &str = "pub mod device_handle {\n\
    pub struct DeviceHandle<S> { s: S }\n\
    impl<S> DeviceHandle<S> {\n\
        pub fn submit<T: FnOnce(&mut S) + Send + 'static>(&self, task: T) {}\n\
        pub fn submit_blocking<R, T: FnOnce(&mut S) -> R>(&self, task: T) -> R { loop {} }\n\
    }\n\
}\n";

#[test]
fn a_closure_handed_to_a_detached_fn_is_not_the_callers() {
    let app = "use nosync::no_sync;\nuse cubecl_common::device_handle::DeviceHandle;\n\
        use cudarc::driver::CudaStream;\n\
        fn flush(s: &mut CudaStream) { s.synchronize().unwrap(); }\n\
        #[no_sync] fn queued(h: &DeviceHandle<CudaStream>) { h.submit(|s| { s.synchronize().unwrap(); }); }\n\
        #[no_sync] fn queued_fn(h: &DeviceHandle<CudaStream>) { h.submit(flush); DeviceHandle::submit(h, flush); }\n\
        #[no_sync] fn waited(h: &DeviceHandle<CudaStream>) { h.submit_blocking(|s| s.synchronize().unwrap()); }\n";
    let files = [("app/src/lib.rs", app), ("cc/src/lib.rs", CUBECL_COMMON)];
    let crates = [
        ("app", "app/src/lib.rs"),
        ("cubecl_common", "cc/src/lib.rs"),
    ];
    // Only `submit_blocking`'s closure runs while the caller waits.
    insta::assert_snapshot!(chains_tree(&files, &crates, &[(0, 1)]), @"
    app/src/lib.rs:7:78 sync-in-no-sync: `waited` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      app::waited -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 7:78 app::waited (inferred)
    ");
}

/// A small `candle_core` whose `maximum` matches on what its operand's `TensorOrScalar` impl
/// returns: the scalar arm uploads (and waits).
const CANDLE_SCALAR: &str = "pub struct Tensor { s: cudarc::driver::CudaStream }\n\
pub mod scalar {\n\
    use super::Tensor;\n\
    pub enum TensorScalar { Tensor(Tensor), Scalar(Tensor) }\n\
    pub trait TensorOrScalar { fn to_tensor_scalar(self) -> Result<TensorScalar, ()>; }\n\
    impl TensorOrScalar for &Tensor {\n\
        fn to_tensor_scalar(self) -> Result<TensorScalar, ()> { Ok(TensorScalar::Tensor(self.clone())) }\n\
    }\n\
    impl TensorOrScalar for f32 {\n\
        fn to_tensor_scalar(self) -> Result<TensorScalar, ()> { Ok(TensorScalar::Scalar(Tensor::new(self))) }\n\
    }\n\
}\n\
impl Tensor {\n\
    pub fn new(v: f32) -> Tensor { Tensor::from_f32(v) }\n\
    pub fn upload(&self) -> Tensor { self.s.synchronize(); self.clone() }\n\
    pub fn maximum<T: scalar::TensorOrScalar>(&self, rhs: T) -> Result<Tensor, ()> {\n\
        let rhs = match rhs.to_tensor_scalar()? {\n\
            scalar::TensorScalar::Tensor(rhs) => rhs,\n\
            scalar::TensorScalar::Scalar(rhs) => rhs.upload(),\n\
        };\n\
        Ok(rhs)\n\
    }\n\
}\n";

const APP_SCALAR: &str = "use nosync::no_sync;\nuse candle_core::Tensor;\n\
#[no_sync] fn by_tensor(t: &Tensor, u: &Tensor) { t.maximum(u); }\n\
#[no_sync] fn by_scalar(t: &Tensor) { t.maximum(0f32); }\n";

/// candle's `impl TensorOrScalar for &Tensor` returns `TensorScalar::Tensor` (the models'
/// `[[variant]]`): `maximum(&tensor)` does not walk the scalar arm, `maximum(0f32)` does; in a
/// crate that is not candle both do.
#[test]
fn a_tensor_operand_does_not_take_the_scalar_arm() {
    let run = |name: &str| {
        let app = APP_SCALAR.replace("candle_core", name);
        let files = [
            ("app/src/lib.rs", &*app),
            ("candle/src/lib.rs", CANDLE_SCALAR),
        ];
        let crates = [("app", "app/src/lib.rs"), (name, "candle/src/lib.rs")];
        chains_tree(&files, &crates, &[(0, 1)])
    };
    insta::assert_snapshot!(run("candle_core"), @"
    app/src/lib.rs:4:41 sync-in-no-sync: `by_scalar` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      app::by_scalar -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 4:41 app::by_scalar (exact)
      via 19:42 candle_core::Tensor::maximum (inferred)
      via 15:41 candle_core::Tensor::upload (inferred)
    ");
    insta::assert_snapshot!(run("mycandle"), @"
    app/src/lib.rs:3:53 sync-in-no-sync: `by_tensor` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      app::by_tensor -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 3:53 app::by_tensor (exact)
      via 19:42 mycandle::Tensor::maximum (inferred)
      via 15:41 mycandle::Tensor::upload (inferred)
    app/src/lib.rs:4:41 sync-in-no-sync: `by_scalar` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      app::by_scalar -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 4:41 app::by_scalar (exact)
      via 19:42 mycandle::Tensor::maximum (inferred)
      via 15:41 mycandle::Tensor::upload (inferred)
    ");
}

/// A `follow` model is no sink: a call goes on into the fn's body, and the wait the body
/// reaches ends the chain, a possible finding with the model's reason as its note.
#[test]
fn a_follow_model_ends_the_chain_at_the_wait_in_its_body() {
    let (cfg, _, diags) = config_from_toml(
        "models = [{ path = \"t::Tensor::show\", kind = \"may\", follow = true, \
         reason = \"reads a small tensor's values\" }]\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let src = with_prelude(
        "pub struct Tensor;\n\
         impl Tensor {\n\
             #[synchronizes] fn to_vec(&self) {}\n\
             fn show(&self) { self.to_vec() }\n\
         }\n\
         #[no_sync] fn step(t: &Tensor) { t.show() }\n",
    );
    insta::assert_snapshot!(check_with(&src, &cfg), @"
    9:36 possible-sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec`
      = this call reaches `t::Tensor::to_vec`, which blocks the host
      via 9:36 t::step (exact)
      via 7:23 t::Tensor::show (exact)
      stats: 2 edges, 0 unresolved
    ");
}
