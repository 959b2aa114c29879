//! Which chain a finding shows when a call reaches its sink by several: the most certain
//! one (calls known to run, then exact calls, then the fewest), never one through a branch
//! a constant rules out.

use crate::config::Config;
use crate::source::SourceMap;
use crate::test_support::*;
use std::path::Path;

/// `forward` reaches `wait` in four calls through the `Gather` arm of `index`, which it
/// never takes (it passes `Select`, a variant with data that the lint does not follow), and
/// in five calls that always run (`layer` reads the scalar): the finding shows the five.
#[test]
fn a_chain_of_calls_that_run_wins_over_a_shorter_one_through_an_arm() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         struct Tensor;\n\
         enum Indexer { Select(usize), Gather(Tensor) }\n\
         impl Tensor {\n\
         \x20   fn to_host(&self) { wait() }\n\
         \x20   fn to_scalar(&self) -> f32 { self.to_host(); 0.0 }\n\
         \x20   fn index(&self, ix: Indexer) -> Tensor {\n\
         \x20       match ix {\n\
         \x20           Indexer::Select(_) => Tensor,\n\
         \x20           Indexer::Gather(t) => { t.to_host(); Tensor }\n\
         \x20       }\n\
         \x20   }\n\
         }\n\
         fn layer(t: &Tensor) -> f32 { t.to_scalar() }\n\
         fn forward(t: &Tensor) -> f32 { let first = t.index(Indexer::Select(0)); layer(&first) }\n\
         #[no_sync] fn step(t: &Tensor) { forward(t); }\n",
    );
    let found = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let others: Vec<String> = (found.diagnostics().iter())
        .flat_map(|d| d.finding.iter().flat_map(|f| &f.other_chains))
        .map(|o| {
            let (line, col) = (o.call_site.line_start, o.call_site.column_start);
            format!(
                "{line}:{col} {} -> {} ({} calls, branch: {})",
                o.function, o.joins, o.hops, o.branch
            )
        })
        .collect();
    // The other chain is listed, by the call where it joins the shown one.
    assert_eq!(
        others,
        ["13:39 t::Tensor::index -> t::Tensor::to_host (4 calls, branch: true)"]
    );
    insta::assert_snapshot!(chains(&src), @"
    19:34 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::step -> t::wait (Blocks, exact, Deny)
      via 19:34 t::step (exact)
      via 18:74 t::forward (exact)
      via 17:33 t::layer (exact)
      via 9:39 t::Tensor::to_scalar (exact)
      via 8:25 t::Tensor::to_host (exact)
    ");
}

/// A branch that a constant argument rules out is not followed: `fast` reaches nothing,
/// `slow` reaches `wait` through the one arm left, which then always runs.
#[test]
fn a_chain_only_through_a_dead_arm_is_no_finding() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         enum Mode { Fast, Slow }\n\
         fn pick(mode: Mode) { match mode { Mode::Fast => {} Mode::Slow => wait() } }\n\
         #[no_sync] fn fast() { pick(Mode::Fast); }\n\
         #[no_sync] fn slow() { pick(Mode::Slow); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    8:24 sync-in-no-sync: `slow` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::slow -> t::wait (Blocks, exact, Deny)
      via 8:24 t::slow (exact)
      via 6:67 t::pick (exact)
    ");
}
