//! Property test of the promises of `fastexec::time` (its module docs):
//! timers fire with no timer thread, never before their deadline, and
//! none is lost.
//!
//! A case is a random set of timers with deadlines from a little in the
//! past to about 3 ms ahead, on a grid of 100 µs so that some are equal,
//! each created and awaited in one of several places (`Place`): a task on
//! a worker, the `block_on` future itself, a task's nested `block_on`, a
//! `spawn_blocking` job (awaited there through a nested
//! `fastexec::block_on`, or created there and awaited by a task), a task
//! that creates it and polls it once (registering it) and then moves it
//! to the `block_on` future, and a plain thread of the test that awaits it
//! through the free `fastexec::block_on` (on the global executor, another
//! one than the executor under test). The test thread either waits in
//! `block_on`, whose thread also fires timers, or spawns the root future
//! as a task and waits on a condition variable, leaving the firing to the
//! workers (`Wait`). Each job records, right after the awaited thing
//! returns, whether it came early; the check after everything returned is
//! that every job finished exactly once (before `block_on` returned, for
//! the jobs under it) and none came early.
//!
//! 1. Sleeps (`sleep`, `sleep_until`) awaited to the end all complete:
//!    nothing else in a case polls, so every worker may be parked with no
//!    other work, and only the timer machinery (the parked timer holder,
//!    a busy worker's check, a `block_on` thread's timed park) can wake
//!    them. A hang fails through `support::with_timeout`. Each completes
//!    no earlier than its deadline: `sleep_until(d)` at `d`, `sleep(t)`
//!    at the instant read before the call plus `t` ("the deadline is taken
//!    when `sleep` is called").
//! 2. Mixed with sleeps that are dropped after a first poll (registered),
//!    sleeps `reset` while pending to an earlier, later or past deadline,
//!    and `timeout`s racing futures that finish after some yields, on a
//!    oneshot sent by another task (after yields or at a timer of its own)
//!    or never: the others still complete; a reset sleep completes no
//!    earlier than its new deadline; a timeout gives `Elapsed` only once
//!    its deadline passed and never when the future completed (the docs:
//!    the future is polled first, "a completion is never reported as a
//!    timeout"), so a future ready on its first poll always gives its
//!    output, and one that never completes always gives `Elapsed`.
//! 3. `interval`: ticks come no earlier than their scheduled instant (the
//!    returned instant "is never after the moment it returns"), the first
//!    at the start, the others on the grid `start + k × period`, strictly
//!    increasing; a tick delivered late skips the grid points already in
//!    the past (the documented choice, not a burst of catch-up ticks) and
//!    no others; `reset` restarts the grid one period after the call; a
//!    `tick` future dropped while pending consumes no tick (the next tick
//!    is then the grid point after the last one, unless that one had
//!    passed when the last tick was delivered). Random stalls (a blocking
//!    sleep in the task, as a busy task would) make ticks late.
//!
//! Only lower bounds on time are asserted, and bounds on the instants the
//! API returns relative to instants read around the calls: never "fired
//! within X", which a loaded machine may not meet. Each property runs on
//! executors of 1, 2 and 3 workers, under the free `fastexec::block_on`
//! (the global executor), and on an executor of the simple scheduler
//! (where this test found `block_on`s of two threads waiting for each
//! other; `simple_replay.rs` has the focused test).

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use fastexec::time::{self, Interval, Sleep, Timeout};
use fastexec::Executor;
use futures::channel::oneshot;
use proptest::prelude::*;

/// The grid of deadlines and durations.
const STEP: Duration = Duration::from_micros(100);

/// The value a raced future gives when it completes.
const OUTPUT: u32 = 7;

/// Where a timer (or interval) is created and awaited.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// A task spawned by the `block_on` future (its handle dropped).
    Task,
    /// The `block_on` future itself (with the other such timers, joined).
    Root,
    /// A `spawn_blocking` job, through a nested `fastexec::block_on` (a
    /// thread that is not a worker, timed by the executor under test).
    Blocking,
    /// A task, through a nested `fastexec::block_on` (on a worker, which
    /// runs other tasks while it waits).
    NestedBlockOn,
    /// Created in a `spawn_blocking` job, awaited by the task that
    /// started the job.
    MadeInBlocking,
    /// Created (and a sleep polled once, registering it) in a task, then
    /// moved to the `block_on` future and awaited there.
    Moved,
    /// A plain thread of the test, through the free `fastexec::block_on`.
    Thread,
}

