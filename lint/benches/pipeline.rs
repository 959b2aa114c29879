//! The lint's speed against its floor: on the same files in the same run, a bare
//! read + `syn::parse_file` of every file the engine reads (one thread, and rayon on
//! all cores) and the engine's full analysis (`engine::analyze_crates`, after
//! `cargo metadata`, which is measured on its own), with its time per phase.
//!
//! Inputs: `fixtures/demo`; `syn` 2, `cudarc` 0.19 and, when fetched, `candle-core` +
//! `candle-nn` 0.9 (feature `cuda`, roots from a config) from the cargo registry
//! sources (an input that is not on disk is skipped with a line saying why); and a
//! generated crate at two sizes, N and 4N modules, to show that the analysis scales
//! linearly (each phase's 4N/N ratio should be about 4).
//!
//! `cargo bench -p cargo-nosync-lint --bench pipeline` prints criterion's estimates,
//! then a summary table (medians of the measured samples; docs/performance.md).

#[path = "support/pipeline_inputs.rs"]
mod inputs;
#[path = "support/synth.rs"]
mod synth;

use criterion::{BenchmarkGroup, Criterion, SamplingMode, measurement::WallTime};
use inputs::{candle, cudarc_crate, demo, syn_crate, synthetic};
use nosync_lint::analyze_crates;
use nosync_lint_core::config::{Config, load_file as load_config_file};
use nosync_lint_core::crate_graph::CrateSpec;
use nosync_lint_core::source::{DiskLoader, SourceMap};
use nosync_lint_workspace::{WorkspaceOptions, load as load_workspace};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Stack size of the floor's threads, as the engine's (syn recurses per nesting level).
const STACK: usize = nosync_lint_core::parse::STACK_SIZE;
/// Modules of the small synthetic crate (the large one has 4×; `NOSYNC_BENCH_SYNTH_MODS`
/// overrides it); fns per module.
const SYNTH_MODS: usize = 100;
const SYNTH_FNS: usize = 10;

/// One input: the crates the engine analyses and the files it reads.
struct Input {
    name: String,
    root: PathBuf,
    crates: Vec<CrateSpec>,
    /// A config file (path, text) given to every run.
    config: Option<(PathBuf, String)>,
    cfg: Config,
    files: Vec<PathBuf>,
    counts: String,
    _dir: Option<tempfile::TempDir>,
}

impl Input {
    fn new(name: &str, root: PathBuf, crates: Vec<CrateSpec>) -> Input {
        Input {
            name: name.to_owned(),
            root,
            crates,
            config: None,
            cfg: Config::default(),
            files: Vec::new(),
            counts: String::new(),
            _dir: None,
        }
    }

    fn with_config(mut self, text: &str) -> Input {
        let path = self.root.join("nosync-bench.toml");
        let mut sources = self.sources();
        sources.add(path.clone(), text.to_owned());
        let mut diags = Vec::new();
        if let Err(e) =
            load_config_file(&path, &mut self.cfg, &DiskLoader, &mut sources, &mut diags)
        {
            println!("{}: config not loaded: {e:#}", self.name);
        }
        self.config = Some((path, text.to_owned()));
        self
    }

    /// A fresh source map (holding the config file, as `engine::analyze` would).
    fn sources(&self) -> SourceMap {
        let mut s = SourceMap::new(&self.root);
        if let Some((path, text)) = &self.config {
            s.add(path.clone(), text.clone());
        }
        s
    }

    /// One untimed analysis: the files it reads and its figures.
    fn prepare(mut self) -> Input {
        let a = analyze_crates(
            self.root.clone(),
            self.crates.clone(),
            &self.cfg,
            &DiskLoader,
            self.sources(),
        );
        let config = self.config.as_ref().map(|(p, _)| p);
        self.files = a
            .sources
            .files()
            .iter()
            .map(|f| f.path.clone())
            .filter(|p| Some(p) != config)
            .collect();
        let s = &a.stats;
        self.counts = format!(
            "{} crates, {} files, {} lines, {} fns, {} edges ({} name-only), {} roots, {} diagnostics",
            s.crates,
            s.files,
            s.lines,
            s.fns,
            s.edges_exact + s.edges_inferred + s.edges_name_only,
            s.edges_name_only,
            s.roots,
            a.diagnostics.len()
        );
        self
    }
}

/// What one measured call of a benchmark saw: time per iteration and per phase.
#[derive(Default, Clone)]
struct Sample {
    per_iter: Duration,
    phases: BTreeMap<&'static str, Duration>,
}

