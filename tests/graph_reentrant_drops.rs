//! User values the graph lets go of (a task's output, a body's error, a
//! body and what it captured) are dropped outside the run's lock, and a
//! panic from their destructor fails nothing.
//!
//! Their destructors are user code, which may call into the run (here it
//! asks for a task's state, which takes the run's lock) or panic. Before
//! the fix some were dropped while the run's lock was held:
//!
//! * the output of an attempt whose task was cancelled while it ran
//!   (dropped by whoever recorded the attempt: a runner, or a driver);
//! * the error of a failed attempt, when the task's next outcome replaced
//!   it (the next attempt's success or failure, a cancel or a stop while it
//!   waited to retry), and the error of an attempt whose task was
//!   cancelled while it ran;
//! * the tasks `RunHandle::add_task` refused, and the body of a task added
//!   in a terminal state (to a stopped run): dropped in the middle of
//!   inserting it.
//!
//! Such a destructor that called into the run deadlocked (the lock is not
//! re-entrant); one that panicked unwound out of the runner or driver with
//! the lock held (the run was cancelled as `Internal`), out of `cancel` in
//! the middle of the transition (the cancel was lost and the task retried),
//! or out of `add_task` with the task's id indexed and no node for it.
//! Now these values are dropped after the lock is released, quietly (a
//! panic is caught; the panic hook reports it) where the graph drops them.
//!
//! A sync attempt that returned past its time limit had its output dropped
//! outside the lock but with no `catch_unwind`: a panic there unwound out of
//! the runner, cancelling the whole run. It is dropped quietly too.

mod support;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fastexec::graph::{
    CancelReason, Graph, GraphError, Report, RunHandle, Task, TaskError, TaskState,
};
use support::{
    fixed_backoff, quiet_panics, wait_for_first_failure, within, DropCounter, Gate, PanicOnDrop,
    PANIC_ON_DROP, TIMEOUT,
};

/// What a destructor of this test's values does.
type Hook = Box<dyn FnOnce() + Send + Sync>;

/// The output type of these graphs: runs its hook, if any, when dropped.
struct Out {
    value: u32,
    hook: Option<Hook>,
}

impl Out {
    fn plain(value: u32) -> Self {
        Out { value, hook: None }
    }

    fn with(hook: Hook) -> Self {
        Out {
            value: 0,
            hook: Some(hook),
        }
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        if let Some(hook) = self.hook.take() {
            hook();
        }
    }
}

/// A body's error that runs its hook when dropped.
struct Failure(Option<Hook>);

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Failure")
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a failure whose destructor is user code")
    }
}

impl std::error::Error for Failure {}

impl Drop for Failure {
    fn drop(&mut self) {
        if let Some(hook) = self.0.take() {
            hook();
        }
    }
}

fn failure(hook: Hook) -> fastexec::graph::BoxError {
    Box::new(Failure(Some(hook)))
}

/// A hook that asks `run` for the state of `id` (which takes the run's
/// lock) and sends what it saw.
fn asks(run: &RunHandle<Out>, id: &'static str, seen: &Sender<Option<TaskState>>) -> Hook {
    let (run, seen) = (run.clone(), seen.clone());
    Box::new(move || {
        let _ = seen.send(run.state(id));
    })
}

/// A hook that panics (dropping a [`PanicOnDrop`] counted by `drops`).
fn panics(drops: &DropCounter) -> Hook {
    let bomb = PanicOnDrop::new(drops.guard());
    Box::new(move || drop(bomb))
}

/// What the hook of [`asks`] saw (the test fails if it never ran).
fn seen(rx: &Receiver<Option<TaskState>>) -> Option<TaskState> {
    rx.recv_timeout(TIMEOUT).expect("the destructor ran")
}

/// Runs `g` on an executor of one worker (one runner takes the tasks ready
/// at the start in one batch, in the order they were added).
fn run_on_one_worker(g: Graph<Out>) -> Report<Out> {
    within(10, move || {
        let executor = fastexec::Executor::builder().threads(1).build().unwrap();
        executor.block_on(g.run())
    })
}