/// A deadline on the grid.
#[derive(Debug, Clone, Copy)]
enum When {
    /// `sleep_until(base + steps × STEP)`; negative is in the past.
    At(i8),
    /// `sleep(steps × STEP)`.
    After(u8),
}

/// What is done with a timer.
#[derive(Debug, Clone, Copy)]
enum Action {
    /// Awaited to the end.
    Await,
    /// Polled once, then dropped after this many yields.
    Drop(u8),
    /// Polled once, reset after this many yields, then awaited.
    Reset(When, u8),
    /// A `timeout` (at the timer's deadline) around this future.
    Timeout(Raced),
}

/// The future a `timeout` races.
#[derive(Debug, Clone, Copy)]
enum Raced {
    /// Never completes.
    Pending,
    /// Completes on its poll after this many yields (0: its first poll).
    Yields(u8),
    /// Completes on a oneshot another task sends after this many yields.
    SentAfterYields(u8),
    /// Completes on a oneshot another task sends at `base + steps × STEP`.
    SentAt(i8),
}

#[derive(Debug, Clone, Copy)]
struct TimerPlan {
    place: Place,
    when: When,
    action: Action,
}

/// What the jobs of one case record.
struct Record {
    /// How many times each job finished.
    finished: Vec<AtomicU32>,
    /// Broken promises, described.
    violations: Mutex<Vec<String>>,
    /// How many jobs finished, for a test thread that waits for them.
    done: Mutex<usize>,
    all_done: Condvar,
}

impl Record {
    fn new(jobs: usize) -> Arc<Self> {
        Arc::new(Record {
            finished: (0..jobs).map(|_| AtomicU32::new(0)).collect(),
            violations: Mutex::new(Vec::new()),
            done: Mutex::new(0),
            all_done: Condvar::new(),
        })
    }

    fn violated(&self, job: usize, what: String) {
        self.violations
            .lock()
            .unwrap()
            .push(format!("job {job}: {what}"));
    }

    fn finish(&self, job: usize) {
        self.finished[job].fetch_add(1, Ordering::Relaxed);
        *self.done.lock().unwrap() += 1;
        self.all_done.notify_all();
    }

    /// Waits until `jobs` jobs have finished (a hang is caught by
    /// `support::with_timeout` around the caller).
    fn wait_for(&self, jobs: usize) {
        let done = self.done.lock().unwrap();
        drop(self.all_done.wait_while(done, |done| *done < jobs).unwrap());
    }

    fn finished(&self, job: usize) -> u32 {
        self.finished[job].load(Ordering::Relaxed)
    }
}

type Job = Pin<Box<dyn Future<Output = ()> + Send>>;
type RacedFuture = Pin<Box<dyn Future<Output = u32> + Send>>;

/// `base` moved by `steps` grid steps, either way.
fn at(base: Instant, steps: i8) -> Instant {
    let offset = STEP * u32::from(steps.unsigned_abs());
    if steps >= 0 {
        base + offset
    } else {
        base.checked_sub(offset).unwrap_or(base)
    }
}

/// A timer as created, with the instant it must not complete before.
enum Made {
    Sleep {
        sleep: Sleep,
        not_before: Instant,
    },
    Timeout {
        timeout: Timeout<RacedFuture>,
        not_before: Instant,
        raced: Raced,
        completed: Arc<AtomicBool>,
    },
}

/// The future a timeout races; sets `completed` as it completes. A
/// sender task is spawned on its first poll, where it is awaited.
fn raced(raced: Raced, base: Instant, completed: Arc<AtomicBool>) -> RacedFuture {
    Box::pin(async move {
        let output = match raced {
            Raced::Pending => std::future::pending().await,
            Raced::Yields(yields) => {
                for _ in 0..yields {
                    fastexec::yield_now().await;
                }
                OUTPUT
            }
            Raced::SentAfterYields(_) | Raced::SentAt(_) => {
                let (tx, rx) = oneshot::channel();
                fastexec::spawn(async move {
                    match raced {
                        Raced::SentAt(steps) => time::sleep_until(at(base, steps)).await,
                        Raced::SentAfterYields(yields) => {
                            for _ in 0..yields {
                                fastexec::yield_now().await;
                            }
                        }
                        _ => unreachable!(),
                    }
                    // The receiver is gone if the timeout elapsed first.
                    let _ = tx.send(OUTPUT);
                })
                .detach();
                rx.await.expect("the sender task sends")
            }
        };
        completed.store(true, Ordering::Relaxed);
        output
    })
}

