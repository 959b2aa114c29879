//! Speculative analysis: on a cold run `cargo metadata` takes about as long as the whole
//! analysis (0.5–0.7 s on candle), so the analysis does not wait for it. While cargo runs,
//! a thread of its own computes the selection the offline fallback would make
//! ([`workspace::guess`]: `cargo metadata --no-deps`, what is on disk, the fallback's
//! resolution) and runs the whole edge and core on it ([`io::run`]: the same config
//! loading, caches and analysis), holding back everything it would write. When cargo has
//! answered, its selection's [`Inputs`] are compared with the guess's: equal, the core
//! read the same things, so its result is the answer (the caches are written then, and
//! cargo's metadata and the workspace's diagnostics attached, as after any run); different,
//! the core runs again on cargo's selection, finding the speculative run's lowered files
//! by key (a file lowered with other features or `mod` directory is a miss, never a wrong
//! lowering), so that what a wrong guess costs is the wait for it. Either way the output
//! is that of a run without speculation. When cargo cannot resolve the graph, the
//! fallback's selection is the guess, so the guess is confirmed.

use super::Options;
use super::io::{self, Inputs, Ran};
use crate::workspace::{self, Offline, Overlap};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What became of a speculative analysis (`-v` says it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Speculation {
    /// Cargo's selection was the guess: the speculative analysis is the answer.
    Confirmed,
    /// It was not (what differed first): the speculative run was called off at its next
    /// stage and the crates were analysed again.
    Rejected(String),
    /// The guess was not made when cargo answered ([`Options::drop_late_guess`]): the
    /// speculative run was dropped before it started, the crates analysed on cargo's
    /// selection at once.
    Late,
    /// No guess could be made (why), or its run failed (the `--config` file could not be
    /// read).
    Unavailable(String),
}

/// The guess and the run on it.
#[derive(Debug)]
pub(super) struct Guessed {
    ran: anyhow::Result<Ran>,
    /// How long the guess took (before its run started).
    pub guess_time: Duration,
}

/// The speculative analysis in progress, on a thread of its own (its core on a pool); it
/// sends the fallback's graph as soon as the guess has it, then the guess's inputs.
pub(super) struct Running {
    handle: Option<JoinHandle<Option<Guessed>>>,
    offline: Option<Receiver<Option<Offline>>>,
    /// The guess's inputs, or why there is none.
    guess: Receiver<Result<Inputs, String>>,
    /// Calls the run off: before it starts, or at its core's next stage.
    cancel: Arc<AtomicBool>,
}

impl Running {
    pub(super) fn start(opts: &Options) -> Running {
        let opts = opts.clone();
        let (send, offline) = std::sync::mpsc::channel();
        let (send_guess, guess) = std::sync::mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let called_off = Arc::clone(&cancel);
        let guess_and_run = move || {
            let start = Instant::now();
            let mut guessed = workspace::guess(&opts.workspace);
            // Sent first: a failing cargo waits for it (a send to no receiver is moot).
            let _ = send.send(guessed.as_mut().ok().and_then(|(_, o)| o.take()));
            let inputs = guessed.map(|(ws, _)| Inputs::of(&ws));
            let _ = send_guess.send(inputs.clone());
            let inputs = inputs.ok()?;
            let guess_time = start.elapsed();
            if called_off.load(Ordering::Relaxed) {
                return None;
            }
            let ran = io::run_until(&inputs, &opts, true, None, Some(called_off));
            Some(Guessed { ran, guess_time })
        };
        let handle = std::thread::Builder::new()
            .name("speculate".to_owned())
            .stack_size(crate::parse::STACK_SIZE)
            .spawn(move || crate::panics::catch(guess_and_run).ok().flatten())
            .ok();
        Running {
            handle,
            offline: Some(offline),
            guess,
            cancel,
        }
    }

    /// The fallback's graph as the guess made it (waiting for the guess); once.
    pub(super) fn offline(&mut self) -> Option<Offline> {
        self.offline.take()?.recv().ok().flatten()
    }

    /// The guess's inputs: waiting for them, or `None` when they are not there yet and
    /// `wait` is off.
    fn guess(&self, wait: bool) -> Option<Result<Inputs, String>> {
        let gone = || Err("the speculative thread ended without a guess".to_owned());
        if wait {
            return Some(self.guess.recv().unwrap_or_else(|_| gone()));
        }
        match self.guess.try_recv() {
            Ok(g) => Some(g),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(gone()),
        }
    }

    /// Calls the speculative run off (it stops before it starts or at its next stage).
    fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Waits for the guess and its analysis.
    pub(super) fn finish(mut self) -> Option<Guessed> {
        self.handle.take()?.join().ok().flatten()
    }
}

/// The engine's [`Overlap`] with `cargo metadata`: the speculative analysis, when asked.
pub(super) struct Speculating<'o> {
    pub opts: &'o Options,
    pub running: Option<Running>,
}