/// The reason task `id` of `report` was cancelled with.
fn cancel_reason(report: &Report<Out>, id: &str) -> Option<CancelReason> {
    match &report.task(id)?.error {
        Some(TaskError::Cancelled(reason)) => Some(reason.clone()),
        _ => None,
    }
}

// Outputs and errors of attempts whose task was cancelled while they ran.

/// Runs the one task `x` (made of a sender for [`asks`]), whose attempt
/// cancels `x` and ends with a value whose destructor asks for the state
/// of `x`: checks that it saw `x` cancelled.
fn check_cancelled_itself(x: impl FnOnce(Sender<Option<TaskState>>) -> Task<Out>) {
    let (tx, rx) = mpsc::channel();
    let mut g = Graph::<Out>::new();
    g.add(x(tx)).unwrap();
    let report = run_on_one_worker(g);
    assert_eq!(seen(&rx), Some(TaskState::Cancelled));
    assert_eq!(cancel_reason(&report, "x"), Some(CancelReason::Requested));
}

/// A sync body that cancels its own task, then returns an output whose
/// destructor asks the run for the task's state. A runner records it.
#[test]
fn a_runner_drops_the_output_of_a_cancelled_attempt_outside_the_lock() {
    check_cancelled_itself(|tx| {
        Task::sync("x", move |inp| {
            inp.run().cancel("x").unwrap();
            Ok(Out::with(asks(inp.run(), "x", &tx)))
        })
    });
}

/// The same from an async body whose attempt went asynchronous first: a
/// driver records it.
#[test]
fn a_driver_drops_the_output_of_a_cancelled_attempt_outside_the_lock() {
    check_cancelled_itself(|tx| {
        Task::new("x", move |inp| {
            let tx = tx.clone();
            async move {
                fastexec::yield_now().await;
                inp.run().cancel("x").unwrap();
                Ok(Out::with(asks(inp.run(), "x", &tx)))
            }
        })
    });
}

/// Such an output whose destructor panics, in the batch of a task of its
/// own: the panic fails nothing (before, it unwound out of the runner with
/// the lock held, and the run was cancelled, `other` with it).
#[test]
fn an_output_of_a_cancelled_attempt_whose_drop_panics_fails_nothing() {
    quiet_panics(PANIC_ON_DROP);
    let drops = DropCounter::new();
    let mut g = Graph::<Out>::new();
    let made = drops.clone();
    g.add(Task::sync("x", move |inp| {
        inp.run().cancel("x").unwrap();
        Ok(Out::with(panics(&made)))
    }))
    .unwrap();
    g.add(Task::sync("other", |_| Ok(Out::plain(2)))).unwrap();
    let report = run_on_one_worker(g);
    assert_eq!(drops.count(), 1, "the output was dropped");
    assert_eq!(
        cancel_reason(&report, "x"),
        Some(CancelReason::Requested),
        "{report}"
    );
    assert_eq!(report.output("other").map(|o| o.value), Some(2), "{report}");
}

// Errors of failed attempts.

/// The body fails its first attempt with an error whose destructor asks
/// for the task's state, and completes its second; `give_up` (if any) is
/// done to the run while the task waits to retry (its backoff is an hour
/// then, a millisecond otherwise). Returns the state the destructor saw
/// and the report.
fn failed_once(give_up: Option<fn(&RunHandle<Out>)>) -> (Option<TaskState>, Report<Out>) {
    within(10, move || {
        let (tx, rx) = mpsc::channel();
        let backoff = match give_up {
            Some(_) => Duration::from_secs(3600),
            None => Duration::from_millis(1),
        };
        let mut g = Graph::<Out>::new();
        g.add(
            Task::sync("x", move |inp| match inp.attempt() {
                1 => Err(failure(asks(inp.run(), "x", &tx))),
                _ => Ok(Out::plain(2)),
            })
            .retry(fixed_backoff(2, backoff)),
        )
        .unwrap();
        let run = g.start();
        if let Some(give_up) = give_up {
            wait_for_first_failure(&run, "x");
            give_up(&run);
        }
        let report = fastexec::block_on(run.wait_all());
        (seen(&rx), report)
    })
}