impl Plan for TimerPlan {
    type Made = Made;

    fn place(&self) -> Place {
        self.place
    }

    fn make(&self, job: usize, base: Instant, record: &Record) -> Made {
        make(job, *self, base, record)
    }

    fn poll_once(&self, job: usize, made: &mut Made, cx: &mut Context<'_>, record: &Record) {
        if let Made::Sleep { sleep, not_before } = made {
            if Pin::new(sleep).poll(cx).is_ready() && Instant::now() < *not_before {
                record.violated(job, "sleep ready before its deadline".into());
            }
        }
    }

    fn finish(
        self,
        job: usize,
        made: Made,
        base: Instant,
        record: Arc<Record>,
    ) -> impl Future<Output = ()> + Send {
        finish(job, self, made, base, record)
    }
}

/// Creates timer `job` of the plan, checking the deadline it reports.
fn make(job: usize, plan: TimerPlan, base: Instant, record: &Record) -> Made {
    let before = Instant::now();
    let (deadline, not_before, sleep) = match plan.when {
        When::At(steps) => {
            let deadline = at(base, steps);
            let sleep = time::sleep_until(deadline);
            (sleep.deadline(), deadline, sleep)
        }
        When::After(steps) => {
            let duration = STEP * u32::from(steps);
            let sleep = time::sleep(duration);
            (sleep.deadline(), before + duration, sleep)
        }
    };
    if deadline < not_before {
        record.violated(
            job,
            format!("deadline {deadline:?} is before {not_before:?}"),
        );
    }
    match plan.action {
        Action::Timeout(kind) => {
            drop(sleep);
            let completed = Arc::new(AtomicBool::new(false));
            let future = raced(kind, base, completed.clone());
            let timeout = match plan.when {
                When::At(_) => time::timeout_at(not_before, future),
                When::After(steps) => time::timeout(STEP * u32::from(steps), future),
            };
            if timeout.deadline() < not_before {
                record.violated(job, "the timeout's deadline is early".into());
            }
            Made::Timeout {
                timeout,
                not_before,
                raced: kind,
                completed,
            }
        }
        _ => Made::Sleep { sleep, not_before },
    }
}

/// Awaits (or drops, or resets) a made timer as the plan says, and records.
async fn finish(job: usize, plan: TimerPlan, made: Made, base: Instant, record: Arc<Record>) {
    let early = |now: Instant, not_before: Instant, what: &str| {
        if now < not_before {
            record.violated(
                job,
                format!("{what} {:?} before its deadline", not_before - now),
            );
        }
    };
    match made {
        Made::Sleep {
            mut sleep,
            not_before,
        } => match plan.action {
            Action::Await => {
                (&mut sleep).await;
                early(Instant::now(), not_before, "sleep completed");
            }
            Action::Drop(yields) => {
                if let Poll::Ready(()) = futures::poll!(&mut sleep) {
                    early(Instant::now(), not_before, "sleep ready");
                }
                for _ in 0..yields {
                    fastexec::yield_now().await;
                }
                drop(sleep);
            }
            Action::Reset(when, yields) => {
                if let Poll::Ready(()) = futures::poll!(&mut sleep) {
                    early(Instant::now(), not_before, "sleep ready");
                }
                for _ in 0..yields {
                    fastexec::yield_now().await;
                }
                let deadline = match when {
                    When::At(steps) => at(base, steps),
                    When::After(steps) => Instant::now() + STEP * u32::from(steps),
                };
                sleep.reset(deadline);
                if sleep.deadline() != deadline {
                    record.violated(job, "reset did not move the deadline".into());
                }
                (&mut sleep).await;
                early(Instant::now(), deadline, "reset sleep completed");
            }
            Action::Timeout(_) => unreachable!("made as a timeout"),
        },
        Made::Timeout {
            timeout,
            not_before,
            raced,
            completed,
        } => {
            let result = timeout.await;
            let now = Instant::now();
            let completed = completed.load(Ordering::Relaxed);
            match result {
                Ok(output) => {
                    if output != OUTPUT || !completed || matches!(raced, Raced::Pending) {
                        record.violated(
                            job,
                            format!("Ok({output}) from {raced:?}, completed: {completed}"),
                        );
                    }
                }
                Err(_) => {
                    early(now, not_before, "timeout elapsed");
                    if completed || matches!(raced, Raced::Yields(0)) {
                        record.violated(
                            job,
                            format!("Elapsed although {raced:?} completed ({completed})"),
                        );
                    }
                }
            }
        }
    }
    record.finish(job);
}

