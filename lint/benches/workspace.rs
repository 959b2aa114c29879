//! The whole command, as a user runs it: `cargo-nosync-lint nosync-lint --all-features
//! --manifest-path <workspace>/Cargo.toml --config <roots> -v`, `cargo metadata` included,
//! in a child process, cold (no cache in the target dir) and warm twice: the same command
//! after a comment line was inserted at the top of one member's file, then after a statement
//! was inserted at the top of the first fn body of that file (`support/edits.rs`), against
//! the floor of the files it reads: `read_to_string` +
//! `syn::parse_file` of each on a pool of 2 threads. Peak RSS twice: the lint's own (`-v`'s
//! `memory:` line, its `VmHWM`), and `/usr/bin/time -f %M`'s, which is the largest of the
//! lint and its `cargo metadata` child (cargo's own peak is 144 MiB on candle, more than
//! the lint's; not `wait4` here: a child's `ru_maxrss` starts from the bench's own RSS at
//! the fork).
//!
//! Inputs (each copied to a temporary directory first, so that editing a file and writing
//! the target dir never touch the original): candle (the whole repository), mistral.rs
//! (which reaches its candle through git dependencies, not on disk here: its candle crates
//! are not read) and "mistral.rs + candle" (the same with the sweep's candle patched in for
//! them, so that the lint reads both) and burn, taken from `$NOSYNC_BENCH_GIT`
//! (the sweep's `git/` directory, `xtask/sweep.txt` has their commits; an input that is not
//! there is skipped with a line saying why), and the generated crate of `support/synth.rs`
//! at N and 4N modules (`NOSYNC_BENCH_SYNTH_MODS`, default 100). The roots: candle's are
//! those of the accuracy corpus (`tests/accuracy/corpus.toml`), mistral.rs's its models'
//! `forward` and the sampler (`support/mistral-roots.txt`), burn's `Tensor`'s readbacks
//! (`support/burn-roots.txt`), synth's its own four.
//!
//! Each round runs, per input and side by side: the floor, a cold run, the two warm runs;
//! the table has the medians over `NOSYNC_BENCH_ROUNDS` rounds (default 3). Each warm run's
//! output is compared with the cold run's of the same sources (a cold run of the edited
//! tree in the first round). `NOSYNC_BENCH_BASELINE=<other builds of the binary, `:`-separated>`
//! runs those too, in the same rounds, right after this one (rows marked with the file's
//! name), so that a change is compared side by side on a loaded machine.
//! `NOSYNC_BENCH_INPUTS=candle,synth N` runs only the inputs named.
//! `cargo bench -p cargo-nosync-lint --bench workspace`; figures in docs/performance.md.

#[path = "support/edits.rs"]
mod edits;
#[path = "support/workspace_inputs.rs"]
mod inputs;
#[path = "support/synth.rs"]
mod synth;

use inputs::{candle_roots, git_input, listed_roots, patched_input, synth_input};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The lint binary cargo built for this bench.
const BIN: &str = env!("CARGO_BIN_EXE_cargo-nosync-lint");
/// GNU time, which reports the peak RSS of the command it runs.
const TIME: &str = "/usr/bin/time";
/// Threads of the floor.
const FLOOR_THREADS: usize = 2;

/// One workspace, copied into a temporary directory.
struct Input {
    name: String,
    manifest: PathBuf,
    config: PathBuf,
    /// Every file the lint reads (from an untimed in-process analysis).
    files: Vec<PathBuf>,
    lines: usize,
    /// The file the warm runs edit (a line inserted at its top).
    edit: PathBuf,
    _temp: tempfile::TempDir,
}

/// What one run of the binary took.
#[derive(Clone, Default)]
struct Run {
    wall: Duration,
    rss_kib: u64,
    /// The lint's own peak RSS, from `-v`'s `memory:` line (GNU time's is the largest of
    /// the lint and its `cargo metadata` child, and cargo's is the larger on candle).
    own_mib: Option<f64>,
    /// The phase table of `-v`: (phase, ms).
    phases: Vec<(String, f64)>,
    stdout: Vec<u8>,
    code: i32,
}

/// The samples of one input.
#[derive(Default)]
struct Samples {
    floor: Vec<Duration>,
    cold: Vec<Run>,
    /// After the comment line.
    warm: Vec<Run>,
    identical: Option<bool>,
    /// After the statement in a fn body (see `edits::body`).
    body: Vec<Run>,
    body_identical: Option<bool>,
}

/// `read_to_string` + `syn::parse_file` of every file, on `pool`.
fn floor(files: &[PathBuf], pool: &rayon::ThreadPool) -> Duration {
    let t = Instant::now();
    pool.install(|| {
        files.par_iter().for_each(|f| {
            if let Ok(text) = std::fs::read_to_string(f) {
                let _ = std::hint::black_box(syn::parse_file(&text).is_ok());
            }
        });
    });
    t.elapsed()
}

/// The cache directory the lint keeps in the target dir (removed for a cold run).
fn cache_dir(input: &Input) -> PathBuf {
    input.manifest.with_file_name("target").join("nosync-lint")
}

