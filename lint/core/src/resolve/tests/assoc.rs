//! Calls on values whose type is an associated type of a type parameter (`R::Server`,
//! `<R as Runtime>::Server`, `Self::Server`, bindings `R: Runtime<Server = S>`): to
//! the impl of the concrete type's associated type where the parameter is known, else
//! to every impl of the associated type's bound, said in the hop.

use crate::test_support::*;

/// A cubecl-style runtime: a server trait with a syncing impl (`Cuda`) and a clean one
/// (`Cpu`), a runtime trait naming its server, and a generic client.
const RT: &str = "use nosync::{no_sync, synchronizes};\n\
    pub trait Server { fn read(&mut self) -> u32; fn flush(&mut self); }\n\
    pub struct Cuda;\n\
    impl Server for Cuda { fn read(&mut self) -> u32 { wait() } fn flush(&mut self) {} }\n\
    pub struct Cpu;\n\
    impl Server for Cpu { fn read(&mut self) -> u32 { 0 } fn flush(&mut self) {} }\n\
    #[synchronizes] fn wait() -> u32 { 0 }\n\
    pub trait Runtime { type Server: Server; }\n\
    pub struct CudaRt;\nimpl Runtime for CudaRt { type Server = Cuda; }\n\
    pub struct CpuRt;\nimpl Runtime for CpuRt { type Server = Cpu; }\n\
    pub struct Client<R: Runtime> { server: R::Server }\n";

/// Each case's source (after `prefix`) and its chains (see [`chains`]), one after another.
fn cases(prefix: &str, cases: &[&str]) -> String {
    let mut out = String::new();
    for case in cases {
        out += &format!("{case}:\n{}", chains(&format!("{prefix}{case}\n")));
    }
    out
}