/// A timer or interval of a case: how it is made, and what is done with
/// it once made.
trait Plan: Clone + Send + Sync + 'static {
    type Made: Send + 'static;

    fn place(&self) -> Place;

    /// Creates it, recording what is wrong with its deadline.
    fn make(&self, job: usize, base: Instant, record: &Record) -> Self::Made;

    /// Polls it once where it was made, before it moves (`Place::Moved`).
    fn poll_once(&self, job: usize, made: &mut Self::Made, cx: &mut Context<'_>, record: &Record);

    /// Awaits it (or drops or resets it) as planned, checks and records.
    fn finish(
        self,
        job: usize,
        made: Self::Made,
        base: Instant,
        record: Arc<Record>,
    ) -> impl Future<Output = ()> + Send;
}

/// Job `job`: make and finish `plan` in the current place.
fn job<P: Plan>(job: usize, plan: P, base: Instant, record: Arc<Record>) -> Job {
    Box::pin(async move {
        let made = plan.make(job, base, &record);
        plan.finish(job, made, base, record).await;
    })
}

/// Job `job`, made in a `spawn_blocking` job and finished by the task that
/// started it.
fn made_in_blocking<P: Plan>(job: usize, plan: P, base: Instant, record: Arc<Record>) -> Job {
    Box::pin(async move {
        let (blocking_plan, blocking_record) = (plan.clone(), record.clone());
        let made =
            fastexec::spawn_blocking(move || blocking_plan.make(job, base, &blocking_record))
                .await
                .expect("making does not panic");
        plan.finish(job, made, base, record).await;
    })
}

/// Job `job`, made and polled once in a task of its own, then finished
/// where the caller awaits this (in the root future).
fn moved<P: Plan>(job: usize, plan: P, base: Instant, record: Arc<Record>) -> Job {
    Box::pin(async move {
        let (task_plan, task_record) = (plan.clone(), record.clone());
        let made = fastexec::spawn(async move {
            let mut made = task_plan.make(job, base, &task_record);
            std::future::poll_fn(|cx| {
                task_plan.poll_once(job, &mut made, cx, &task_record);
                Poll::Ready(())
            })
            .await;
            made
        })
        .await
        .expect("making does not panic");
        plan.finish(job, made, base, record).await;
    })
}

/// How the test thread waits for the jobs of a case.
#[derive(Debug, Clone, Copy)]
enum Wait {
    /// In `block_on` (the executor's, or the free function's), whose
    /// thread fires the executor's due timers as it wakes; the plain
    /// thread's jobs in a free `block_on` there.
    BlockOn,
    /// On a condition variable, after spawning the root future as a task
    /// (and the plain thread's jobs as tasks of the global executor): no
    /// thread outside the workers fires timers, unless a job's place is
    /// such a thread (`Place::Blocking`).
    Spawned,
}

