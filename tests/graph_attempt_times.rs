//! The times a report gives an attempt against the clock its body reads.
//! Inside a runner's batch, attempt times are tick readings turned into
//! instants between exact readings (`src/time/ticks.rs`); each body here
//! logs the `Instant`s it reads when called and before it returns, and
//! every check asks whether some run origin, read between the instants
//! just before and after `Graph::start`, puts each body's readings inside
//! its attempt's recorded start and end (the report gives times from that
//! origin). Also: an attempt with a time limit is recorded as lasting no
//! longer than its limit when it completed, and longer when it timed out.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fastexec::graph::{AttemptOutcome, BoxError, Graph, Inputs, Report, Task};
use support::{executor, within};

/// Each body call: its task and the instants it read first and last.
type Log = Arc<Mutex<Vec<(String, Instant, Instant)>>>;

/// Work, not synchronisation: keeps the thread busy for `d`.
fn spin(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// A sync body that logs its call and works for `work`.
fn body(
    log: &Log,
    id: String,
    work: Duration,
) -> impl Fn(&Inputs<u32>) -> Result<u32, BoxError> + Send + Sync + 'static {
    let log = log.clone();
    move |_| {
        let called = Instant::now();
        if !work.is_zero() {
            spin(work);
        }
        let returning = Instant::now();
        log.lock().unwrap().push((id.clone(), called, returning));
        Ok(1)
    }
}

/// By how many nanoseconds the logged calls of the tasks `which` picks
/// miss being inside their (completed, first) attempts, for the best run
/// origin between `before` and `after`: 0 if some origin puts them all
/// inside. An origin `t0` fits a call read at `i`..`o` and an attempt
/// recorded at `s`..`e` from the origin iff `o - e <= t0 <= i - s`.
fn miss(
    report: &Report<u32>,
    log: &Log,
    (before, after): (Instant, Instant),
    which: impl Fn(&str) -> bool,
) -> u128 {
    let (mut earliest, mut latest) = (before, after);
    for (id, called, returning) in log.lock().unwrap().iter().filter(|(id, ..)| which(id)) {
        let attempt = report
            .attempts()
            .iter()
            .find(|a| a.task.as_str() == id)
            .expect("every task ran");
        assert_eq!(attempt.outcome, AttemptOutcome::Completed, "{id}");
        earliest = earliest.max(*returning - attempt.end.expect("ended"));
        latest = latest.min(*called - attempt.start);
    }
    earliest.saturating_duration_since(latest).as_nanos()
}

/// Runs `g` on one worker; the report and the instants around its start.
fn run(g: Graph<u32>) -> (Report<u32>, (Instant, Instant)) {
    within(30, move || {
        executor(1).block_on(async move {
            let before = Instant::now();
            let run = g.start();
            let after = Instant::now();
            (run.wait_all().await, (before, after))
        })
    })
}

/// A chain's batches hold one attempt each, timed by exact readings only:
/// no slack at all.
#[test]
fn a_chains_attempts_contain_their_bodies_readings_exactly() {
    for _ in 0..50 {
        let log = Log::default();
        let mut g = Graph::new();
        for n in 0..50 {
            let task = Task::sync(format!("c{n}"), body(&log, format!("c{n}"), Duration::ZERO));
            g.add(if n == 0 {
                task
            } else {
                task.after([format!("c{}", n - 1)])
            })
            .unwrap();
        }
        let (report, around) = run(g);
        assert!(report.is_success());
        assert_eq!(miss(&report, &log, around, |_| true), 0);
    }
}

/// Independent tasks run in batches whose attempts are interpolated from
/// ticks, within tens of nanoseconds; every third has a time limit, whose
/// attempts are timed by exact readings.
#[test]
fn a_batchs_attempts_contain_their_bodies_readings() {
    let mut worst = 0;
    for _ in 0..200 {
        let log = Log::default();
        let mut g = Graph::new();
        for n in 0..32 {
            let task = Task::sync(
                format!("w{n}"),
                body(&log, format!("w{n}"), Duration::from_nanos(200)),
            );
            g.add(if n % 3 == 0 {
                task.timeout(Duration::from_secs(5))
            } else {
                task
            })
            .unwrap();
        }
        let (report, around) = run(g);
        assert!(report.is_success());
        let limited = |id: &str| id[1..].parse::<u32>().unwrap() % 3 == 0;
        assert_eq!(miss(&report, &log, around, limited), 0);
        worst = worst.max(miss(&report, &log, around, |_| true));
    }
    assert!(worst < 1_000, "missed by {worst} ns");
}

/// The same where a long attempt makes the runner hand the rest of its
/// batch off, and async attempts suspend (their start is converted at
/// once, from the marks so far).
#[test]
fn handed_off_and_suspended_attempts_contain_their_bodies_readings() {
    let mut worst = 0;
    for _ in 0..100 {
        let log = Log::default();
        let mut g = Graph::new();
        for n in 0..32u32 {
            let id = format!("h{n}");
            let task = if n % 4 == 1 {
                let log = log.clone();
                Task::new(id.clone(), move |_| {
                    let (log, id) = (log.clone(), id.clone());
                    async move {
                        let called = Instant::now();
                        spin(Duration::from_micros(2));
                        fastexec::yield_now().await;
                        let returning = Instant::now();
                        log.lock().unwrap().push((id, called, returning));
                        Ok(1)
                    }
                })
            } else {
                // Past the runner's 50 µs: what follows is handed off.
                let work = if n == 6 {
                    Duration::from_micros(80)
                } else {
                    Duration::from_nanos(300)
                };
                Task::sync(id.clone(), body(&log, id, work))
            };
            g.add(task).unwrap();
        }
        let (report, around) = run(g);
        assert!(report.is_success());
        worst = worst.max(miss(&report, &log, around, |_| true));
    }
    assert!(worst < 1_000, "missed by {worst} ns");
}

/// A sync body's limit is judged by the reading its record ends at:
/// bodies returning around their limit (±200 ns) are recorded as no longer
/// than it if they completed, longer if they timed out.
#[test]
fn a_sync_attempts_record_agrees_with_its_limit() {
    let limit = Duration::from_micros(5);
    let mut disagree = Vec::new();
    for _ in 0..5 {
        let mut g = Graph::new();
        for n in 0..400u32 {
            let work = limit + Duration::from_nanos(n.into()) - Duration::from_nanos(200);
            g.add(
                Task::sync(format!("l{n}"), move |_| {
                    let called = Instant::now();
                    spin(work.saturating_sub(called.elapsed()));
                    Ok(1)
                })
                .timeout(limit),
            )
            .unwrap();
        }
        let (report, _) = run(g);
        for a in report.attempts() {
            let took = a.end.expect("ended") - a.start;
            let agrees = match a.outcome {
                AttemptOutcome::Completed => took <= limit,
                AttemptOutcome::TimedOut => took > limit,
                _ => false,
            };
            if !agrees {
                disagree.push(format!("{} {:?} {took:?}", a.task.as_str(), a.outcome));
            }
        }
    }
    assert!(
        disagree.is_empty(),
        "{} of 2000: {:?}",
        disagree.len(),
        &disagree[..disagree.len().min(5)]
    );
}