/// Runs the binary `bin` on `input` under `/usr/bin/time`, for its peak RSS.
fn run_lint(bin: &Path, input: &Input) -> Result<Run, String> {
    let rss_file = input._temp.path().join("rss");
    let mut cmd = Command::new(TIME);
    cmd.args(["-f", "%M", "-o"])
        .arg(&rss_file)
        .arg(bin)
        .arg("nosync-lint")
        .arg("--all-features")
        .arg("--manifest-path")
        .arg(&input.manifest)
        .arg("--config")
        .arg(&input.config)
        .args(["-v", "--color", "never"])
        .env_remove("CARGO_TARGET_DIR")
        .stdin(Stdio::null());
    let t = Instant::now();
    let out = cmd.output().map_err(|e| format!("{TIME}: {e}"))?;
    let wall = t.elapsed();
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if code == 2 {
        return Err(format!("{}: tool error: {stderr}", input.name));
    }
    let rss = std::fs::read_to_string(&rss_file).unwrap_or_default();
    // The last line (`time` puts "Command exited with non-zero status 1" before it).
    let rss_kib = rss
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    Ok(Run {
        wall,
        rss_kib,
        own_mib: own_rss(&stderr),
        phases: phases(&stderr),
        stdout: out.stdout,
        code,
    })
}

/// `memory: peak RSS 165.2 MiB (..)` → 165.2.
fn own_rss(stderr: &str) -> Option<f64> {
    let line = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("memory: peak RSS "))?;
    line.split(' ').next()?.parse().ok()
}

/// `-v`'s phase table (`phase  time`, then `NAME  300.8 ms  NOTES` per phase) → (phase, ms).
fn phases(stderr: &str) -> Vec<(String, f64)> {
    let mut lines = stderr.lines().map(str::trim);
    if !lines.any(|l| l.starts_with("phase ") && l.ends_with(" time")) {
        return Vec::new();
    }
    lines
        .map_while(|l| {
            let (head, _) = l.split_once(" ms")?;
            let (name, ms) = head.trim_end().rsplit_once(' ')?;
            Some((name.trim().to_owned(), ms.parse().ok()?))
        })
        .collect()
}

/// One round of one binary on one input: floor, cold, edit, warm.
fn round(
    bin: &Path,
    input: &Input,
    pool: &rayon::ThreadPool,
    n: usize,
    s: &mut Samples,
) -> Result<(), String> {
    s.floor.push(floor(&input.files, pool));
    let cache = cache_dir(input);
    let _ = std::fs::remove_dir_all(&cache);
    s.cold.push(run_lint(bin, input)?);
    edits::comment(&input.edit, n)?;
    let warm = run_lint(bin, input)?;
    if s.identical.is_none() {
        s.identical = Some(same_as_cold(bin, input, &warm)?);
    }
    s.warm.push(warm);
    edits::body(&input.edit, n)?;
    let body = run_lint(bin, input)?;
    if s.body_identical.is_none() {
        s.body_identical = Some(same_as_cold(bin, input, &body)?);
    }
    s.body.push(body);
    Ok(())
}

/// Whether `warm`'s output and exit code are a cold run's of the same sources (the cache
/// is then that cold run's, as the next warm run would find it).
fn same_as_cold(bin: &Path, input: &Input, warm: &Run) -> Result<bool, String> {
    let _ = std::fs::remove_dir_all(cache_dir(input));
    let cold = run_lint(bin, input)?;
    Ok(cold.stdout == warm.stdout && cold.code == warm.code)
}

fn median<T: Clone, K: PartialOrd>(xs: &[T], key: impl Fn(&T) -> K) -> Option<T> {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| {
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    v.get(v.len() / 2).cloned()
}

fn secs(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64())
}

fn phase(r: &Run, name: &str) -> String {
    r.phases
        .iter()
        .find(|(n, _)| n == name)
        .map_or("-".to_owned(), |(_, ms)| format!("{:.2}", ms / 1e3))
}

/// `cargo metadata` (or its cache) and the config, as the binary times them: one
/// `metadata+config` phase before the cache, `metadata` or `metadata (cache hit)` and
/// `config` since.
fn metadata_phase(r: &Run) -> String {
    let ms: Vec<f64> = r
        .phases
        .iter()
        .filter(|(n, _)| n.starts_with("metadata") || n == "config")
        .map(|(_, ms)| *ms)
        .collect();
    if ms.is_empty() {
        return "-".to_owned();
    }
    format!("{:.2}", ms.iter().sum::<f64>() / 1e3)
}

