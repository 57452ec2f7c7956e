//! Property test of the graph layer's retries, backoff and timeouts over
//! random small DAGs, on one, two and three workers.
//!
//! Every task has a random retry policy (0 to 3 retries; first backoff 0 to
//! 3 ms, a factor, a cap, jitter or none) and perhaps a timeout (up to
//! 5 ms), and a sync or an async body whose behaviour is scripted per
//! attempt: succeed, return an error, panic, or (async only) wait on a
//! future that never completes or on a sleep longer or shorter than the
//! timeout; a sync body may overrun its timeout (it blocks its thread past
//! it). An async body may suspend once before it acts. Every call of a body
//! is logged (task, attempt number, instants of entry and exit).
//!
//! What the docs promise, checked on every run (only lower bounds on time:
//! the machine may be loaded):
//!
//! * attempts: a task is attempted at most `retries + 1` times
//!   (`RetryPolicy::attempts`); it completes iff an attempt succeeds, and
//!   then no further attempt is made; every failed attempt (an error, a
//!   panic or a timeout: `Task::retries`) is retried while the allowance
//!   lasts; the failed task's error is its last attempt's
//!   (`TaskError::Failed` with the body's error, `Panicked` with the
//!   panic's message, `TimedOut` with the limit), and its dependents,
//!   transitively, end upstream-failed naming a task that failed;
//! * attempt numbers: `Inputs::attempt` counts the calls (1 first), and the
//!   report's attempt records are the logged calls: same tasks, numbers
//!   and count, an attempt's start no later than its body's entry and its
//!   end no earlier than its body's exit (for one start of the run's clock
//!   between the instants read just before and after `Graph::start`);
//! * each attempt's outcome is the one its script calls for: `Failed` for
//!   an error, `Panicked` for a panic, `TimedOut` for a future that never
//!   completes or a sleep past the limit, and for a sync body that returns
//!   after its limit (whatever it returned: `Task::sync`); an attempt may
//!   also time out where the docs allow it (it suspended, or a sync body
//!   returned late), never where they do not (an async body done in its
//!   first poll is never judged);
//! * a timed-out attempt ends no earlier than its limit after its start
//!   (`Task::timeout`); a sync attempt that did not time out ran its body
//!   within its limit;
//! * backoff: retry `k` does not start before attempt `k` ended plus
//!   `RetryPolicy::backoff(k)` (which is the documented formula), shortened
//!   by at most the jitter fraction (`RetryPolicy`);
//! * every run ends (the hang guard), every task ends terminal, as its
//!   dependencies' states call for, and a task starts only after its
//!   dependencies ended.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fastexec::graph::{
    Attempt, AttemptOutcome, Graph, Report, RetryPolicy, Task, TaskError, TaskState,
};
use proptest::prelude::*;

/// What one attempt of a body does.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Act {
    /// Returns its output.
    Ok,
    /// Returns an error.
    Err,
    /// Panics.
    Panic,
    /// Async, with a timeout: awaits a future that never completes.
    Never,
    /// Async, with a timeout: sleeps this many ms past the limit, then
    /// returns its output (the attempt ends at its deadline, so the sleep
    /// costs no time).
    SleepPast(u8),
    /// Async: sleeps this many µs (at most half the limit, if any), then
    /// returns its output.
    Sleep(u16),
    /// Sync, with a timeout: blocks its thread past the limit, then
    /// returns its output (`true`) or an error.
    Overrun(bool),
}

/// One task of a case.
#[derive(Debug, Clone)]
struct Spec {
    deps: Vec<usize>,
    sync: bool,
    /// Async only: suspends once (a yield) before it acts.
    suspends: bool,
    timeout: Option<Duration>,
    retries: u32,
    backoff: Backoff,
    /// One act per attempt allowed.
    script: Vec<Act>,
}

/// A retry policy's parameters.
#[derive(Debug, Clone, Copy)]
struct Backoff {
    initial: Duration,
    multiplier: f64,
    cap: Duration,
    jitter: f64,
}

impl Spec {
    fn policy(&self) -> RetryPolicy {
        RetryPolicy::attempts(self.retries + 1)
            .initial_backoff(self.backoff.initial)
            .multiplier(self.backoff.multiplier)
            .max_backoff(self.backoff.cap)
            .jitter(self.backoff.jitter)
    }
}