/// Runs the jobs of `plans` in their places, the test thread waiting as
/// `wait` says, under the given executor or the global one, and checks
/// what they record.
fn run_case<P: Plan>(
    plans: Vec<P>,
    wait: Wait,
    executor: Option<&'static Executor>,
) -> Result<(), TestCaseError> {
    let record = Record::new(plans.len());
    let jobs = plans.len();
    let on_thread: Vec<bool> = plans
        .iter()
        .map(|plan| matches!(plan.place(), Place::Thread))
        .collect();
    let body_record = record.clone();
    let (after_block_on, after_all) = support::with_timeout(move || {
        let record = body_record;
        let base = Instant::now();
        let thread_jobs: Vec<Job> = plans
            .iter()
            .enumerate()
            .filter(|(_, plan)| matches!(plan.place(), Place::Thread))
            .map(|(i, plan)| job(i, plan.clone(), base, record.clone()))
            .collect();
        let thread = (!thread_jobs.is_empty()).then(|| {
            std::thread::spawn(move || match wait {
                Wait::BlockOn => drop(fastexec::block_on(futures::future::join_all(thread_jobs))),
                Wait::Spawned => thread_jobs
                    .into_iter()
                    .for_each(|job| fastexec::spawn(job).detach()),
            })
        });
        let root_record = record.clone();
        let root = async move {
            let record = root_record;
            let mut joined = Vec::new();
            for (i, plan) in plans.into_iter().enumerate() {
                let job_record = record.clone();
                match plan.place() {
                    Place::Task => drop(fastexec::spawn(job(i, plan, base, job_record))),
                    Place::Root => joined.push(job(i, plan, base, job_record)),
                    Place::Blocking => drop(fastexec::spawn_blocking(move || {
                        fastexec::block_on(job(i, plan, base, job_record))
                    })),
                    Place::NestedBlockOn => drop(fastexec::spawn(async move {
                        fastexec::block_on(job(i, plan, base, job_record))
                    })),
                    Place::MadeInBlocking => {
                        drop(fastexec::spawn(made_in_blocking(i, plan, base, job_record)))
                    }
                    Place::Moved => joined.push(moved(i, plan, base, job_record)),
                    Place::Thread => {}
                }
            }
            futures::future::join_all(joined).await;
        };
        match (wait, executor) {
            (Wait::BlockOn, Some(executor)) => executor.block_on(root),
            (Wait::BlockOn, None) => fastexec::block_on(root),
            (Wait::Spawned, Some(executor)) => executor.spawn(root).detach(),
            (Wait::Spawned, None) => fastexec::spawn(root).detach(),
        }
        // Read at once: `block_on` waits for everything but the thread.
        let after_block_on: Vec<u32> = (0..jobs).map(|i| record.finished(i)).collect();
        if let Some(thread) = thread {
            thread.join().expect("the plain thread's jobs do not panic");
        }
        record.wait_for(jobs);
        let after_all: Vec<u32> = (0..jobs).map(|i| record.finished(i)).collect();
        (after_block_on, after_all)
    });
    let violations = record.violations.lock().unwrap().clone();
    prop_assert!(violations.is_empty(), "{violations:#?}");
    let unfinished: Vec<usize> = (0..jobs).filter(|&i| after_all[i] != 1).collect();
    prop_assert!(
        unfinished.is_empty(),
        "jobs {unfinished:?} did not finish exactly once"
    );
    if let Wait::BlockOn = wait {
        // Jobs of the plain thread finish before its `block_on` returns;
        // all others before the executor's `block_on` does.
        let late: Vec<usize> = (0..jobs)
            .filter(|&i| !on_thread[i] && after_block_on[i] == 0)
            .collect();
        prop_assert!(late.is_empty(), "block_on returned before jobs {late:?}");
    }
    Ok(())
}

fn place() -> impl Strategy<Value = Place> {
    prop_oneof![
        3 => Just(Place::Task),
        2 => Just(Place::Root),
        1 => Just(Place::Blocking),
        1 => Just(Place::NestedBlockOn),
        1 => Just(Place::MadeInBlocking),
        1 => Just(Place::Moved),
        1 => Just(Place::Thread),
    ]
}

fn when() -> impl Strategy<Value = When> {
    prop_oneof![
        3 => (-3i8..=30).prop_map(When::At),
        1 => (0u8..=30).prop_map(When::After),
    ]
}

fn raced_future() -> impl Strategy<Value = Raced> {
    prop_oneof![
        Just(Raced::Pending),
        (0u8..4).prop_map(Raced::Yields),
        (0u8..4).prop_map(Raced::SentAfterYields),
        (-3i8..=30).prop_map(Raced::SentAt),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => Just(Action::Await),
        1 => (0u8..3).prop_map(Action::Drop),
        2 => (when(), 0u8..3).prop_map(|(when, yields)| Action::Reset(when, yields)),
        3 => raced_future().prop_map(Action::Timeout),
    ]
}

/// Property 1: sleeps, only awaited.
fn sleeps() -> impl Strategy<Value = Vec<TimerPlan>> {
    prop::collection::vec(
        (place(), when()).prop_map(|(place, when)| TimerPlan {
            place,
            when,
            action: Action::Await,
        }),
        1..40,
    )
}

/// Property 2: sleeps awaited, dropped, reset, and timeouts.
fn timers() -> impl Strategy<Value = Vec<TimerPlan>> {
    prop::collection::vec(
        (place(), when(), action()).prop_map(|(place, when, action)| TimerPlan {
            place,
            when,
            action,
        }),
        1..30,
    )
}