fn row(name: &str, input: &Input, s: &Samples) -> Option<String> {
    let floor = median(&s.floor, |d| *d)?;
    let cold = median(&s.cold, |r| r.wall)?;
    let warm = median(&s.warm, |r| r.wall)?;
    let rss = |rs: &[Run]| rs.iter().map(|r| r.rss_kib).max().unwrap_or(0) / 1024;
    let own = |rs: &[Run]| {
        let most = rs.iter().filter_map(|r| r.own_mib).reduce(f64::max);
        most.map_or("-".to_owned(), |m| format!("{m:.0}"))
    };
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    let body = median(&s.body, |r| r.wall)?;
    let same = match (s.identical, s.body_identical) {
        (Some(true), Some(true)) => "yes",
        (Some(false), _) | (_, Some(false)) => "NO",
        _ => "-",
    };
    Some(format!(
        "| {} | {} | {} | {} | {} | {:.2} | {} | {:.2} | {} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        name,
        input.files.len(),
        input.lines,
        secs(floor),
        secs(cold.wall),
        ratio(cold.wall, floor),
        secs(warm.wall),
        ratio(warm.wall, cold.wall),
        secs(body.wall),
        ratio(body.wall, cold.wall),
        same,
        own(&s.cold),
        rss(&s.cold),
        rss(&s.warm),
        metadata_phase(&cold),
        phase(&cold, "parse"),
        phase(&cold, "resolve"),
        phase(&cold, "callgraph"),
        metadata_phase(&warm),
        phase(&warm, "parse"),
    ))
}

fn main() {
    // `cargo bench` passes `--bench`; this bench takes no filter.
    let rounds = std::env::var("NOSYNC_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let mods: usize = std::env::var("NOSYNC_BENCH_SYNTH_MODS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let (roots, mistral, burn) = (
        candle_roots(),
        listed_roots("mistral"),
        listed_roots("burn"),
    );
    type Maker<'a> = Box<dyn Fn() -> Result<Input, String> + 'a>;
    let makers: Vec<(&str, Maker)> = vec![
        ("candle", Box::new(|| git_input("candle", &roots))),
        ("mistral.rs", Box::new(|| git_input("mistral.rs", &mistral))),
        ("mistral.rs + candle", Box::new(|| patched_input(&mistral))),
        ("burn", Box::new(|| git_input("burn", &burn))),
        ("synth N", Box::new(move || synth_input(mods))),
        ("synth 4N", Box::new(move || synth_input(4 * mods))),
    ];
    // `NOSYNC_BENCH_INPUTS=<names, ,-separated>`: only those inputs.
    let only = std::env::var("NOSYNC_BENCH_INPUTS").ok();
    let wanted = |name: &str| {
        only.as_ref()
            .is_none_or(|o| o.split(',').any(|n| n == name))
    };
    let mut inputs = Vec::new();
    for (name, make) in makers.into_iter().filter(|(n, _)| wanted(n)) {
        match make() {
            Ok(i) => {
                println!(
                    "{}: {} files, {} lines, edits {}",
                    i.name,
                    i.files.len(),
                    i.lines,
                    i.edit.display()
                );
                inputs.push(i);
            }
            Err(why) => println!("{name}: skipped: {why}"),
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(FLOOR_THREADS)
        .stack_size(nosync_lint_core::parse::STACK_SIZE)
        .build()
        .expect("a pool of 2 threads");
    let mut bins = vec![(String::new(), PathBuf::from(BIN))];
    if let Some(list) = std::env::var_os("NOSYNC_BENCH_BASELINE") {
        for b in std::env::split_paths(&list) {
            let name = b.file_name().map(|n| n.to_string_lossy().into_owned());
            bins.push((format!(" ({})", name.unwrap_or_default()), b));
        }
    }
    let mut rows: Vec<(String, &Input, Samples)> = Vec::new();
    for input in &inputs {
        for (tag, _) in &bins {
            rows.push((format!("{}{tag}", input.name), input, Samples::default()));
        }
    }
    for n in 0..rounds {
        for (i, (name, input, s)) in rows.iter_mut().enumerate() {
            let bin = &bins[i % bins.len()].1;
            if let Err(e) = round(bin, input, &pool, n, s) {
                println!("{name}: round {n}: {e}");
            }
        }
    }
    print_table(&rows, rounds);
}

fn print_table(rows: &[(String, &Input, Samples)], rounds: usize) {
    println!("\n== the whole command: medians of {rounds} rounds (s), peak RSS (MiB) ==\n");
    println!(
        "| input | files | lines | floor (2 threads) | cold | cold / floor | warm | warm / cold | \
         warm, body edit | body edit / cold | warm output = cold | cold RSS, lint | cold RSS, lint or cargo | warm RSS | cold metadata+config | cold parse | cold resolve | \
         cold callgraph | warm metadata+config | warm parse |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, input, s) in rows {
        match row(name, input, s) {
            Some(r) => println!("{r}"),
            None => println!("| {name} | not measured |"),
        }
    }
    let synth: Vec<&(String, &Input, Samples)> = rows
        .iter()
        .filter(|(n, _, _)| n.starts_with("synth") && !n.ends_with(')'))
        .collect();
    if let [(_, _, a), (_, _, b)] = synth[..]
        && let (Some(x), Some(y)) = (median(&a.cold, |r| r.wall), median(&b.cold, |r| r.wall))
    {
        println!(
            "\nscaling synth N -> 4N: cold x{:.2} (x4 = linear)",
            y.wall.as_secs_f64() / x.wall.as_secs_f64().max(1e-9)
        );
    }
}