/// The error of the failed attempt goes when the next one completes the
/// task (a driver records it), not with the run.
#[test]
fn an_error_replaced_by_the_next_attempts_output_is_dropped_outside_the_lock() {
    let (saw, report) = failed_once(None);
    assert_eq!(saw, Some(TaskState::Completed));
    assert_eq!(report.output("x").map(|o| o.value), Some(2), "{report}");
}

#[test]
fn an_error_replaced_by_a_cancel_is_dropped_outside_the_lock() {
    let (saw, report) = failed_once(Some(|run| run.cancel("x").unwrap()));
    assert_eq!(saw, Some(TaskState::Cancelled));
    assert_eq!(cancel_reason(&report, "x"), Some(CancelReason::Requested));
}

#[test]
fn an_error_replaced_by_a_stop_is_dropped_outside_the_lock() {
    let (saw, report) = failed_once(Some(|run| run.stop()));
    assert_eq!(saw, Some(TaskState::Cancelled));
    assert_eq!(cancel_reason(&report, "x"), Some(CancelReason::Stopped));
}

/// A task waiting to retry whose last error's destructor panics is
/// cancelled: the cancel takes effect (before, the panic unwound out of
/// `cancel` in the middle of the transition: the task stayed running, was
/// never counted as ended, and its next attempt ran when due).
#[test]
fn a_cancel_whose_replaced_error_panics_when_dropped_takes_effect() {
    quiet_panics(PANIC_ON_DROP);
    let drops = DropCounter::new();
    let made = drops.clone();
    let report = within(10, move || {
        let mut g = Graph::<Out>::new();
        g.add(
            Task::sync("x", move |inp| match inp.attempt() {
                1 => Err(failure(panics(&made))),
                _ => Ok(Out::plain(2)),
            })
            .retry(fixed_backoff(2, Duration::from_millis(20))),
        )
        .unwrap();
        let run = g.start();
        wait_for_first_failure(&run, "x");
        run.cancel("x").unwrap();
        assert_eq!(run.state("x"), Some(TaskState::Cancelled));
        fastexec::block_on(run.wait_all())
    });
    assert_eq!(drops.count(), 1, "the error was dropped");
    let x = report.task("x").unwrap();
    assert_eq!(x.attempts, 1, "{report}");
    assert_eq!(cancel_reason(&report, "x"), Some(CancelReason::Requested));
}

/// A sync body that cancels its own task, then fails with an error whose
/// destructor asks for the task's state.
#[test]
fn the_error_of_a_cancelled_attempt_is_dropped_outside_the_lock() {
    check_cancelled_itself(|tx| {
        Task::sync("x", move |inp| {
            inp.run().cancel("x").unwrap();
            Err(failure(asks(inp.run(), "x", &tx)))
        })
    });
}

// Bodies of tasks added while the run goes on.

/// A run whose task `held` waits for `release`, once it is running.
fn held_run(release: &Gate) -> RunHandle<Out> {
    let (started, release) = (Gate::new(), release.clone());
    let on_start = started.clone();
    let mut g = Graph::<Out>::new();
    g.add(Task::new("held", move |_| {
        let (on_start, release) = (on_start.clone(), release.clone());
        async move {
            on_start.open();
            release.wait().await;
            Ok(Out::plain(1))
        }
    }))
    .unwrap();
    let run = g.start();
    started.wait_blocking();
    run
}

/// A task `id` whose body captures a value running `hook` when dropped.
fn capturing(id: &str, hook: Hook) -> Task<Out> {
    let captured = Out::with(hook);
    Task::sync(id, move |_| {
        // The whole value, not only its field (which a closure would
        // capture alone).
        let captured = &captured;
        Ok(Out::plain(captured.value))
    })
}

/// A task refused by `add_task` (its id is taken) is dropped after the
/// run's lock is released.
#[test]
fn a_task_refused_while_the_run_goes_on_is_dropped_outside_the_lock() {
    let (tx, rx) = mpsc::channel();
    let state = within(10, move || {
        let release = Gate::new();
        let run = held_run(&release);
        let err = run
            .add_task(capturing("held", asks(&run, "held", &tx)))
            .unwrap_err();
        assert!(matches!(err, GraphError::DuplicateId(_)), "{err}");
        release.open();
        fastexec::block_on(run.wait_all());
        seen(&rx)
    });
    assert_eq!(state, Some(TaskState::Running));
}