impl Overlap for Speculating<'_> {
    fn before_cargo(&mut self) {
        if self.opts.speculate {
            self.running = Some(Running::start(self.opts));
        }
    }

    fn offline(&mut self) -> Option<Offline> {
        self.running.as_mut()?.offline()
    }
}

/// The run whose result is the answer for cargo's selection `real`, and what became of
/// the speculation; `phases` gets how long this thread waited for the speculative run
/// (`speculation wait`) and how long its guess took (`speculation guess`).
pub(super) fn settle(
    running: Running,
    real: &Inputs,
    opts: &Options,
    phases: &mut Vec<(&'static str, Duration)>,
) -> anyhow::Result<(Ran, Speculation)> {
    let waited = Instant::now();
    let Some(guess) = running.guess(!opts.drop_late_guess) else {
        running.cancel();
        phases.push(("speculation wait", waited.elapsed()));
        let ran = io::run(real, opts, false, None)?;
        // It stops once its guess is made, without running on it.
        drop(running.finish());
        return Ok((ran, Speculation::Late));
    };
    let what = guess.as_ref().ok().and_then(|g| difference(g, real));
    if what.is_some() || guess.is_err() {
        running.cancel();
    }
    let guessed = running.finish();
    phases.push(("speculation wait", waited.elapsed()));
    if let Some(g) = &guessed {
        phases.push(("speculation guess", g.guess_time));
    }
    let ran = guessed.map(|g| g.ran);
    match (guess, what, ran) {
        (Err(why), _, _) => Ok((
            io::run(real, opts, false, None)?,
            Speculation::Unavailable(why),
        )),
        (Ok(_), None, Some(Ok(ran))) => Ok((ran, Speculation::Confirmed)),
        (Ok(_), None, failed) => {
            let why = match failed {
                Some(Err(e)) => format!("its run failed: {e:#}"),
                _ => "its run did not finish".to_owned(),
            };
            Ok((
                io::run(real, opts, false, None)?,
                Speculation::Unavailable(why),
            ))
        }
        (Ok(_), Some(what), ran) => {
            // Only its lowered files are kept (its analysis freed before the next one).
            let lowered = ran.and_then(Result::ok).and_then(|r| r.writer.take_held());
            let again = io::run(real, opts, false, lowered)?;
            Ok((again, Speculation::Rejected(what)))
        }
    }
}

/// The first difference between the guess and cargo's selection, in words.
fn difference(guess: &Inputs, real: &Inputs) -> Option<String> {
    if guess.root != real.root {
        return Some("the workspace root".to_owned());
    }
    if guess.target_dir != real.target_dir {
        return Some("the target dir".to_owned());
    }
    if guess.config_tables != real.config_tables {
        return Some("the manifests with a config table".to_owned());
    }
    if guess.crates.len() != real.crates.len() {
        return Some(missing(guess, real));
    }
    let (i, (g, r)) = guess
        .crates
        .iter()
        .zip(&real.crates)
        .enumerate()
        .find(|(_, (g, r))| g != r)?;
    let field = match () {
        () if g.name != r.name => "name",
        () if g.root != r.root => "root",
        () if g.features != r.features => "features",
        () if g.deps != r.deps => "dependencies",
        () if g.check_roots != r.check_roots => "whether its roots are checked",
        () => "origin",
    };
    Some(format!("crate {i} (`{}`): {field}", r.name))
}

/// Of two selections of different sizes, a crate one has and the other has not.
fn missing(guess: &Inputs, real: &Inputs) -> String {
    let key =
        |c: &workspace::CrateSpec| (c.origin.package_id.clone(), c.origin.target_name.clone());
    let (g, r): (HashSet<_>, HashSet<_>) = (
        guess.crates.iter().map(key).collect(),
        real.crates.iter().map(key).collect(),
    );
    let (n, m) = (guess.crates.len(), real.crates.len());
    match (r.difference(&g).min(), g.difference(&r).min()) {
        (Some((p, t)), _) => format!("{n} crates guessed, {m} selected: `{t}` of {p} not guessed"),
        (None, Some((p, t))) => {
            format!("{n} crates guessed, {m} selected: `{t}` of {p} not selected")
        }
        (None, None) => format!("{n} crates guessed, {m} selected"),
    }
}
