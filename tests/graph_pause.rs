//! Pause, resume and cancel through `RunHandle`: a pending or ready task
//! pauses at once, a running one at its next checkpoint; a checkpoint that
//! does not come within the pause timeout cancels the task (for that
//! reason, not as a timeout of its own); resume restores the state it was paused from; cancel is
//! idempotent and propagates downstream.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fastexec::graph::{
    Blocked, CancelReason, Graph, GraphError, PausedFrom, RunHandle, SchedulerConfig, Task,
    TaskError, TaskState,
};
use support::{checkpointed_task, gated_task, within, Gate};

/// Starts a graph of one task, "w", and pauses it at the checkpoint its
/// body reaches once it is running.
fn run_paused_at_checkpoint(config: SchedulerConfig) -> RunHandle<u32> {
    let (started, proceed) = (Gate::new(), Gate::new());
    let mut g = Graph::<u32>::with_config(config);
    g.add(checkpointed_task("w", &started, &proceed)).unwrap();
    let run = g.start();
    within(30, move || started.wait_blocking());
    let r = run.clone();
    block(async move {
        let go = async {
            proceed.open();
        };
        fastexec::join!(r.pause("w"), go).0
    })
    .unwrap();
    assert_eq!(run.state("w"), Some(TaskState::Paused));
    run
}

fn block<F: std::future::Future + Send + 'static>(f: F) -> F::Output
where
    F::Output: Send + 'static,
{
    within(30, move || fastexec::block_on(f))
}

#[test]
fn a_pending_task_pauses_at_once_and_resumes_as_ready_once_its_deps_completed() {
    let (started, release) = (Gate::new(), Gate::new());
    let mut g = Graph::<u32>::new();
    g.add(gated_task("dep", &started, &release)).unwrap();
    g.add(Task::new("after", |inp| async move { Ok(inp[0] + 1) }).after(["dep"]))
        .unwrap();
    let run = g.start();
    let r = run.clone();
    block(async move { r.pause("after").await }).unwrap();
    assert_eq!(run.state("after"), Some(TaskState::Paused));
    assert_eq!(
        run.why("after").unwrap(),
        Some(Blocked::Paused {
            from: PausedFrom::Pending
        })
    );
    // Resumed while its dependency still runs: pending again.
    run.resume("after").unwrap();
    assert_eq!(run.state("after"), Some(TaskState::Pending));
    let r = run.clone();
    block(async move { r.pause("after").await }).unwrap();

    release.open();
    let r = run.clone();
    block(async move { r.wait("dep").await }).unwrap();
    // Its dependency completed, but a paused task does not start.
    assert_eq!(run.state("after"), Some(TaskState::Paused));
    run.resume("after").unwrap();
    let r = run.clone();
    assert_eq!(*block(async move { r.wait("after").await }).unwrap(), 2);
    drop(started);
}

#[test]
fn a_ready_task_pauses_at_once_and_resumes_as_ready() {
    // One CPU slot held by `blocker`, so `queued` stays ready.
    let mut g = Graph::<u32>::with_config(SchedulerConfig::new().with_cpu_slots(1));
    let (started, release) = (Gate::new(), Gate::new());
    g.add(gated_task("blocker", &started, &release).priority(1))
        .unwrap();
    g.add(Task::new("queued", |_| async { Ok(7) })).unwrap();
    let run = g.start();
    within(30, {
        let started = started.clone();
        move || started.wait_blocking()
    });
    assert_eq!(run.state("queued"), Some(TaskState::Ready));
    let r = run.clone();
    block(async move { r.pause("queued").await }).unwrap();
    assert_eq!(run.state("queued"), Some(TaskState::Paused));

    release.open();
    let r = run.clone();
    block(async move { r.wait("blocker").await }).unwrap();
    // The slot is free, but the paused task is out of the ready set.
    assert_eq!(run.state("queued"), Some(TaskState::Paused));
    run.resume("queued").unwrap();
    let r = run.clone();
    assert_eq!(*block(async move { r.wait("queued").await }).unwrap(), 7);
}

#[test]
fn a_running_task_pauses_at_its_next_checkpoint_and_resume_lets_it_go_on() {
    let (started, proceed) = (Gate::new(), Gate::new());
    let rounds = Arc::new(AtomicUsize::new(0));
    let mut g = Graph::<usize>::new();
    let (s, p, n) = (started.clone(), proceed.clone(), rounds.clone());
    g.add(Task::new("worker", move |inp| {
        let (s, p, n) = (s.clone(), p.clone(), n.clone());
        async move {
            s.open();
            p.wait().await;
            for _ in 0..3 {
                inp.checkpoint().await?;
                n.fetch_add(1, Ordering::SeqCst);
            }
            Ok(n.load(Ordering::SeqCst))
        }
    }))
    .unwrap();
    g.add(Task::new("next", |inp| async move { Ok(inp[0] * 10) }).after(["worker"]))
        .unwrap();
    let run = g.start();
    within(30, move || started.wait_blocking());
    assert_eq!(run.state("worker"), Some(TaskState::Running));
    assert_eq!(run.why("worker").unwrap(), None);

    // Request the pause, then let the body reach its first checkpoint.
    let r = run.clone();
    block(async move {
        let pause = r.pause("worker");
        let go = async {
            proceed.open();
        };
        let (paused, ()) = fastexec::join!(pause, go);
        paused
    })
    .unwrap();
    assert_eq!(run.state("worker"), Some(TaskState::Paused));
    assert_eq!(
        rounds.load(Ordering::SeqCst),
        0,
        "paused at the first checkpoint"
    );
    assert_eq!(
        run.why("worker").unwrap(),
        Some(Blocked::Paused {
            from: PausedFrom::Running
        })
    );
    run.resume("worker").unwrap();
    let report = block(async move { run.wait_all().await });
    assert!(report.is_success(), "{report}");
    assert_eq!(report.output("next"), Some(&30));
    assert_eq!(report.task("worker").unwrap().attempts, 1);
}