/// The same once the run has finished (`GraphError::Finished`).
#[test]
fn a_task_refused_after_the_run_is_dropped_outside_the_lock() {
    let (tx, rx) = mpsc::channel();
    let state = within(10, move || {
        let mut g = Graph::<Out>::new();
        g.add(Task::sync("a", |_| Ok(Out::plain(1)))).unwrap();
        let run = g.start();
        fastexec::block_on(run.wait_all());
        let err = run
            .add_task(capturing("late", asks(&run, "a", &tx)))
            .unwrap_err();
        assert!(matches!(err, GraphError::Finished), "{err}");
        seen(&rx)
    });
    assert_eq!(state, Some(TaskState::Completed));
}

/// A task added to a stopped run is cancelled as it is added; its body is
/// retired with the others, and dropped (outside the lock) when the run
/// ends.
#[test]
fn the_body_of_a_task_added_cancelled_is_dropped_outside_the_lock() {
    let (tx, rx) = mpsc::channel();
    let state = within(10, move || {
        let release = Gate::new();
        let run = held_run(&release);
        run.stop();
        run.add_task(capturing("late", asks(&run, "late", &tx)))
            .unwrap();
        assert_eq!(run.state("late"), Some(TaskState::Cancelled));
        release.open();
        fastexec::block_on(run.wait_all());
        seen(&rx)
    });
    assert_eq!(state, Some(TaskState::Cancelled));
}

/// The same with a captured value whose destructor panics while `armed`
/// (before the fix, the panic came out of `add_task` with the task's id
/// indexed and no node for it: asking for its state then panicked). It is
/// disarmed before the run ends, so that the drop with the other bodies
/// does not panic the waiter.
#[test]
fn a_task_added_cancelled_whose_body_panics_when_dropped_is_still_added_whole() {
    quiet_panics(PANIC_ON_DROP);
    let drops = DropCounter::new();
    let guard = drops.guard();
    let armed = Arc::new(AtomicBool::new(true));
    let on_drop = Arc::clone(&armed);
    let hook: Hook = Box::new(move || {
        drop(guard);
        if on_drop.load(Ordering::SeqCst) {
            panic!("{PANIC_ON_DROP}");
        }
    });
    let report = within(10, move || {
        let release = Gate::new();
        let run = held_run(&release);
        run.stop();
        run.add_task(capturing("late", hook)).unwrap();
        assert_eq!(run.state("late"), Some(TaskState::Cancelled));
        armed.store(false, Ordering::SeqCst);
        release.open();
        fastexec::block_on(run.wait_all())
    });
    assert_eq!(drops.count(), 1, "the body was dropped");
    assert_eq!(cancel_reason(&report, "late"), Some(CancelReason::Stopped));
    assert_eq!(report.output("held").map(|o| o.value), Some(1));
}

// A sync attempt past its time limit.

/// A sync body that returns after its time limit an output whose
/// destructor panics: the attempt times out, and nothing else fails
/// (before, the panic unwound out of the runner, which cancelled the run).
#[test]
fn the_output_of_a_sync_attempt_that_overran_may_panic_when_dropped() {
    quiet_panics(PANIC_ON_DROP);
    let drops = DropCounter::new();
    let made = drops.clone();
    let limit = Duration::from_millis(1);
    let mut g = Graph::<Out>::new();
    g.add(
        Task::sync("slow", move |_| {
            let began = Instant::now();
            while began.elapsed() <= limit {
                std::hint::spin_loop();
            }
            Ok(Out::with(panics(&made)))
        })
        .timeout(limit),
    )
    .unwrap();
    g.add(Task::sync("other", |_| Ok(Out::plain(2)))).unwrap();
    let report = run_on_one_worker(g);
    assert_eq!(drops.count(), 1, "the output was dropped");
    let slow = report.task("slow").unwrap();
    assert_eq!(slow.state, TaskState::Failed, "{report}");
    assert!(
        matches!(slow.error, Some(TaskError::TimedOut(d)) if d == limit),
        "{report}"
    );
    assert_eq!(report.output("other").map(|o| o.value), Some(2), "{report}");
}
