//! Property test of `BlockingPool`: random pools (1–3 threads, keep-alives
//! from none to 2 ms, so threads exit and come back mid-run), jobs
//! submitted from 1–3 threads (some holding their thread until the test
//! opens a gate, some panicking, some detached), and a shutdown at a random
//! point, sometimes called from two threads at once. Checks the module's
//! promises:
//!
//! * never more than `max_threads` jobs run at once, nor threads live;
//! * every job submitted before a shutdown began runs exactly once, and its
//!   handle gives its value or its panic; a job submitted after a shutdown
//!   returned never runs and is `Cancelled`; any job runs at most once and
//!   is `Cancelled` exactly when it did not run;
//! * when `shutdown` returns (to any caller outside the pool), the jobs
//!   queued before it have run and no pool thread is left;
//! * with one thread and one submitter, jobs start in submission order.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fastexec::blocking::{BlockingError, BlockingPool, BlockingTask};
use proptest::prelude::*;
use support::{within, Gate};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Job {
    /// Returns its number.
    Value,
    /// Panics.
    Panic,
    /// Holds its thread until the test opens the gate.
    Held,
}

#[derive(Debug, Clone)]
struct Plan {
    max_threads: usize,
    keep_alive_us: u64,
    /// Per submitter: its jobs and whether each handle is kept.
    submitters: Vec<Vec<(Job, bool)>>,
    /// Submitter 0 opens the gate before its job of this index ...
    open_at: usize,
    /// ... and shuts the pool down before this one (at or after `open_at`).
    shutdown_at: usize,
    /// Whether a second thread calls `shutdown` at the same time.
    second_shutdown: bool,
}

fn job() -> impl Strategy<Value = Job> {
    prop_oneof![6 => Just(Job::Value), 1 => Just(Job::Panic), 2 => Just(Job::Held)]
}

fn plan() -> impl Strategy<Value = Plan> {
    let submitter = proptest::collection::vec((job(), proptest::bool::weighted(0.7)), 0..25);
    (
        1usize..=3,
        prop_oneof![Just(0u64), 0u64..2_000],
        proptest::collection::vec(submitter, 1..=3),
        0usize..30,
        0usize..30,
        proptest::bool::weighted(0.3),
    )
        .prop_map(
            |(max_threads, keep_alive_us, submitters, a, b, second_shutdown)| Plan {
                max_threads,
                keep_alive_us,
                submitters,
                open_at: a.min(b),
                shutdown_at: a.max(b),
                second_shutdown,
            },
        )
}

/// What the jobs and the test share.
#[derive(Default)]
struct Ledger {
    /// Jobs running now, and the most at once.
    running: AtomicUsize,
    most_running: AtomicUsize,
    /// The most live threads a job saw.
    most_live: AtomicUsize,
    /// Per job (submitter, index): how often it ran.
    runs: Mutex<Vec<Vec<usize>>>,
    /// Job numbers in the order they started.
    started: Mutex<Vec<(usize, usize)>>,
    /// Set once some `shutdown` call returned.
    shut_down: AtomicBool,
}

/// How one submitted job ended, as its submitter saw it.
struct Submitted {
    /// Whether a shutdown had returned before `spawn` was called.
    after_shutdown: bool,
    /// Whether it was submitted before any shutdown began.
    before_shutdown: bool,
    handle: Option<BlockingTask<(usize, usize)>>,
}

fn job_body(
    ledger: &Arc<Ledger>,
    pool: &Arc<BlockingPool>,
    gate: &Gate,
    id: (usize, usize),
    job: Job,
) -> impl FnOnce() -> (usize, usize) + Send + 'static {
    let (ledger, pool, gate) = (Arc::clone(ledger), Arc::downgrade(pool), gate.clone());
    move || {
        let now = ledger.running.fetch_add(1, Ordering::SeqCst) + 1;
        ledger.most_running.fetch_max(now, Ordering::SeqCst);
        if let Some(pool) = pool.upgrade() {
            ledger
                .most_live
                .fetch_max(pool.live_threads(), Ordering::SeqCst);
        }
        ledger.runs.lock().unwrap()[id.0][id.1] += 1;
        ledger.started.lock().unwrap().push(id);
        if job == Job::Held {
            gate.wait_blocking();
        }
        ledger.running.fetch_sub(1, Ordering::SeqCst);
        if job == Job::Panic {
            panic!("planned panic of job {id:?}");
        }
        id
    }
}