fn backoff() -> impl Strategy<Value = Backoff> {
    (
        0u64..=3000,
        prop::sample::select(vec![1.0, 1.5, 2.0, 3.0]),
        0u64..=3000,
        prop_oneof![Just(0.0), 0.1f64..=1.0],
    )
        .prop_map(|(initial, multiplier, extra, jitter)| Backoff {
            initial: Duration::from_micros(initial),
            multiplier,
            cap: Duration::from_micros(initial + extra),
            jitter,
        })
}

fn timeout() -> impl Strategy<Value = Option<Duration>> {
    prop_oneof![
        2 => Just(None),
        3 => (500u64..=5000).prop_map(|us| Some(Duration::from_micros(us))),
        1 => (1u64..=50).prop_map(|us| Some(Duration::from_micros(us))),
    ]
}

/// An act a body of this kind, with this limit, may script.
fn act(sync: bool, timeout: Option<Duration>) -> BoxedStrategy<Act> {
    let half = timeout.map_or(1000, |t| (t.as_micros() / 2) as u16);
    match (sync, timeout.is_some()) {
        (true, false) => {
            prop_oneof![3 => Just(Act::Ok), 2 => Just(Act::Err), 1 => Just(Act::Panic)].boxed()
        }
        (true, true) => prop_oneof![
            3 => Just(Act::Ok),
            2 => Just(Act::Err),
            1 => Just(Act::Panic),
            2 => any::<bool>().prop_map(Act::Overrun),
        ]
        .boxed(),
        (false, false) => prop_oneof![
            3 => Just(Act::Ok),
            2 => Just(Act::Err),
            1 => Just(Act::Panic),
            2 => (0..=half).prop_map(Act::Sleep),
        ]
        .boxed(),
        (false, true) => prop_oneof![
            3 => Just(Act::Ok),
            2 => Just(Act::Err),
            1 => Just(Act::Panic),
            1 => Just(Act::Never),
            1 => (10u8..=30).prop_map(Act::SleepPast),
            2 => (0..=half).prop_map(Act::Sleep),
        ]
        .boxed(),
    }
}

/// Task `i` of a case, depending on some of `0..i`.
fn spec(i: usize) -> impl Strategy<Value = Spec> {
    let deps = prop::sample::subsequence((0..i).collect::<Vec<_>>(), 0..=i.min(2));
    (
        deps,
        any::<bool>(),
        any::<bool>(),
        timeout(),
        0u32..=3,
        backoff(),
    )
        .prop_flat_map(|(deps, sync, suspends, timeout, retries, backoff)| {
            let script = prop::collection::vec(act(sync, timeout), retries as usize + 1);
            script.prop_map(move |script| Spec {
                deps: deps.clone(),
                sync,
                suspends: suspends && !sync,
                timeout,
                retries,
                backoff,
                script,
            })
        })
}

fn case() -> impl Strategy<Value = Vec<Spec>> {
    (1usize..=6).prop_flat_map(|n| (0..n).map(spec).collect::<Vec<_>>())
}

/// One call of a body.
#[derive(Debug, Clone, Copy)]
struct Call {
    task: usize,
    attempt: u32,
    entry: Instant,
    /// When it returned or panicked (`None`: dropped at its timeout).
    exit: Option<Instant>,
}

/// The calls of a run's bodies, in the order they were entered.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<Call>>>);

impl Log {
    fn enter(&self, task: usize, attempt: u32) -> usize {
        let mut calls = self.0.lock().unwrap();
        calls.push(Call {
            task,
            attempt,
            entry: Instant::now(),
            exit: None,
        });
        calls.len() - 1
    }

    fn exit(&self, call: usize) {
        self.0.lock().unwrap()[call].exit = Some(Instant::now());
    }

    fn entry(&self, call: usize) -> Instant {
        self.0.lock().unwrap()[call].entry
    }
}

/// The start of panic messages of scripted panics (kept off the test's
/// output, see `support::quiet_panics`).
const PANIC: &str = "scripted panic";

fn output(task: usize, attempt: u32) -> u32 {
    task as u32 * 10 + attempt
}

fn error_text(task: usize, attempt: u32) -> String {
    format!("scripted error {task}#{attempt}")
}

fn panic_message(task: usize, attempt: u32) -> String {
    format!("{PANIC} {task}#{attempt}")
}