/// One step of an interval's life.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Await a tick.
    Tick,
    /// Block the thread this many grid steps (a busy task), then tick.
    StallThenTick(u8),
    /// Poll a tick once and drop it if pending.
    PollOnce,
    /// `Interval::reset`.
    Reset,
}

#[derive(Debug, Clone)]
struct IntervalPlan {
    place: Place,
    /// The period in grid steps.
    period: u8,
    /// `interval_at(base + steps × STEP)`, or `interval` if `None`.
    start: Option<i8>,
    steps: Vec<Step>,
}

/// What the checks of an interval's ticks remember.
struct Ticks {
    period: Duration,
    /// The grid's origin: the start, or the first tick after a reset.
    origin: Option<Instant>,
    /// Bounds on the next tick's scheduled instant known in advance: the
    /// start, or one period after a reset.
    expected: Option<(Instant, Instant)>,
    /// The last tick's scheduled instant, with instants read before it was
    /// awaited and after it returned.
    last: Option<(Instant, Instant, Instant)>,
}

impl Ticks {
    /// Checks a tick scheduled at `scheduled`, awaited from `before` to
    /// `after`; returns what is wrong, if anything.
    fn tick(&mut self, scheduled: Instant, before: Instant, after: Instant) -> Option<String> {
        let period = self.period;
        let wrong = if after < scheduled {
            Some(format!(
                "a tick returned {:?} before its instant",
                scheduled - after
            ))
        } else if self.last.is_some_and(|(last, _, _)| scheduled <= last) {
            Some("ticks not strictly increasing".into())
        } else if let Some((low, high)) = self.expected.take() {
            (scheduled < low || scheduled > high)
                .then(|| format!("tick at {scheduled:?}, expected between {low:?} and {high:?}"))
        } else if let (Some(origin), Some((last, last_before, last_after))) =
            (self.origin, self.last)
        {
            if (scheduled - origin).as_nanos() % period.as_nanos() != 0 {
                Some("a tick off the grid".into())
            } else if scheduled < last + period {
                Some("ticks less than a period apart".into())
            } else if scheduled < last_before {
                Some("a grid point already past was not skipped".into())
            } else if scheduled != last + period && scheduled - period >= last_after {
                Some("a grid point not yet due was skipped".into())
            } else {
                None
            }
        } else {
            None
        };
        self.origin.get_or_insert(scheduled);
        self.last = Some((scheduled, before, after));
        wrong
    }
}

impl Plan for IntervalPlan {
    /// The interval and bounds on its first tick's instant.
    type Made = (Interval, Instant, Instant);

    fn place(&self) -> Place {
        self.place
    }

    fn make(&self, _: usize, base: Instant, _: &Record) -> Self::Made {
        make_interval(self, base)
    }

    /// Nothing: a tick taken there would go unchecked.
    fn poll_once(&self, _: usize, _: &mut Self::Made, _: &mut Context<'_>, _: &Record) {}

    fn finish(
        self,
        job: usize,
        made: Self::Made,
        _: Instant,
        record: Arc<Record>,
    ) -> impl Future<Output = ()> + Send {
        tick_interval(job, self, made, record)
    }
}

/// The interval with the bounds its first tick must fall in.
fn make_interval(plan: &IntervalPlan, base: Instant) -> (Interval, Instant, Instant) {
    let period = STEP * u32::from(plan.period);
    match plan.start {
        Some(steps) => {
            let start = at(base, steps);
            (time::interval_at(start, period), start, start)
        }
        None => {
            let before = Instant::now();
            let interval = time::interval(period);
            (interval, before, Instant::now())
        }
    }
}

async fn tick_interval(
    job: usize,
    plan: IntervalPlan,
    (mut interval, low, high): (Interval, Instant, Instant),
    record: Arc<Record>,
) {
    let mut ticks = Ticks {
        period: interval.period(),
        origin: None,
        expected: Some((low, high)),
        last: None,
    };
    let check = |scheduled, before, after, ticks: &mut Ticks| {
        if let Some(wrong) = ticks.tick(scheduled, before, after) {
            record.violated(job, wrong);
        }
    };
    for step in &plan.steps {
        match *step {
            Step::Tick | Step::StallThenTick(_) => {
                if let Step::StallThenTick(steps) = *step {
                    std::thread::sleep(STEP * u32::from(steps));
                }
                let before = Instant::now();
                let scheduled = interval.tick().await;
                check(scheduled, before, Instant::now(), &mut ticks);
            }
            Step::PollOnce => {
                let before = Instant::now();
                if let Poll::Ready(scheduled) = futures::poll!(Box::pin(interval.tick())) {
                    check(scheduled, before, Instant::now(), &mut ticks);
                }
            }
            Step::Reset => {
                let before = Instant::now();
                interval.reset();
                let after = Instant::now();
                let period = interval.period();
                ticks.expected = Some((before + period, after + period));
                ticks.origin = None;
            }
        }
    }
    record.finish(job);
}

fn interval_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => Just(Step::Tick),
        2 => (1u8..12).prop_map(Step::StallThenTick),
        1 => Just(Step::PollOnce),
        1 => Just(Step::Reset),
    ]
}