#[test]
fn a_field_of_an_associated_type_dispatches_to_every_impl_of_its_bound() {
    let src = format!(
        "{RT}impl<R: Runtime> Client<R> {{\n\
            #[no_sync] pub fn read(&mut self) -> u32 {{ self.server.read() }}\n\
            #[no_sync] pub fn flush(&mut self) {{ self.server.flush() }}\n\
        }}\n"
    );
    insta::assert_snapshot!(chains(&src), @"
    15:56 sync-in-no-sync: `read` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::Client::read -> t::wait (Blocks, inferred, Deny)
      via 15:56 t::Client::read (inferred)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    ");
}

#[test]
fn a_known_parameter_resolves_the_associated_type_through_its_impl() {
    let out = cases(
        RT,
        &[
            "#[no_sync] pub fn r(c: &mut Client<CpuRt>) -> u32 { c.server.read() }",
            "#[no_sync] pub fn r(c: &mut Client<CudaRt>) -> u32 { c.server.read() }",
        ],
    );
    // The field's type is derived (a field of a written type): inferred, and no dispatch.
    insta::assert_snapshot!(out, @"
    #[no_sync] pub fn r(c: &mut Client<CpuRt>) -> u32 { c.server.read() }:
    #[no_sync] pub fn r(c: &mut Client<CudaRt>) -> u32 { c.server.read() }:
    14:63 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 14:63 t::r (inferred)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    ");
}

#[test]
fn a_qualified_projection_of_a_parameter_dispatches_through_the_bound() {
    let out = cases(
        RT,
        &[
            "#[no_sync] pub fn r<R: Runtime>(s: &mut <R as Runtime>::Server) -> u32 { s.read() }",
            "#[no_sync] pub fn f<R: Runtime>(s: &mut <R as Runtime>::Server) { s.flush() }",
            "#[no_sync] pub fn r<R: Runtime>(s: &mut <CpuRt as Runtime>::Server) -> u32 { s.read() }",
        ],
    );
    insta::assert_snapshot!(out, @"
    #[no_sync] pub fn r<R: Runtime>(s: &mut <R as Runtime>::Server) -> u32 { s.read() }:
    14:76 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 14:76 t::r (inferred)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    #[no_sync] pub fn f<R: Runtime>(s: &mut <R as Runtime>::Server) { s.flush() }:
    #[no_sync] pub fn r<R: Runtime>(s: &mut <CpuRt as Runtime>::Server) -> u32 { s.read() }:
    ");
}

#[test]
fn a_binding_in_the_bound_names_the_associated_type() {
    let out = cases(
        RT,
        &[
            "#[no_sync] pub fn r<R: Runtime<Server = Cpu>>(s: &mut R::Server) -> u32 { s.read() }",
            "#[no_sync] pub fn r<R: Runtime<Server = Cuda>>(s: &mut R::Server) -> u32 { s.read() }",
            // Through a parameter bounded by another one.
            "#[no_sync] pub fn r<S: Server, R: Runtime<Server = S>>(s: &mut R::Server) -> u32 { s.read() }",
        ],
    );
    insta::assert_snapshot!(out, @"
    #[no_sync] pub fn r<R: Runtime<Server = Cpu>>(s: &mut R::Server) -> u32 { s.read() }:
    #[no_sync] pub fn r<R: Runtime<Server = Cuda>>(s: &mut R::Server) -> u32 { s.read() }:
    14:78 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, exact, Deny)
      via 14:78 t::r (exact)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    #[no_sync] pub fn r<S: Server, R: Runtime<Server = S>>(s: &mut R::Server) -> u32 { s.read() }:
    14:86 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 14:86 t::r (inferred)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    ");
}

/// cubecl's shape: the client holds a `DeviceContext<R::Server>` whose `lock()` returns
/// a guard that derefs to the server; the parameters flow through the generic impls.
const GUARD: &str = "pub struct Ctx<S> { s: S }\n\
    pub struct Guard<S> { s: S }\n\
    impl<S> Ctx<S> { pub fn lock(&self) -> Guard<S> { loop {} } }\n\
    impl<S> std::ops::Deref for Guard<S> { type Target = S; fn deref(&self) -> &S { &self.s } }\n\
    pub struct Locked<R: Runtime> { ctx: Ctx<R::Server> }\n";

#[test]
fn generic_returns_and_derefs_keep_the_associated_type() {
    let src = format!(
        "{RT}{GUARD}impl<R: Runtime> Locked<R> {{\n\
            #[no_sync] pub fn read(&self) -> u32 {{ let mut g = self.ctx.lock(); g.read() }}\n\
            #[no_sync] pub fn flush(&self) {{ self.ctx.lock().flush() }}\n\
        }}\n\
        #[no_sync] pub fn cpu(c: &Locked<CpuRt>) -> u32 {{ c.ctx.lock().read() }}\n\
        #[no_sync] pub fn cuda(c: &Locked<CudaRt>) -> u32 {{ c.ctx.lock().read() }}\n"
    );
    insta::assert_snapshot!(chains(&src), @"
    20:71 sync-in-no-sync: `read` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::Locked::read -> t::wait (Blocks, inferred, Deny)
      via 20:71 t::Locked::read (inferred)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    24:66 sync-in-no-sync: `cuda` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::cuda -> t::wait (Blocks, inferred, Deny)
      via 24:66 t::cuda (inferred)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    ");
}

#[test]
fn self_projections_in_a_trait_dispatch_through_the_declared_bound() {
    let src = format!(
        "{RT}pub trait Holder {{ type Server: Server; fn server(&mut self) -> &mut Self::Server; }}\n\
        #[no_sync] pub fn r<H: Holder>(h: &mut H) -> u32 {{ h.server().read() }}\n\
        pub struct Hc(Cpu);\n\
        impl Holder for Hc {{ type Server = Cpu; fn server(&mut self) -> &mut Cpu {{ &mut self.0 }} }}\n\
        #[no_sync] pub fn cpu(h: &mut Hc) -> u32 {{ h.server().read() }}\n"
    );
    insta::assert_snapshot!(chains(&src), @"
    15:63 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 15:63 t::r (inferred)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    ");
}

#[test]
fn a_generic_method_on_a_concrete_receiver_is_specialised_to_its_runtime() {
    let client = format!(
        "{RT}impl<R: Runtime> Client<R> {{\n\
            pub fn read(&mut self) -> u32 {{ self.server.read() }}\n\
        }}\n"
    );
    let out = cases(
        &client,
        &[
            "#[no_sync] pub fn r(c: &mut Client<CpuRt>) -> u32 { c.read() }",
            "#[no_sync] pub fn r(c: &mut Client<CudaRt>) -> u32 { c.read() }",
        ],
    );
    insta::assert_snapshot!(out, @"
    #[no_sync] pub fn r(c: &mut Client<CpuRt>) -> u32 { c.read() }:
    #[no_sync] pub fn r(c: &mut Client<CudaRt>) -> u32 { c.read() }:
    17:56 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 17:56 t::r (exact)
      via 15:45 t::Client::read (inferred)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    ");
}

#[test]
fn a_type_parameter_bound_by_an_argument_resolves_its_paths() {
    let by_path = format!("{RT}pub fn by_path<S: Server>(s: &mut S) -> u32 {{ S::read(s) }}\n");
    let out = cases(
        &by_path,
        &[
            "#[no_sync] pub fn r(s: &mut Cpu) -> u32 { by_path(s) }",
            "#[no_sync] pub fn r(s: &mut Cuda) -> u32 { by_path(s) }",
        ],
    );
    insta::assert_snapshot!(out, @"
    #[no_sync] pub fn r(s: &mut Cpu) -> u32 { by_path(s) }:
    #[no_sync] pub fn r(s: &mut Cuda) -> u32 { by_path(s) }:
    15:44 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, exact, Deny)
      via 15:44 t::r (exact)
      via 14:47 t::by_path (exact)
      via 4:52 <t::Cuda as t::Server>::read (exact)
    ");
}

/// candle's shape: an op trait with `const V: Self;`, a blanket impl of a mapping trait
/// for every op, whose provided `map` calls the blanket impl's `f`.
const OPS: &str = "use nosync::{no_sync, synchronizes};\n\
    pub trait UnaryOpT { const V: Self; const KERNEL: &'static str; }\n\
    pub trait Map1 { fn f(&self, x: u32) -> u32; fn map(&self, x: u32) -> u32 { self.f(x) } }\n\
    impl<U: UnaryOpT> Map1 for U { fn f(&self, x: u32) -> u32 { load(U::KERNEL) + x } }\n\
    pub struct Gather;\nimpl Map1 for Gather { fn f(&self, x: u32) -> u32 { wait() + x } }\n\
    pub struct Exp;\nimpl UnaryOpT for Exp { const V: Self = Exp; const KERNEL: &'static str = \"exp\"; }\n\
    #[synchronizes] fn load(_k: &str) -> u32 { 0 }\n\
    #[synchronizes] fn wait() -> u32 { 0 }\n\
    pub fn unary_impl<U: UnaryOpT>(x: u32) -> u32 { U::V.map(x) }\n";

#[test]
fn an_associated_const_of_a_type_parameter_reaches_the_blanket_impl() {
    // Through `<impl UnaryOpT as Map1>::map` to the blanket `f` (`load`), not to every
    // `Map1` impl (`Gather`'s `wait`); a concrete type has the blanket impls of its traits.
    let out = cases(
        OPS,
        &[
            "#[no_sync] pub fn exp(x: u32) -> u32 { unary_impl::<Exp>(x) }",
            "#[no_sync] pub fn exp(x: u32) -> u32 { Exp.map(x) }",
        ],
    );
    insta::assert_snapshot!(out, @"
    #[no_sync] pub fn exp(x: u32) -> u32 { unary_impl::<Exp>(x) }:
    12:40 sync-in-no-sync: `exp` is #[no_sync] but reaches a host-blocking call: `load`
      = this call reaches `t::load`, which blocks the host
      t::exp -> t::load (Blocks, exact, Deny)
      via 12:40 t::exp (exact)
      via 11:54 t::unary_impl (exact)
      via 3:82 <impl t::UnaryOpT as t::Map1>::map (exact)
      via 4:61 <t::<impl> as t::Map1>::f (exact)
    #[no_sync] pub fn exp(x: u32) -> u32 { Exp.map(x) }:
    12:44 sync-in-no-sync: `exp` is #[no_sync] but reaches a host-blocking call: `load`
      = this call reaches `t::load`, which blocks the host
      t::exp -> t::load (Blocks, exact, Deny)
      via 12:44 t::exp (exact)
      via 3:82 <t::Exp as t::Map1>::map (exact)
      via 4:61 <t::<impl> as t::Map1>::f (exact)
    ");
}

#[test]
fn a_detached_thread_closure_is_not_the_callers_code() {
    let src = "use nosync::{no_sync, synchronizes};\n\
        #[synchronizes] fn wait() {}\n\
        #[no_sync] pub fn gc() { std::thread::spawn(move || { wait(); }); }\n\
        #[no_sync] pub fn scoped() { std::thread::scope(|s| { wait(); }); }\n";
    insta::assert_snapshot!(chains(src), @"
    4:55 sync-in-no-sync: `scoped` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::scoped -> t::wait (Blocks, exact, Deny)
      via 4:55 t::scoped (exact)
    ");
}

/// An impl whose self type is a projection through an impl written before it
/// (`impl <A as Tr>::Out`) is resolved after that impl is added: impl headers are
/// resolved in parallel before any impl is added, and a header whose resolution read what
/// adding impls fills (here the impls' associated types) is resolved again in turn.
#[test]
fn an_impl_on_a_projection_sees_the_impls_written_before_it() {
    let src = "use nosync::{no_sync, synchronizes};\n\
        pub trait Tr { type Out; }\n\
        pub struct A;\npub struct B;\n\
        impl Tr for A { type Out = B; }\n\
        impl <A as Tr>::Out { pub fn m(&self) { wait() } }\n\
        #[synchronizes] fn wait() {}\n\
        #[no_sync] pub fn root(b: B) { b.m() }\n";
    insta::assert_snapshot!(chains(src), @"
    8:34 sync-in-no-sync: `root` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::root -> t::wait (Blocks, exact, Deny)
      via 8:34 t::root (exact)
      via 6:41 t::B::m (exact)
    ");
}
