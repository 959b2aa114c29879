//! The parent's side: three long-lived children of one program, measured in turn, one block at a
//! time, and the table of paired figures.
//!
//! Protocol (this bench's own children and the `--step` program speak it): the child is started
//! with `NOSYNC_HOOK_BENCH_CHILD` set to `off` (no hook), `on` (the hook installed first) or
//! `control` (no hook until `INSTALL`; with the interposer, its slots are rewritten first and its
//! wrappers left off), and `NOSYNC_HOOK_BENCH_BACKEND` to `interpose` (the default) or `cupti`
//! (the backend the children install), sets itself up, warms up, may print `STEP <row name>` lines (one per figure it measures), then
//! prints `READY`. Then it answers each line on its stdin: `BLOCK` with `RESULT <figure>..` (one
//! block of its loops), `INSTALL` with `OK` (installs the hook, then runs one block untimed). It
//! exits at the end of its stdin.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};

use super::stats::{self, Estimate};

pub(crate) const CHILD: &str = "NOSYNC_HOOK_BENCH_CHILD";
pub(crate) const CHILD_REPORT: &str = "NOSYNC_HOOK_BENCH_REPORT";
pub(crate) const BACKEND: &str = "NOSYNC_HOOK_BENCH_BACKEND";

/// The backend the children install: `NOSYNC_HOOK_BENCH_BACKEND`, the interposer unless `cupti`.
pub(crate) fn backend() -> nosync::hook::Backend {
    match std::env::var(BACKEND).as_deref() {
        Ok("cupti") => nosync::hook::Backend::Cupti,
        _ => nosync::hook::Backend::Interpose,
    }
}

/// One child process and its pipes.
pub(crate) struct Child {
    process: std::process::Child,
    /// `None` once closed: the end of its stdin ends the child.
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Child {
    /// Starts `program` (`None`: this binary) in `mode` and waits for `READY`; returns the
    /// names its `STEP` lines gave.
    fn spawn(program: Option<&[String]>, mode: &str) -> (Child, Vec<String>) {
        let mut command = match program {
            Some([program, args @ ..]) => {
                let mut c = Command::new(program);
                c.args(args);
                c
            }
            _ => Command::new(std::env::current_exe().expect("this bench's path")),
        };
        // `NOSYNC_REPORT` applies to the children with the hook only: they start the report when
        // they install it (set in their environment, it would install the hook at the first scope).
        let report = std::env::var(nosync::hook::REPORT_ENV).unwrap_or_default();
        let mut process = command
            .env(CHILD, mode)
            .env_remove(nosync::hook::REPORT_ENV)
            .env(CHILD_REPORT, report)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a child");
        let input = process.stdin.take();
        let output = BufReader::new(process.stdout.take().expect("piped"));
        let mut child = Child {
            process,
            input,
            output,
        };
        let mut names = Vec::new();
        loop {
            let line = child.line();
            if line == "READY" {
                return (child, names);
            }
            names.extend(line.strip_prefix("STEP ").map(str::to_owned));
        }
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        let read = self.output.read_line(&mut line).expect("read a child");
        assert!(read > 0, "a child ended early (its stderr is above)");
        line.trim_end().to_owned()
    }

    /// Sends `command` and returns the child's answer.
    fn ask(&mut self, command: &str) -> String {
        let input = self.input.as_mut().expect("open until dropped");
        writeln!(input, "{command}").expect("write to a child");
        input.flush().expect("write to a child");
        self.line()
    }

    fn block(&mut self) -> Vec<f64> {
        let answer = self.ask("BLOCK");
        let values = answer
            .strip_prefix("RESULT ")
            .unwrap_or_else(|| panic!("a child answered `{answer}`"));
        values
            .split(' ')
            .map(|x| x.parse().expect("a number"))
            .collect()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // The end of its stdin ends it: close it before waiting (the fields are dropped only after
        // this fn, so waiting with it open waits forever).
        drop(self.input.take());
        let _ = self.process.wait();
    }
}

/// The three roles: without the hook, with it from the start, and the control, without it for
/// the first half of the rounds and with it (installed in the same process) for the second.
pub(crate) const OFF: usize = 0;
pub(crate) const ON: usize = 1;
pub(crate) const CTL: usize = 2;
const MODES: [&str; 3] = ["off", "on", "control"];

/// One program's three children and every round's figures per role (each the mean of the
/// role's two blocks in that round).
pub(crate) struct Program {
    children: Vec<Child>,
    pub(crate) names: Vec<String>,
    /// `rounds[role][round][row]`.
    pub(crate) rounds: [Vec<Vec<f64>>; 3],
}

impl Program {
    pub(crate) fn start(program: Option<&[String]>) -> Program {
        let (children, names): (Vec<Child>, Vec<Vec<String>>) =
            MODES.iter().map(|mode| Child::spawn(program, mode)).unzip();
        Program {
            children,
            names: names.into_iter().next().unwrap_or_default(),
            rounds: Default::default(),
        }
    }

