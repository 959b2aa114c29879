//! Calls on values whose type is an associated type of a type parameter (`R::Server`,
//! `<R as Runtime>::Server`, `Self::Server`, bindings `R: Runtime<Server = S>`): to
//! the impl of the concrete type's associated type where the parameter is known, else
//! to every impl of the associated type's bound, said in the hop.

use super::*;

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

fn findings(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.contains("sync-in-no-sync"))
        .collect()
}

fn notes(src: &str) -> Vec<String> {
    let a = analyze_src(src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    a.diagnostics
        .iter()
        .filter(|d| d.finding.is_some())
        .flat_map(|d| d.notes.iter().map(|n| n.message.clone()))
        .collect()
}

#[test]
fn a_field_of_an_associated_type_dispatches_to_every_impl_of_its_bound() {
    let src = format!(
        "{RT}impl<R: Runtime> Client<R> {{\n\
            #[no_sync] pub fn read(&mut self) -> u32 {{ self.server.read() }}\n\
            #[no_sync] pub fn flush(&mut self) {{ self.server.flush() }}\n\
        }}\n"
    );
    let out = check(&src);
    assert_eq!(
        findings(&out),
        ["15:56 sync-in-no-sync: `read` is #[no_sync] but reaches a host-blocking call: `wait`"],
        "{out}"
    );
    let notes = notes(&src);
    assert!(
        notes.iter().any(|n| n
            == "`t::Client::read` calls `<t::Cuda as t::Server>::read` (inferred, dispatched through `t::Server` to one of its 2 impls: the concrete type is not known here)"),
        "{notes:#?}"
    );
}

#[test]
fn a_known_parameter_resolves_the_associated_type_through_its_impl() {
    for (rt, want) in [("CpuRt", 0), ("CudaRt", 1)] {
        let src =
            format!("{RT}#[no_sync] pub fn r(c: &mut Client<{rt}>) -> u32 {{ c.server.read() }}\n");
        let out = check(&src);
        assert_eq!(findings(&out).len(), want, "{rt}: {out}");
    }
    let src =
        format!("{RT}#[no_sync] pub fn r(c: &mut Client<CudaRt>) -> u32 {{ c.server.read() }}\n");
    // The field's type is derived (a field of a written type): inferred, and no
    // dispatch to every impl.
    assert_eq!(
        notes(&src)[..2],
        [
            "`t::r` calls `<t::Cuda as t::Server>::read` (inferred)",
            "`<t::Cuda as t::Server>::read` calls `t::wait` (exact)"
        ]
    );
}

#[test]
fn a_qualified_projection_of_a_parameter_dispatches_through_the_bound() {
    let src = format!(
        "{RT}#[no_sync] pub fn r<R: Runtime>(s: &mut <R as Runtime>::Server) -> u32 {{ s.read() }}\n\
        #[no_sync] pub fn f<R: Runtime>(s: &mut <R as Runtime>::Server) {{ s.flush() }}\n"
    );
    let out = check(&src);
    assert_eq!(
        findings(&out),
        ["14:76 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`"],
        "{out}"
    );
}

#[test]
fn a_binding_in_the_bound_names_the_associated_type() {
    for (server, want) in [("Cpu", 0), ("Cuda", 1)] {
        let src = format!(
            "{RT}#[no_sync] pub fn r<R: Runtime<Server = {server}>>(s: &mut R::Server) -> u32 {{ s.read() }}\n"
        );
        let out = check(&src);
        assert_eq!(findings(&out).len(), want, "{server}: {out}");
    }
    // Through a parameter bound by another one: `R: Runtime<Server = S>`, `S: Server`.
    let src = format!(
        "{RT}#[no_sync] pub fn r<S: Server, R: Runtime<Server = S>>(s: &mut R::Server) -> u32 {{ s.read() }}\n"
    );
    assert_eq!(findings(&check(&src)).len(), 1);
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
    let out = check(&src);
    let found = findings(&out);
    assert_eq!(found.len(), 2, "{out}");
    assert!(found[0].contains("`read` is #[no_sync]"), "{out}");
    assert!(found[1].contains("`cuda` is #[no_sync]"), "{out}");
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
    let out = check(&src);
    let found = findings(&out);
    assert_eq!(found.len(), 1, "{out}");
    assert!(found[0].contains("`r` is #[no_sync]"), "{out}");
}

#[test]
fn a_generic_method_on_a_concrete_receiver_is_specialised_to_its_runtime() {
    let client = "impl<R: Runtime> Client<R> {\n\
            pub fn read(&mut self) -> u32 { self.server.read() }\n\
        }\n";
    for (rt, want) in [("CpuRt", 0), ("CudaRt", 1)] {
        let src = format!(
            "{RT}{client}#[no_sync] pub fn r(c: &mut Client<{rt}>) -> u32 {{ c.read() }}\n"
        );
        let out = check(&src);
        assert_eq!(findings(&out).len(), want, "{rt}: {out}");
    }
    let src =
        format!("{RT}{client}#[no_sync] pub fn r(c: &mut Client<CudaRt>) -> u32 {{ c.read() }}\n");
    assert_eq!(
        notes(&src)[..2],
        [
            "`t::r` calls `t::Client::read` (exact, specialised to `R = CudaRt`)",
            "`t::Client::read` calls `<t::Cuda as t::Server>::read` (inferred)"
        ]
    );
}

#[test]
fn a_type_parameter_bound_by_an_argument_resolves_its_paths() {
    let by_path = "pub fn by_path<S: Server>(s: &mut S) -> u32 { S::read(s) }\n";
    for (server, want) in [("Cpu", 0), ("Cuda", 1)] {
        let src =
            format!("{RT}{by_path}#[no_sync] pub fn r(s: &mut {server}) -> u32 {{ by_path(s) }}\n");
        let out = check(&src);
        assert_eq!(findings(&out).len(), want, "{server}: {out}");
    }
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
    let src = format!("{OPS}#[no_sync] pub fn exp(x: u32) -> u32 {{ unary_impl::<Exp>(x) }}\n");
    let out = check(&src);
    assert_eq!(findings(&out).len(), 1, "{out}");
    // Through `<impl UnaryOpT as Map1>::map` to the blanket `f` (`load`), not to
    // every `Map1` impl (`Gather`'s `wait`).
    let notes = notes(&src);
    assert_eq!(
        notes[..4],
        [
            "`t::exp` calls `t::unary_impl` (exact)",
            "`t::unary_impl` calls `<impl t::UnaryOpT as t::Map1>::map` (exact)",
            "`<impl t::UnaryOpT as t::Map1>::map` calls `<t::<impl> as t::Map1>::f` (exact)",
            "`<t::<impl> as t::Map1>::f` calls `t::load` (exact)",
        ],
        "{notes:#?}"
    );
}

#[test]
fn a_concrete_type_has_the_blanket_impls_of_its_traits() {
    let src = format!("{OPS}#[no_sync] pub fn exp(x: u32) -> u32 {{ Exp.map(x) }}\n");
    let notes = notes(&src);
    assert!(
        notes
            .iter()
            .any(|n| n == "`<t::Exp as t::Map1>::map` calls `<t::<impl> as t::Map1>::f` (exact)"),
        "{notes:#?}"
    );
    assert!(!notes.iter().any(|n| n.contains("Gather")), "{notes:#?}");
}

#[test]
fn a_detached_thread_closure_is_not_the_callers_code() {
    let src = "use nosync::{no_sync, synchronizes};\n\
        #[synchronizes] fn wait() {}\n\
        #[no_sync] pub fn gc() { std::thread::spawn(move || { wait(); }); }\n\
        #[no_sync] pub fn scoped() { std::thread::scope(|s| { wait(); }); }\n";
    let out = check(src);
    let found = findings(&out);
    assert_eq!(found.len(), 1, "{out}");
    assert!(found[0].contains("`scoped` is #[no_sync]"), "{out}");
}