fn run_plan(plan: &Plan) -> Result<(), TestCaseError> {
    let pool = Arc::new(BlockingPool::new(
        plan.max_threads,
        Duration::from_micros(plan.keep_alive_us),
        "prop",
    ));
    let ledger = Arc::new(Ledger {
        runs: Mutex::new(plan.submitters.iter().map(|s| vec![0; s.len()]).collect()),
        ..Ledger::default()
    });
    let gate = Gate::new();
    let shutdown_began = Arc::new(AtomicBool::new(false));
    let submitted: Vec<Vec<Submitted>> = std::thread::scope(|scope| {
        let submitters: Vec<_> = plan
            .submitters
            .iter()
            .enumerate()
            .map(|(s, jobs)| {
                let (pool, ledger, gate, began) = (&pool, &ledger, &gate, &shutdown_began);
                scope.spawn(move || {
                    let mut out = Vec::new();
                    for (i, &(job, keep)) in jobs.iter().enumerate() {
                        if s == 0 && i == plan.open_at {
                            gate.open();
                        }
                        if s == 0 && i == plan.shutdown_at {
                            shut_down(pool, ledger, began, plan.second_shutdown);
                        }
                        // Read before the spawn: a shutdown had returned.
                        let after_shutdown = ledger.shut_down.load(Ordering::SeqCst);
                        let handle = pool.spawn(job_body(ledger, pool, gate, (s, i), job));
                        // Read after the spawn returned: no shutdown had begun
                        // when the job was queued.
                        let before_shutdown = !began.load(Ordering::SeqCst);
                        out.push(Submitted {
                            after_shutdown,
                            before_shutdown,
                            handle: keep.then_some(handle),
                        });
                    }
                    out
                })
            })
            .collect();
        submitters.into_iter().map(|s| s.join().unwrap()).collect()
    });
    gate.open();
    if !shutdown_began.load(Ordering::SeqCst) {
        shut_down(&pool, &ledger, &shutdown_began, plan.second_shutdown);
    }
    prop_assert_eq!(pool.live_threads(), 0, "a thread outlived shutdown");

    let runs = ledger.runs.lock().unwrap().clone();
    for (s, jobs) in submitted.into_iter().enumerate() {
        for (i, job) in jobs.into_iter().enumerate() {
            let ran = runs[s][i];
            prop_assert!(ran <= 1, "job {:?} ran {} times", (s, i), ran);
            if job.before_shutdown {
                prop_assert_eq!(ran, 1, "job {:?} was queued before shutdown", (s, i));
            }
            if job.after_shutdown {
                prop_assert_eq!(ran, 0, "job {:?} came after shutdown", (s, i));
            }
            let Some(handle) = job.handle else { continue };
            let result = support::block_on_guarded(handle);
            let kind = plan.submitters[s][i].0;
            match (ran, kind, result) {
                (1, Job::Panic, Err(BlockingError::Panicked(_))) => {}
                (1, Job::Value | Job::Held, Ok(id)) => prop_assert_eq!(id, (s, i)),
                (0, _, Err(BlockingError::Cancelled)) => {}
                (ran, kind, result) => {
                    prop_assert!(
                        false,
                        "job {:?} ({:?}) ran {} times, gave {:?}",
                        (s, i),
                        kind,
                        ran,
                        result.map(|_| ())
                    );
                }
            }
        }
    }
    let most = ledger.most_running.load(Ordering::SeqCst);
    prop_assert!(most <= plan.max_threads, "{} jobs ran at once", most);
    let live = ledger.most_live.load(Ordering::SeqCst);
    prop_assert!(live <= plan.max_threads, "{} threads were live", live);
    if plan.max_threads == 1 && plan.submitters.len() == 1 {
        let started = ledger.started.lock().unwrap().clone();
        let mut sorted = started.clone();
        sorted.sort_unstable();
        prop_assert_eq!(
            started,
            sorted,
            "one thread starts jobs in submission order"
        );
    }
    Ok(())
}

/// Shuts `pool` down, from this thread and, if `twice`, from another one
/// at the same time; each caller must find no pool thread left when its
/// call returns (and since no thread starts after a shutdown, a job that
/// has not run by then never will).
fn shut_down(pool: &BlockingPool, ledger: &Ledger, began: &AtomicBool, twice: bool) {
    began.store(true, Ordering::SeqCst);
    std::thread::scope(|scope| {
        let other = twice.then(|| {
            scope.spawn(|| {
                pool.shutdown();
                pool.live_threads()
            })
        });
        pool.shutdown();
        assert_eq!(
            pool.live_threads(),
            0,
            "shutdown returned with threads left"
        );
        if let Some(other) = other {
            let left = other.join().unwrap();
            assert_eq!(
                left, 0,
                "the concurrent shutdown returned with threads left"
            );
        }
    });
    ledger.shut_down.store(true, Ordering::SeqCst);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_pool_keeps_its_promises(plan in plan()) {
        within(60, move || run_plan(&plan))?;
    }
}