/// Blocks the thread of a sync body entered at `entry` past its `limit`.
fn overrun(entry: Instant, limit: Duration) {
    // Past the limit from the entry, so past it from the attempt's start,
    // which is no later.
    let until = entry + limit + Duration::from_micros(200);
    let mut now = Instant::now();
    while now < until {
        std::thread::sleep(until - now);
        now = Instant::now();
    }
}

/// The result of an act that ended (not `Never`), logged as the call's exit.
fn finish(
    log: &Log,
    call: usize,
    i: usize,
    attempt: u32,
    act: Act,
) -> Result<u32, fastexec::graph::BoxError> {
    log.exit(call);
    match act {
        Act::Err | Act::Overrun(false) => Err(error_text(i, attempt).into()),
        Act::Panic => panic!("{}", panic_message(i, attempt)),
        _ => Ok(output(i, attempt)),
    }
}

fn task(i: usize, spec: &Spec, log: &Log) -> Task<u32> {
    let (log, script, timeout) = (log.clone(), spec.script.clone(), spec.timeout);
    // An attempt past the script is an error (and fails the check of the
    // attempt count).
    let act_of = move |attempt: u32| {
        script
            .get(attempt as usize - 1)
            .copied()
            .unwrap_or(Act::Err)
    };
    let task = if spec.sync {
        Task::sync(i.to_string(), move |inp| {
            let attempt = inp.attempt();
            let (act, call) = (act_of(attempt), log.enter(i, attempt));
            if let (Act::Overrun(_), Some(limit)) = (act, timeout) {
                overrun(log.entry(call), limit);
            }
            finish(&log, call, i, attempt, act)
        })
    } else {
        let suspends = spec.suspends;
        Task::new(i.to_string(), move |inp| {
            let attempt = inp.attempt();
            let (log, act) = (log.clone(), act_of(attempt));
            let call = log.enter(i, attempt);
            async move {
                if suspends {
                    fastexec::yield_now().await;
                }
                match act {
                    Act::Never => std::future::pending::<()>().await,
                    Act::SleepPast(ms) => {
                        let limit = timeout.expect("a sleep past the limit has one");
                        fastexec::time::sleep(limit + Duration::from_millis(ms.into())).await;
                    }
                    Act::Sleep(us) => {
                        fastexec::time::sleep(Duration::from_micros(us.into())).await;
                    }
                    _ => {}
                }
                finish(&log, call, i, attempt, act)
            }
        })
    };
    let task = task
        .after(spec.deps.iter().map(|d| d.to_string()))
        .retry(spec.policy());
    match spec.timeout {
        Some(limit) => task.timeout(limit),
        None => task,
    }
}

/// A finished run: its report, its calls, and the instants read just
/// before and after `Graph::start` (the run's clock started in between).
struct Run {
    report: Report<u32>,
    calls: Vec<Call>,
    before: Instant,
    after: Instant,
}

fn run(specs: &[Spec], workers: usize) -> Run {
    support::quiet_panics(PANIC);
    let log = Log::default();
    let mut g = Graph::new();
    g.add_batch(specs.iter().enumerate().map(|(i, s)| task(i, s, &log)))
        .expect("a DAG validates");
    let executor = support::shared_executor(workers);
    let (report, before, after) = support::within(30, move || {
        executor.block_on(async move {
            let before = Instant::now();
            let run = g.start();
            let after = Instant::now();
            (run.wait_all().await, before, after)
        })
    });
    let calls = log.0.lock().unwrap().clone();
    Run {
        report,
        calls,
        before,
        after,
    }
}

/// The outcomes attempt `attempt` of a task of `spec` may have: the one
/// its act calls for, or a timeout where the docs allow one.
fn allowed(spec: &Spec, act: Act) -> Vec<AttemptOutcome> {
    use AttemptOutcome::*;
    let limited = spec.timeout.is_some();
    // A sync body is judged when it returns; an async one where it
    // suspends (and an async body done in its first poll never is).
    let may_time_out = limited && (spec.sync || spec.suspends);
    let mut outcomes = match act {
        Act::Ok => vec![Completed],
        Act::Err => vec![Failed],
        // A sync body is judged when it *returns* (`Task::sync`): one that
        // panics fails as panicked, however long it ran (the docs are
        // silent on one that panics past its limit).
        Act::Panic if spec.sync => return vec![Panicked],
        Act::Panic => vec![Panicked],
        Act::Never | Act::SleepPast(_) | Act::Overrun(_) => return vec![TimedOut],
        // Suspends on its timer: judged there.
        Act::Sleep(_) if limited => return vec![Completed, TimedOut],
        Act::Sleep(_) => vec![Completed],
    };
    if may_time_out {
        outcomes.push(TimedOut);
    }
    outcomes
}