fn intervals() -> impl Strategy<Value = Vec<IntervalPlan>> {
    let plan = (
        place(),
        1u8..=5,
        prop::option::of(-3i8..=10),
        prop::collection::vec(interval_step(), 1..8),
    )
        .prop_map(|(place, period, start, steps)| IntervalPlan {
            place,
            period,
            start,
            steps,
        });
    prop::collection::vec(plan, 1..4)
}

fn wait() -> impl Strategy<Value = Wait> {
    prop_oneof![Just(Wait::BlockOn), Just(Wait::Spawned)]
}

/// An executor of the simple scheduler (one thread runs tasks at a time,
/// `block_on` callers and its worker; `simple.rs`).
fn simple_executor() -> &'static Executor {
    static SIMPLE: OnceLock<Executor> = OnceLock::new();
    SIMPLE.get_or_init(|| {
        Executor::builder()
            .scheduler(fastexec::Scheduler::Simple)
            .seed(1)
            .build()
            .expect("start executor")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn sleeps_complete_never_early_one_worker(plans in sleeps(), wait in wait()) {
        run_case(plans, wait, Some(support::shared_executor(1)))?;
    }

    #[test]
    fn sleeps_complete_never_early_two_workers(plans in sleeps(), wait in wait()) {
        run_case(plans, wait, Some(support::shared_executor(2)))?;
    }

    #[test]
    fn sleeps_complete_never_early_three_workers(plans in sleeps(), wait in wait()) {
        run_case(plans, wait, Some(support::shared_executor(3)))?;
    }

    #[test]
    fn sleeps_complete_never_early_free_block_on(plans in sleeps(), wait in wait()) {
        run_case(plans, wait, None)?;
    }

    #[test]
    fn sleeps_complete_never_early_simple_scheduler(plans in sleeps(), wait in wait()) {
        run_case(plans, wait, Some(simple_executor()))?;
    }

    #[test]
    fn dropped_reset_and_raced_timers_one_worker(plans in timers(), wait in wait()) {
        run_case(plans, wait, Some(support::shared_executor(1)))?;
    }

    #[test]
    fn dropped_reset_and_raced_timers_two_workers(plans in timers(), wait in wait()) {
        run_case(plans, wait, Some(support::shared_executor(2)))?;
    }

    #[test]
    fn dropped_reset_and_raced_timers_three_workers(plans in timers(), wait in wait()) {
        run_case(plans, wait, Some(support::shared_executor(3)))?;
    }

    #[test]
    fn dropped_reset_and_raced_timers_free_block_on(plans in timers(), wait in wait()) {
        run_case(plans, wait, None)?;
    }

    #[test]
    fn dropped_reset_and_raced_timers_simple_scheduler(plans in timers(), wait in wait()) {
        run_case(plans, wait, Some(simple_executor()))?;
    }

    #[test]
    fn intervals_tick_on_the_grid_one_worker(plans in intervals(), wait in wait()) {
        run_case(plans, wait, Some(support::shared_executor(1)))?;
    }

    #[test]
    fn intervals_tick_on_the_grid_two_workers(plans in intervals(), wait in wait()) {
        run_case(plans, wait, Some(support::shared_executor(2)))?;
    }

    #[test]
    fn intervals_tick_on_the_grid_three_workers(plans in intervals(), wait in wait()) {
        run_case(plans, wait, Some(support::shared_executor(3)))?;
    }

    #[test]
    fn intervals_tick_on_the_grid_free_block_on(plans in intervals(), wait in wait()) {
        run_case(plans, wait, None)?;
    }

    #[test]
    fn intervals_tick_on_the_grid_simple_scheduler(plans in intervals(), wait in wait()) {
        run_case(plans, wait, Some(simple_executor()))?;
    }
}