/// Every call criterion made, per benchmark id (warm-up calls first, samples last).
#[derive(Default)]
struct Record {
    calls: BTreeMap<String, Vec<Sample>>,
    sample_size: usize,
}

impl Record {
    /// Medians over the measured samples (the last `sample_size` calls).
    fn median(&self, id: &str) -> Option<Sample> {
        let calls = self.calls.get(id)?;
        let measured = &calls[calls.len().saturating_sub(self.sample_size)..];
        if measured.is_empty() {
            return None;
        }
        let med = |mut v: Vec<Duration>| {
            v.sort();
            v.get(v.len() / 2).copied().unwrap_or_default()
        };
        let mut out = Sample {
            per_iter: med(measured.iter().map(|s| s.per_iter).collect()),
            ..Sample::default()
        };
        for name in measured.iter().flat_map(|s| s.phases.keys()) {
            let v = measured
                .iter()
                .map(|s| s.phases.get(name).copied().unwrap_or_default())
                .collect();
            out.phases.insert(name, med(v));
        }
        Some(out)
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(STACK)
        .build()
        .expect("a rayon pool for the floor")
}

/// The floor for one file: read it and parse it with syn, nothing else.
fn read_and_parse(path: &Path) -> bool {
    let ok = std::fs::read_to_string(path).is_ok_and(|t| syn::parse_file(&t).is_ok());
    // proc-macro2 (span-locations) keeps every parsed text in a thread-local map;
    // the engine's threads end with each run, the floor's pool lives on.
    proc_macro2::extra::invalidate_current_thread_spans();
    ok
}

fn bench_input(g: &mut BenchmarkGroup<'_, WallTime>, rec: &mut Record, input: &Input) {
    let (one, all) = (pool(1), pool(0));
    let files = &input.files;
    let mut run = |id: String, f: &mut dyn FnMut() -> Sample| {
        let calls = rec.calls.entry(id.clone()).or_default();
        g.bench_function(id, |b| {
            b.iter_custom(|iters| {
                let mut total = Sample::default();
                for _ in 0..iters {
                    let s = f();
                    total.per_iter += s.per_iter;
                    for (k, v) in s.phases {
                        *total.phases.entry(k).or_default() += v;
                    }
                }
                let n = u32::try_from(iters.max(1)).unwrap_or(u32::MAX);
                let elapsed = total.per_iter;
                calls.push(Sample {
                    per_iter: elapsed / n,
                    phases: total.phases.into_iter().map(|(k, v)| (k, v / n)).collect(),
                });
                elapsed
            })
        });
    };
    run(format!("{}/floor_1_thread", input.name), &mut || {
        timed(|| one.install(|| files.iter().filter(|p| read_and_parse(p)).count()))
    });
    run(format!("{}/floor_parallel", input.name), &mut || {
        timed(|| all.install(|| files.par_iter().filter(|p| read_and_parse(p)).count()))
    });
    run(format!("{}/full", input.name), &mut || full_once(input));
}

fn timed<T>(f: impl FnOnce() -> T) -> Sample {
    let t = Instant::now();
    std::hint::black_box(f());
    Sample {
        per_iter: t.elapsed(),
        ..Sample::default()
    }
}

/// One analysis, timed from the crate list to the sorted diagnostics.
fn full_once(input: &Input) -> Sample {
    let (crates, sources) = (input.crates.clone(), input.sources());
    let t = Instant::now();
    let a = analyze_crates(input.root.clone(), crates, &input.cfg, &DiskLoader, sources);
    let per_iter = t.elapsed();
    let phases = a.stats.phases.iter().copied().collect();
    drop(std::hint::black_box(a));
    Sample { per_iter, phases }
}

/// `cargo metadata` on the demo, on its own (the engine runs it once per invocation).
fn bench_metadata(c: &mut Criterion, rec: &mut Record) {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/Cargo.toml");
    let opts = WorkspaceOptions {
        manifest_path: Some(manifest),
        ..WorkspaceOptions::default()
    };
    let mut g = c.benchmark_group("metadata");
    g.sampling_mode(SamplingMode::Flat);
    let calls = rec.calls.entry("demo/cargo_metadata".into()).or_default();
    g.bench_function("demo/cargo_metadata", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                let _ = std::hint::black_box(load_workspace(&opts, &mut |_| {}));
            }
            let elapsed = t.elapsed();
            let n = u32::try_from(iters.max(1)).unwrap_or(u32::MAX);
            calls.push(Sample {
                per_iter: elapsed / n,
                ..Sample::default()
            });
            elapsed
        })
    });
    g.finish();
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn ratio(a: Duration, b: Duration) -> String {
    if b.is_zero() {
        "-".to_owned()
    } else {
        format!("{:.2}", a.as_secs_f64() / b.as_secs_f64())
    }
}