    /// Installs the hook in the control child.
    pub(crate) fn install_control(&mut self) {
        let answer = self.children[CTL].ask("INSTALL");
        assert_eq!(answer, "OK", "the control child did not install the hook");
    }

    /// One round: the roles in the order `order` then reversed (ABCCBA: each role's two blocks
    /// have the same mean position, so a linear drift adds the same to every role).
    pub(crate) fn round(&mut self, order: [usize; 3]) {
        let mut sums: [Vec<f64>; 3] = Default::default();
        for role in order.into_iter().chain(order.into_iter().rev()) {
            let block = self.children[role].block();
            let sum = &mut sums[role];
            sum.resize(block.len(), 0.0);
            sum.iter_mut().zip(&block).for_each(|(s, b)| *s += b / 2.0);
        }
        for (role, sum) in sums.into_iter().enumerate() {
            self.rounds[role].push(sum);
        }
    }
}

/// What a row's cell is made of: per round, a pair of values (with, without).
fn paired(p: &Program, row: usize, with: usize, rounds: std::ops::Range<usize>) -> Vec<(f64, f64)> {
    rounds
        .map(|r| (p.rounds[with][r][row], p.rounds[OFF][r][row]))
        .collect()
}

fn ratios(pairs: &[(f64, f64)]) -> Vec<f64> {
    pairs.iter().map(|(w, o)| w / o - 1.0).collect()
}

fn diffs(pairs: &[(f64, f64)]) -> Vec<f64> {
    pairs.iter().map(|(w, o)| w - o).collect()
}

/// Prints the table of a program's rows: the median without the hook; across processes, the
/// median paired difference and ratio of `on` to `off`; the A/A control (`ctl` to `off` before
/// its install); within a process, the change of `ctl` to `off` from before its install to after.
pub(crate) fn table(programs: &[Program]) {
    println!(
        "| loop | without | across: with − without, ns | across: ratio − 1, % | A/A control, % | \
         within (installed midway): change, ns | within: change, % |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for p in programs {
        let n = p.rounds[OFF].len();
        let half = n / 2;
        for (row, name) in p.names.iter().enumerate() {
            let base = stats::median(p.rounds[OFF].iter().map(|r| r[row]).collect());
            let across = paired(p, row, ON, 0..n);
            let before = paired(p, row, CTL, 0..half);
            let after = paired(p, row, CTL, half..n);
            // A row that is itself a difference has no meaningful ratio.
            let difference = name.starts_with("difference");
            let pct = |e: Estimate| {
                if difference {
                    "".to_owned()
                } else {
                    e.show(100.0, 2)
                }
            };
            println!(
                "| {name} | {base:.1} | {} | {} | {} | {} | {} |",
                stats::median_interval(diffs(&across)).show(1.0, 1),
                pct(stats::median_interval(ratios(&across))),
                pct(stats::median_interval(ratios(&before))),
                stats::median_shift(&diffs(&before), &diffs(&after)).show(1.0, 1),
                pct(stats::median_shift(&ratios(&before), &ratios(&after))),
            );
        }
    }
}

/// Every round's figures, one line per role, for a check by hand.
pub(crate) fn dump(programs: &[Program]) {
    for (i, p) in programs.iter().enumerate() {
        for (role, name) in ["off", "on", "ctl"].iter().enumerate() {
            for (r, values) in p.rounds[role].iter().enumerate() {
                let text: Vec<String> = values.iter().map(|x| format!("{x:.1}")).collect();
                println!("raw {i} {name} {r} {}", text.join(" "));
            }
        }
    }
}