/// The wait before retry `k` by the documented formula, in nanoseconds
/// (`initial * multiplier^(k-1)`, capped).
fn formula(b: &Backoff, k: u32) -> f64 {
    let grown = b.initial.as_nanos() as f64 * b.multiplier.powi(k as i32 - 1);
    grown.min(b.cap.as_nanos() as f64)
}

/// The least wait before retry `k` the docs allow: the policy's backoff,
/// shortened by at most its jitter fraction.
fn least_wait(spec: &Spec, k: u32) -> Duration {
    let wait = spec.policy().backoff(k);
    if spec.backoff.jitter == 0.0 {
        wait
    } else {
        // One nanosecond for the rounding of the product.
        wait.mul_f64(1.0 - spec.backoff.jitter)
            .saturating_sub(Duration::from_nanos(1))
    }
}

/// Whether task `i` was to run: every dependency of it completed
/// (otherwise it is upstream-failed).
fn ran(specs: &[Spec], report: &Report<u32>, i: usize) -> bool {
    specs[i]
        .deps
        .iter()
        .all(|d| report.task(&d.to_string()).unwrap().state == TaskState::Completed)
}

/// Every task `i` depends on, directly or not.
fn ancestors(specs: &[Spec], i: usize) -> Vec<usize> {
    let mut seen = vec![false; specs.len()];
    let mut stack = specs[i].deps.clone();
    while let Some(d) = stack.pop() {
        if !std::mem::replace(&mut seen[d], true) {
            stack.extend(&specs[d].deps);
        }
    }
    (0..specs.len()).filter(|&d| seen[d]).collect()
}