const PHASES: [&str; 4] = ["parse", "resolve", "callgraph", "analysis"];

fn summary_row(rec: &Record, input: &Input) -> Option<String> {
    let id = |b: &str| format!("{}/{b}", input.name);
    let one = rec.median(&id("floor_1_thread"))?;
    let par = rec.median(&id("floor_parallel"))?;
    let full = rec.median(&id("full"))?;
    let phases: Vec<String> = PHASES
        .iter()
        .map(|p| ms(full.phases.get(p).copied().unwrap_or_default()))
        .collect();
    Some(format!(
        "| {} | {} | {} | {} | {} | {} | {} |",
        input.name,
        ms(one.per_iter),
        ms(par.per_iter),
        ms(full.per_iter),
        ratio(full.per_iter, par.per_iter),
        ratio(full.per_iter, one.per_iter),
        phases.join(" | ")
    ))
}

/// 4N/N ratios of the full analysis and of each phase.
fn scaling(rec: &Record, small: &Input, large: &Input) -> Option<String> {
    let a = rec.median(&format!("{}/full", small.name))?;
    let b = rec.median(&format!("{}/full", large.name))?;
    let mut line = format!(
        "scaling {} -> {}: full x{}",
        small.name,
        large.name,
        ratio(b.per_iter, a.per_iter)
    );
    for p in PHASES {
        let (x, y) = (a.phases.get(p), b.phases.get(p));
        let r = ratio(
            y.copied().unwrap_or_default(),
            x.copied().unwrap_or_default(),
        );
        let _ = write!(line, ", {p} x{r}");
    }
    line += " (x4 = linear; well above x4 in a phase = a superlinear pass there)";
    Some(line)
}

fn print_summary(rec: &Record, inputs: &[Input]) {
    println!("\n== nosync-lint pipeline: medians of the measured samples (ms) ==");
    println!(
        "\n| input | floor 1 thread | floor parallel | full | full/floor par | full/floor 1 | {} |",
        PHASES.join(" | ")
    );
    println!("|---|---|---|---|---|---|{}", "---|".repeat(PHASES.len()));
    for i in inputs {
        match summary_row(rec, i) {
            Some(row) => println!("{row}"),
            None => println!("| {} | not measured (filtered out) |", i.name),
        }
    }
    if let Some(m) = rec.median("demo/cargo_metadata") {
        println!(
            "\ncargo metadata (demo, once per invocation, outside `full`): {} ms",
            ms(m.per_iter)
        );
    }
    let synth: Vec<&Input> = inputs
        .iter()
        .filter(|i| i.name.starts_with("synth"))
        .collect();
    if let [small, large] = synth[..]
        && let Some(line) = scaling(rec, small, large)
    {
        println!("{line}");
    }
}

/// Builds one input, or says why it is skipped.
type Maker = Box<dyn Fn() -> Result<Input, String>>;

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10)
        .configure_from_args();
    let mut rec = Record {
        sample_size: 10,
        ..Record::default()
    };
    let mods = std::env::var("NOSYNC_BENCH_SYNTH_MODS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(SYNTH_MODS);
    let makers: Vec<(&str, Maker)> = vec![
        ("demo", Box::new(demo)),
        ("syn", Box::new(syn_crate)),
        ("cudarc", Box::new(cudarc_crate)),
        ("candle", Box::new(candle)),
        ("synth N", Box::new(move || synthetic(mods, SYNTH_FNS))),
        ("synth 4N", Box::new(move || synthetic(4 * mods, SYNTH_FNS))),
    ];
    let mut inputs = Vec::new();
    for (name, make) in makers {
        match make() {
            Ok(input) => {
                let input = input.prepare();
                println!("{}: {}", input.name, input.counts);
                inputs.push(input);
            }
            Err(why) => println!("{name}: skipped: {why}"),
        }
    }
    bench_metadata(&mut c, &mut rec);
    let mut g = c.benchmark_group("pipeline");
    g.sampling_mode(SamplingMode::Flat);
    for input in &inputs {
        bench_input(&mut g, &mut rec, input);
    }
    g.finish();
    c.final_summary();
    print_summary(&rec, &inputs);
}
