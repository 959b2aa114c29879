//! Types the way a reader sees them: std's functions and methods (slices from raw parts,
//! indexing, iterators, closures, `Option`/`Result` combinators), `for` patterns,
//! overloaded operators and their `Output`; and no guess into another crate's method where
//! std owns the name.

use crate::test_support::*;

/// A candle-style tensor crate: `to_vec1` blocks, the ops do not; `Div<f64>` and
/// `Add<B: Borrow<Tensor>>` for `Tensor` and `&Tensor`, `Neg`, `Index<usize>`.
const TENSOR: &str = "use nosync::{no_sync, synchronizes};\n\
pub struct Error;\n\
pub type Result<T> = std::result::Result<T, Error>;\n\
pub struct Tensor;\n\
impl Tensor {\n\
\x20   pub fn relu(&self) -> Result<Tensor> { Ok(Tensor) }\n\
\x20   pub fn affine(&self, m: f64, a: f64) -> Result<Tensor> { Ok(Tensor) }\n\
\x20   pub fn add(&self, rhs: &Tensor) -> Result<Tensor> { Ok(Tensor) }\n\
\x20   #[synchronizes(reason = \"copies to the host\")]\n\
\x20   pub fn to_vec1(&self) -> Result<Vec<f32>> { Ok(Vec::new()) }\n\
}\n\
impl std::ops::Div<f64> for &Tensor {\n\
\x20   type Output = Result<Tensor>;\n\
\x20   fn div(self, rhs: f64) -> Self::Output { self.affine(1. / rhs, 0.) }\n\
}\n\
impl<B: std::borrow::Borrow<Tensor>> std::ops::Add<B> for Tensor {\n\
\x20   type Output = Result<Tensor>;\n\
\x20   fn add(self, rhs: B) -> Self::Output { Tensor::add(&self, rhs.borrow()) }\n\
}\n\
impl<B: std::borrow::Borrow<Tensor>> std::ops::Add<B> for &Tensor {\n\
\x20   type Output = Result<Tensor>;\n\
\x20   fn add(self, rhs: B) -> Self::Output { Tensor::add(self, rhs.borrow()) }\n\
}\n\
impl std::ops::Add<f64> for &Tensor {\n\
\x20   type Output = Result<Tensor>;\n\
\x20   fn add(self, rhs: f64) -> Self::Output { self.to_vec1()?; Ok(Tensor) }\n\
}\n";

/// The findings of [`TENSOR`] followed by `app` (line 28 on), one line each.
fn tensor_findings(app: &str) -> Vec<String> {
    findings(&format!("{TENSOR}{app}"))
}