/// Documented on `RunHandle::pause`: a task paused at a checkpoint keeps
/// its budget, so with one CPU slot a task added meanwhile stays ready
/// (budget full) until the paused one is resumed and ends.
#[test]
fn a_task_paused_at_a_checkpoint_keeps_its_budget() {
    let run = run_paused_at_checkpoint(SchedulerConfig::new().with_cpu_slots(1));
    let why = run.why("w").unwrap().unwrap();
    assert!(why.to_string().contains("holding its budget"), "{why}");

    run.add_task(Task::new("other", |_| async { Ok(2) }))
        .unwrap();
    assert_eq!(run.state("other"), Some(TaskState::Ready));
    assert!(
        matches!(run.why("other").unwrap(), Some(Blocked::BudgetFull(_))),
        "{:?}",
        run.why("other")
    );
    run.resume("w").unwrap();
    let report = block(async move { run.wait_all().await });
    assert!(report.is_success(), "{report}");
    let (w, other) = (report.task("w").unwrap(), report.task("other").unwrap());
    assert!(other.start.unwrap() >= w.end.unwrap(), "{report}");
}

#[test]
fn a_checkpoint_that_does_not_come_in_time_cancels_the_task() {
    let timeout = Duration::from_millis(50);
    let config = SchedulerConfig::new().with_pause_timeout(timeout);
    let mut g = Graph::<u32>::with_config(config);
    let (started, never) = (Gate::new(), Gate::new());
    g.add(gated_task("stuck", &started, &never)).unwrap();
    g.add(Task::new("child", |_| async { Ok(2) }).after(["stuck"]))
        .unwrap();
    let run = g.start();
    within(30, move || started.wait_blocking());
    let r = run.clone();
    let err = block(async move { r.pause("stuck").await }).unwrap_err();
    assert!(
        matches!(err, GraphError::PauseTimedOut { ref id, timeout: t } if id.as_str() == "stuck" && t == timeout),
        "{err}"
    );
    let report = block(async move { run.wait_all().await });
    let stuck = report.task("stuck").unwrap();
    assert_eq!(stuck.state, TaskState::Cancelled);
    assert!(matches!(
        stuck.error,
        Some(TaskError::Cancelled(CancelReason::PauseTimedOut(t))) if t == timeout
    ));
    let child = report.task("child").unwrap();
    assert_eq!(child.state, TaskState::Cancelled);
    assert!(matches!(
        &child.error,
        Some(TaskError::Cancelled(CancelReason::Upstream(id))) if id.as_str() == "stuck"
    ));
    drop(never);
}

#[test]
fn cancel_is_idempotent_and_propagates_from_a_paused_task() {
    let mut g = Graph::<u32>::new();
    let (started, release) = (Gate::new(), Gate::new());
    g.add(gated_task("root", &started, &release)).unwrap();
    g.add(Task::new("mid", |_| async { Ok(1) }).after(["root"]))
        .unwrap();
    g.add(Task::new("leaf", |_| async { Ok(2) }).after(["mid"]))
        .unwrap();
    let run = g.start();
    let r = run.clone();
    block(async move { r.pause("mid").await }).unwrap();
    run.cancel("mid").unwrap();
    run.cancel("mid").unwrap();
    assert_eq!(run.state("mid"), Some(TaskState::Cancelled));
    assert_eq!(run.state("leaf"), Some(TaskState::Cancelled));
    // Ended tasks can no longer be paused or resumed.
    assert!(matches!(
        run.resume("mid"),
        Err(GraphError::TaskEnded { ref id, state: TaskState::Cancelled }) if id.as_str() == "mid"
    ));
    release.open();
    let report = block(async move { run.wait_all().await });
    assert_eq!(report.task("root").unwrap().state, TaskState::Completed);
    let leaf = report.task("leaf").unwrap();
    assert!(matches!(
        &leaf.error,
        Some(TaskError::Cancelled(CancelReason::Upstream(id))) if id.as_str() == "mid"
    ));
    assert!(matches!(
        &report.task("mid").unwrap().error,
        Some(TaskError::Cancelled(CancelReason::Requested))
    ));
    drop(started);
}

#[test]
fn cancelling_a_task_paused_at_a_checkpoint_ends_it() {
    let run = run_paused_at_checkpoint(SchedulerConfig::new());
    run.cancel("w").unwrap();
    let report = block(async move { run.wait_all().await });
    let w = report.task("w").unwrap();
    assert_eq!(w.state, TaskState::Cancelled);
    assert!(report.to_string().contains("cancelled"));
}