fn check(specs: &[Spec], workers: usize) -> Result<(), TestCaseError> {
    let Run {
        report,
        calls,
        before,
        after,
    } = run(specs, workers);
    // The run's clock started at some instant in [lo, hi]: no later than
    // any attempt's body was entered, minus the attempt's start offset, and
    // no earlier than any body's exit minus its attempt's end offset.
    let (mut lo, mut hi) = (before, after);
    for (i, spec) in specs.iter().enumerate() {
        let id = i.to_string();
        let t = report.task(&id).unwrap();
        let attempts: Vec<&Attempt> = report
            .attempts()
            .iter()
            .filter(|a| a.task.as_str() == id)
            .collect();
        let mine: Vec<&Call> = calls.iter().filter(|c| c.task == i).collect();
        prop_assert!(t.state.is_terminal(), "task {} ended {}", i, t.state);
        prop_assert_eq!(t.attempts as usize, attempts.len(), "task {}", i);
        prop_assert_eq!(mine.len(), attempts.len(), "task {}: calls vs attempts", i);

        if !ran(specs, &report, i) {
            prop_assert_eq!(t.state, TaskState::UpstreamFailed, "task {}", i);
            prop_assert_eq!(t.attempts, 0);
            let root = match &t.error {
                Some(TaskError::UpstreamFailed(root)) => root.as_str().parse::<usize>().unwrap(),
                other => return Err(TestCaseError::fail(format!("task {i}: {other:?}"))),
            };
            prop_assert!(
                ancestors(specs, i).contains(&root),
                "task {}: root {}",
                i,
                root
            );
            let root_state = report.task(&root.to_string()).unwrap().state;
            prop_assert_eq!(root_state, TaskState::Failed, "task {}: root {}", i, root);
            continue;
        }

        // At most the allowance; numbered from 1, as the calls.
        let n = attempts.len() as u32;
        prop_assert!(
            (1..=spec.retries + 1).contains(&n),
            "task {}: {} attempts",
            i,
            n
        );
        for (k, (a, c)) in attempts.iter().zip(&mine).enumerate() {
            let number = k as u32 + 1;
            prop_assert_eq!((a.number, c.attempt), (number, number), "task {}", i);
            let end = a.end.expect("a finished run's attempts ended");
            prop_assert!(a.start <= end);
            hi = hi.min(c.entry - a.start);
            if let Some(exit) = c.exit {
                lo = lo.max(exit - end);
            }
            let act = spec.script[k];
            let outcomes = allowed(spec, act);
            prop_assert!(
                outcomes.contains(&a.outcome),
                "task {} attempt {}: {:?} ended {:?}, not one of {:?}",
                i,
                number,
                act,
                a.outcome,
                outcomes
            );
            if let Some(limit) = spec.timeout {
                if a.outcome == AttemptOutcome::TimedOut {
                    prop_assert!(
                        end - a.start >= limit,
                        "task {} attempt {} timed out after {:?} < {:?}",
                        i,
                        number,
                        end - a.start,
                        limit
                    );
                } else if spec.sync && a.outcome != AttemptOutcome::Panicked {
                    // Judged on return: the body (entered no earlier than the
                    // attempt started, and judged after it returned) ran
                    // within the limit. (A panic is not judged.)
                    let exit = c.exit.expect("a sync body returns");
                    prop_assert!(
                        exit - c.entry <= limit,
                        "task {} attempt {} ran {:?} > {:?} and was not timed out",
                        i,
                        number,
                        exit - c.entry,
                        limit
                    );
                }
            }
            // Only the last attempt may succeed; every failure before it was
            // retried after its backoff.
            let last = number == n;
            prop_assert_eq!(
                a.outcome == AttemptOutcome::Completed,
                last && t.state == TaskState::Completed
            );
            if !last {
                let next = attempts[k + 1].start;
                let wait = least_wait(spec, number);
                prop_assert!(
                    next >= end + wait,
                    "task {} retry {}: started {:?} after the attempt ended, < {:?}",
                    i,
                    number,
                    next - end,
                    wait
                );
                let by_formula = formula(&spec.backoff, number);
                let policy = spec.policy().backoff(number).as_nanos() as f64;
                prop_assert!(
                    (policy - by_formula).abs() <= 1.0,
                    "{} vs {}",
                    policy,
                    by_formula
                );
            }
        }
        let first = attempts.first().unwrap();
        let last = attempts.last().unwrap();
        prop_assert_eq!(t.start, Some(first.start), "task {}", i);
        prop_assert_eq!(t.end, last.end, "task {}", i);
        // A task starts after its dependencies ended.
        for d in &spec.deps {
            let dep_end = report.task(&d.to_string()).unwrap().end.unwrap();
            prop_assert!(
                first.start >= dep_end,
                "task {} started before {} ended",
                i,
                d
            );
        }
        match (t.state, last.outcome) {
            (TaskState::Completed, AttemptOutcome::Completed) => {
                prop_assert!(t.error.is_none());
                prop_assert_eq!(report.output(&id), Some(&output(i, n)));
            }
            (TaskState::Failed, outcome) => {
                prop_assert_eq!(n, spec.retries + 1, "task {} failed with retries left", i);
                let error = t.error.as_ref().expect("a failed task has an error");
                let fits = match (outcome, error) {
                    (AttemptOutcome::Failed, TaskError::Failed(e)) => {
                        e.to_string() == error_text(i, n)
                    }
                    (AttemptOutcome::Panicked, TaskError::Panicked(m)) => *m == panic_message(i, n),
                    (AttemptOutcome::TimedOut, TaskError::TimedOut(d)) => Some(*d) == spec.timeout,
                    _ => false,
                };
                prop_assert!(
                    fits,
                    "task {}: last attempt {:?}, error {:?}",
                    i,
                    outcome,
                    error
                );
            }
            (state, outcome) => {
                return Err(TestCaseError::fail(format!(
                    "task {i} ended {state} after an attempt {outcome:?}"
                )))
            }
        }
    }
    prop_assert!(
        lo <= hi,
        "no start of the run's clock fits the logged calls"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn retries_backoff_and_timeouts_on_one_worker(specs in case()) {
        check(&specs, 1)?;
    }

    #[test]
    fn retries_backoff_and_timeouts_on_two_workers(specs in case()) {
        check(&specs, 2)?;
    }

    #[test]
    fn retries_backoff_and_timeouts_on_three_workers(specs in case()) {
        check(&specs, 3)?;
    }
}