#[test]
fn an_operator_keeps_its_output_type() {
    let out = chains(&format!(
        "{TENSOR}#[no_sync] pub fn sample(logits: &Tensor, t: f64) -> Result<Vec<f32>> {{\n\
         \x20   let scaled = (logits / t)?;\n\
         \x20   scaled.to_vec1()\n\
         }}\n"
    ));
    insta::assert_snapshot!(out, @"
    30:12 sync-in-no-sync: `sample` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`
      = this call reaches `t::Tensor::to_vec1`, which blocks the host
      t::sample -> t::Tensor::to_vec1 (Blocks, inferred, Deny)
      via 30:12 t::sample (inferred)
    ");
}

#[test]
fn an_operator_reaches_the_impl_for_its_operand_types() {
    // `&a + &b` is the generic `Add<B> for &Tensor` (no sync); `&a + 1f64` is `Add<f64>`;
    // `f64 * Tensor` is the analysed impl, `f64 * f64` (or an unsuffixed literal) std's.
    let src = "#[no_sync] pub fn tensors(a: &Tensor, b: &Tensor) -> Result<Tensor> { a + b }\n\
               #[no_sync] pub fn scalar(a: &Tensor) -> Result<Tensor> { a + 1f64 }\n\
               #[no_sync] pub fn neg(a: f64) -> f64 { -a * 2. }\n\
               impl std::ops::Mul<Tensor> for f64 { type Output = Tensor; fn mul(self, t: Tensor) -> Tensor { t.to_vec1(); t } }\n\
               #[no_sync] pub fn numbers(a: f64, b: f64) -> f64 { a * b * 2. }\n\
               #[no_sync] pub fn scaled(a: f64, t: Tensor) -> Tensor { a * t }\n";
    assert_eq!(
        tensor_findings(src),
        [
            "29:60 sync-in-no-sync: `scalar` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "33:59 sync-in-no-sync: `scaled` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
        ]
    );
}

#[test]
fn an_unsuffixed_number_beside_a_tensor_has_rustcs_fallback_type() {
    // `2.0 * t` is `impl Mul<Tensor> for f64`; `a + 1.0` is `Add<f64>`; between numbers a
    // literal is std's arithmetic.
    let src = "impl std::ops::Mul<Tensor> for f64 { type Output = Tensor; fn mul(self, t: Tensor) -> Tensor { t.to_vec1(); t } }\n\
               #[no_sync] pub fn scaled(t: Tensor) -> Tensor { 2.0 * t }\n\
               #[no_sync] pub fn shifted(a: &Tensor) -> Result<Tensor> { a + 1.0 }\n\
               #[no_sync] pub fn numbers(x: f32) -> f32 { 2.0 * x + 1. }\n";
    assert_eq!(
        tensor_findings(src),
        [
            "29:53 sync-in-no-sync: `scaled` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "30:61 sync-in-no-sync: `shifted` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
        ]
    );
}

#[test]
fn loops_and_iterators_type_their_items() {
    let src = "#[no_sync] pub fn refs(ts: Vec<&Tensor>) { for t in ts { t.to_vec1(); } }\n\
               #[no_sync] pub fn iter(ts: &[Tensor]) { for (i, t) in ts.iter().enumerate() { t.to_vec1(); } }\n\
               #[no_sync] pub fn map(ts: &[Tensor]) -> Result<Vec<Vec<f32>>> { ts.iter().map(|t| t.to_vec1()).collect() }\n\
               #[no_sync] pub fn values(m: &std::collections::HashMap<String, Tensor>) { m.values().for_each(|t| { t.to_vec1(); }); }\n\
               #[no_sync] pub fn fold(ts: &[Tensor]) -> usize { ts.iter().fold(0, |n, t| n + t.to_vec1().map_or(0, |v| v.len())) }\n\
               #[no_sync] pub fn index(ts: &Vec<Tensor>) { ts[0].to_vec1(); }\n\
               #[no_sync] pub fn option(t: Option<&Tensor>) { t.map(|t| t.to_vec1()); }\n";
    assert_eq!(
        tensor_findings(src),
        [
            "28:60 sync-in-no-sync: `refs` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "29:81 sync-in-no-sync: `iter` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "30:85 sync-in-no-sync: `map` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "31:103 sync-in-no-sync: `values` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "32:81 sync-in-no-sync: `fold` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "33:51 sync-in-no-sync: `index` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "34:60 sync-in-no-sync: `option` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
        ]
    );
}

#[test]
fn collected_items_keep_their_type() {
    let src = "#[no_sync] pub fn turbofish(ts: &[Tensor]) -> Result<()> { let v = ts.iter().map(|t| t.relu()).collect::<Result<Vec<_>>>()?; v[0].to_vec1()?; Ok(()) }\n\
               #[no_sync] pub fn annotated(ts: &[Tensor]) { let v: Vec<_> = ts.iter().collect(); for t in v { t.to_vec1(); } }\n";
    assert_eq!(
        tensor_findings(src),
        [
            "28:131 sync-in-no-sync: `turbofish` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "29:98 sync-in-no-sync: `annotated` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
        ]
    );
}

#[test]
fn a_fn_item_handed_on_is_called() {
    let src =
        "#[no_sync] pub fn handed(ts: &[Tensor]) { let _ = ts.iter().map(Tensor::to_vec1); }\n";
    insta::assert_snapshot!(chains(&format!("{TENSOR}{src}")), @"
    28:61 sync-in-no-sync: `handed` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`
      = this call reaches `t::Tensor::to_vec1`, which blocks the host
      t::handed -> t::Tensor::to_vec1 (Blocks, inferred, Deny)
      via 28:61 t::handed (inferred)
    ");
}

#[test]
fn a_closure_handed_to_a_crate_not_analysed_is_called() {
    let src =
        "#[no_sync] pub fn submit(t: &Tensor) { other::submit_blocking(move || t.to_vec1()); }\n";
    insta::assert_snapshot!(chains(&format!("{TENSOR}{src}")), @"
    28:73 sync-in-no-sync: `submit` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`
      = this call reaches `t::Tensor::to_vec1`, which blocks the host
      t::submit -> t::Tensor::to_vec1 (Blocks, exact, Deny)
      via 28:73 t::submit (exact)
    ");
}

/// A crate whose `Slice` trait has a provided `to_vec` that reaches a blocking call (as
/// `ug::Slice::to_vec` does), beside code calling std's `to_vec` on slices.
const SLICE_TRAIT: &str = "use nosync::{no_sync, synchronizes};\n\
pub trait Slice { fn len(&self) -> usize; fn to_vec(&self) -> Vec<f32> { copy_to_host(); Vec::new() } }\n\
#[synchronizes(reason = \"copies to the host\")] fn copy_to_host() {}\n";

#[test]
fn std_s_slice_methods_are_never_guessed_into_another_crate() {
    let src = format!(
        "{SLICE_TRAIT}#[no_sync] pub fn raw(p: *const f32, n: usize) -> Vec<f32> {{ unsafe {{ std::slice::from_raw_parts(p, n) }}.to_vec() }}\n\
         #[no_sync] pub fn range(lhs: &[f32], a: usize, b: usize) -> Vec<f32> {{ lhs[a..b].to_vec() }}\n\
         #[no_sync] pub fn unknown(x: other::Thing) -> Vec<f32> {{ x.to_vec() }}\n\
         #[no_sync] pub fn unknown_index(x: other::Thing) -> Vec<f32> {{ x.data()[1..].to_vec() }}\n"
    );
    insta::assert_snapshot!(check(&src), @"
    6:60 unresolved-call-in-no-sync: `unknown` is #[no_sync] but reaches a call the lint cannot follow: method `to_vec` on a value of unknown type
      = not followed by the static analysis
    7:66 unresolved-call-in-no-sync: `unknown_index` is #[no_sync] but reaches a call the lint cannot follow: method `data` on a value of unknown type
      = not followed by the static analysis
    7:78 unresolved-call-in-no-sync: `unknown_index` is #[no_sync] but reaches a call the lint cannot follow: method `to_vec` on a value of unknown type
      = not followed by the static analysis
      stats: 1 edges, 3 unresolved
    ");
}

#[test]
fn a_closure_handed_to_an_analysed_fn_has_the_parameters_of_its_fn_bound() {
    // As cubecl's `ComputeClient::sync` hands `|server| server.sync(..)` to
    // `DeviceHandle::submit_blocking<T: FnOnce(&mut S) -> R>`.
    let src = "pub struct Server;\n\
               impl Server { #[synchronizes] pub fn sync(&mut self) {} }\n\
               pub struct DeviceHandle<S> { s: S }\n\
               impl<S> DeviceHandle<S> {\n\
               \x20   pub fn submit_blocking<R, T: FnOnce(&mut S) -> R>(&self, task: T) -> R { loop {} }\n\
               }\n\
               pub fn with_tensor(f: impl Fn(&Tensor)) {}\n\
               pub struct Client { device: DeviceHandle<Server> }\n\
               #[no_sync] pub fn client_sync(c: &Client) { c.device.submit_blocking(|server| server.sync()); }\n\
               #[no_sync] pub fn read(t: &Tensor) { with_tensor(|x| { x.to_vec1(); }); }\n";
    assert_eq!(
        tensor_findings(src),
        [
            "36:86 sync-in-no-sync: `client_sync` is #[no_sync] but reaches a host-blocking call: `Server::sync`",
            "37:58 sync-in-no-sync: `read` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`"
        ]
    );
}

#[test]
fn a_lock_crates_guard_derefs_to_the_value_it_guards() {
    let src = "use parking_lot::{RwLock, RwLockReadGuard};\n\
               pub struct Holder { inner: std::sync::Arc<RwLock<Tensor>>, m: spin::mutex::Mutex<Tensor> }\n\
               impl Holder { pub fn borrow(&self) -> RwLockReadGuard<'_, Tensor> { self.inner.read() } }\n\
               #[no_sync] pub fn guard(h: &Holder) { h.borrow().to_vec1(); }\n\
               #[no_sync] pub fn locked(h: &Holder) { h.inner.write().to_vec1(); }\n\
               #[no_sync] pub fn tried(h: &Holder) { h.m.try_lock().unwrap().to_vec1(); }\n\
               #[no_sync] pub fn whole(h: &Holder) -> usize { h.inner.read().relu().map_or(0, |_| 1) }\n";
    assert_eq!(
        tensor_findings(src),
        [
            "31:50 sync-in-no-sync: `guard` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "32:56 sync-in-no-sync: `locked` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
            "33:63 sync-in-no-sync: `tried` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec1`",
        ]
    );
}
