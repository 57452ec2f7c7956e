//! Cancelling a `TaskGroup` a run was started in cancels the run: its
//! runners, hand-offs and drivers are members of that group, and one of
//! them dropped before it finished its work ends the whole run (every task
//! not yet ended is cancelled with `CancelReason::GroupCancelled`), so that
//! `wait_all` returns rather than waiting for a task no one carries on. The
//! executor shutting down ends the run the same way, with a reason of its
//! own, `CancelReason::ExecutorShutdown`.
//! Dropping them on purpose (a cancel, a stop) and finishing normally do
//! not; neither does cancelling a group the run was not started in.

mod support;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fastexec::graph::{CancelReason, Graph, Report, Task, TaskError, TaskState};
use fastexec::TaskGroup;
use support::{within, Gate};

fn cancelled_by_group(report: &Report<u32>, id: &str) -> bool {
    let task = report.task(id).unwrap();
    task.state == TaskState::Cancelled
        && matches!(
            task.error,
            Some(TaskError::Cancelled(CancelReason::GroupCancelled))
        )
}

/// How task `id`'s error reads, as a user sees it.
fn error_text(report: &Report<u32>, id: &str) -> String {
    report.task(id).unwrap().error.as_ref().unwrap().to_string()
}

/// A task that records that it ran.
fn flagged(id: &str, ran: &Arc<AtomicBool>) -> Task<u32> {
    let ran = ran.clone();
    Task::new(id, move |_| {
        ran.store(true, Ordering::SeqCst);
        async { Ok(2) }
    })
}

#[test]
fn cancelling_the_group_ends_a_task_its_driver_held_and_the_run() {
    let report = within(10, || {
        let mut g = Graph::<u32>::new();
        let (started, never) = (Gate::new(), Gate::new());
        // "held" suspends on a gate that never opens: its attempt moves to
        // a driver, a member of the group.
        g.add(support::gated_task("held", &started, &never))
            .unwrap();
        // Another driver, which the first one dropped aborts (or which the
        // group's cancel drops first).
        let other_started = Gate::new();
        g.add(support::gated_task("held-too", &other_started, &never))
            .unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        g.add(flagged("after", &ran).after(["held"])).unwrap();
        g.add(flagged("after-after", &ran).after(["after"]))
            .unwrap();
        let report = fastexec::block_on(async {
            let group = TaskGroup::new();
            let run = group.spawn(async move { g.start() }).await.unwrap();
            started.wait().await;
            other_started.wait().await;
            assert_eq!(run.state("held"), Some(TaskState::Running));
            group.cancel();
            // Awaited from the block_on root, outside the group.
            let report = run.wait_all().await;
            group.wait().await;
            report
        });
        assert!(!ran.load(Ordering::SeqCst), "a dependent of `held` ran");
        report
    });
    assert!(cancelled_by_group(&report, "held"), "{report}");
    assert!(cancelled_by_group(&report, "held-too"), "{report}");
    for id in ["after", "after-after"] {
        assert_eq!(report.task(id).unwrap().state, TaskState::Cancelled);
        assert_eq!(report.task(id).unwrap().attempts, 0);
    }
    assert_eq!(
        error_text(&report, "held"),
        "cancelled (the run's task group was cancelled)"
    );
}

#[test]
fn cancelling_the_group_between_batches_leaves_no_ready_task_unstarted() {
    const TASKS: usize = 2000;
    let report = within(20, || {
        // One worker: one runner, which runs tasks in batches and yields to
        // the executor every 128 of them; the group's cancel (made by a task
        // of the run) drops it at that yield, or drops the hand-off of the
        // rest of a long batch before it starts.
        let ex = support::executor(1);
        let group = Arc::new(TaskGroup::new());
        let mut g = Graph::<u32>::with_capacity(TASKS);
        let ran = Arc::new(AtomicUsize::new(0));
        for n in 0..TASKS {
            let (group, ran) = (group.clone(), ran.clone());
            g.add(Task::sync(format!("t{n}"), move |_| {
                if ran.fetch_add(1, Ordering::SeqCst) == 10 {
                    group.cancel();
                }
                Ok(1)
            }))
            .unwrap();
        }
        let inner = group.clone();
        let report = ex.block_on(async move {
            let run = inner.spawn(async move { g.start() }).await.unwrap();
            run.wait_all().await
        });
        assert!(ran.load(Ordering::SeqCst) < TASKS, "every task ran");
        drop(ex);
        report
    });
    let mut cancelled = 0;
    for task in report.tasks() {
        match task.state {
            TaskState::Completed => {}
            TaskState::Cancelled => {
                assert!(cancelled_by_group(&report, task.id.as_str()), "{report}");
                cancelled += 1;
            }
            other => panic!("task {} left {other:?}", task.id),
        }
    }
    assert!(cancelled > 0);
}

#[test]
fn a_run_in_a_group_that_is_not_cancelled_completes() {
    let report = within(20, || {
        let ex = support::executor(2);
        let (started, release) = (Gate::new(), Gate::new());
        let mut g = Graph::<u32>::new();
        g.add(support::gated_task("gated", &started, &release))
            .unwrap();
        for r in 0..20 {
            for c in 0..20 {
                let task = Task::sync(support::cell(r, c), |_| Ok(1));
                g.add(task.after(support::lattice_deps(r, c))).unwrap();
            }
        }
        g.add(
            Task::new("retried", |inp| async move {
                if inp.attempt() == 1 {
                    Err("first attempt fails".into())
                } else {
                    Ok(3)
                }
            })
            .retry(support::fixed_backoff(2, Duration::from_millis(1))),
        )
        .unwrap();
        g.add(Task::new("last", |_| async { Ok(4) }).after(["gated", "19,19", "retried"]))
            .unwrap();
        ex.block_on(async move {
            let group = TaskGroup::new();
            let run = group.spawn(async move { g.start() }).await.unwrap();
            started.wait().await;
            release.open();
            let report = run.wait_all().await;
            group.wait().await;
            assert!(!group.is_cancelled());
            report
        })
    });
    assert!(
        report
            .tasks()
            .iter()
            .all(|t| t.state == TaskState::Completed),
        "{report}"
    );
    assert_eq!(report.output("last"), Some(&4));
}

#[test]
fn a_cancel_or_stop_that_aborts_a_driver_does_not_cancel_the_run() {
    let report = within(10, || {
        let mut g = Graph::<u32>::new();
        let (a_started, a_never) = (Gate::new(), Gate::new());
        let (b_started, b_release) = (Gate::new(), Gate::new());
        g.add(support::gated_task("a", &a_started, &a_never))
            .unwrap();
        g.add(support::gated_task("b", &b_started, &b_release))
            .unwrap();
        g.add(Task::new("after-a", |_| async { Ok(2) }).after(["a"]))
            .unwrap();
        g.add(Task::new("after-b", |_| async { Ok(2) }).after(["b"]))
            .unwrap();
        fastexec::block_on(async {
            let group = TaskGroup::new();
            let run = group.spawn(async move { g.start() }).await.unwrap();
            a_started.wait().await;
            b_started.wait().await;
            // Aborts "a"'s driver, a member of the group: no loss.
            run.cancel("a").unwrap();
            run.wait("a").await.unwrap_err();
            // Lets "b" finish its attempt, then cancels what is left.
            run.stop();
            b_release.open();
            run.wait_all().await
        })
    });
    let reason = |id: &str| match &report.task(id).unwrap().error {
        Some(TaskError::Cancelled(reason)) => reason.clone(),
        other => panic!("{id}: {other:?}"),
    };
    assert_eq!(reason("a"), CancelReason::Requested);
    assert_eq!(reason("after-a"), CancelReason::Upstream("a".into()));
    assert_eq!(report.output("b"), Some(&1));
    assert_eq!(reason("after-b"), CancelReason::Stopped);
}

#[test]
fn an_executor_shutting_down_mid_run_cancels_the_run() {
    let report = within(10, || {
        let ex = support::executor(2);
        let (started, never) = (Gate::new(), Gate::new());
        let mut g = Graph::<u32>::new();
        g.add(support::gated_task("held", &started, &never))
            .unwrap();
        g.add(Task::new("after", |_| async { Ok(2) }).after(["held"]))
            .unwrap();
        let other_started = Gate::new();
        g.add(support::gated_task("held-too", &other_started, &never))
            .unwrap();
        // Started from a task in no group (a run started in a block_on would
        // keep that block_on waiting for the held task).
        let start = ex.spawn(async move { g.start() });
        let run = futures::executor::block_on(start).unwrap();
        started.wait_blocking();
        other_started.wait_blocking();
        // Drops the drivers of "held" and "held-too", still waiting at
        // their gate: the first one dropped aborts the other.
        drop(ex);
        futures::executor::block_on(run.wait_all())
    });
    // A reason of its own: no group was cancelled.
    for id in ["held", "after", "held-too"] {
        let task = report.task(id).unwrap();
        assert_eq!(task.state, TaskState::Cancelled, "{report}");
        assert!(
            matches!(
                task.error,
                Some(TaskError::Cancelled(CancelReason::ExecutorShutdown))
            ),
            "{report}"
        );
    }
    assert_eq!(
        error_text(&report, "held"),
        "cancelled (the run's executor shut down)"
    );
}

/// A run with none of its tasks alive when its group is cancelled (the one
/// unfinished task paused) is not cancelled: the cancel reaches a run only
/// through its tasks. Its membership has ended with them (the group's wait
/// returned), so what it spawns on the resume is in no group and runs (as
/// the module docs and `Scope`'s say).
#[test]
fn a_paused_run_with_no_task_alive_is_out_of_the_group() {
    let report = within(10, || {
        let mut g = Graph::<u32>::new();
        let (started, release) = (Gate::new(), Gate::new());
        g.add(support::gated_task("first", &started, &release))
            .unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        g.add(flagged("then", &ran).after(["first"])).unwrap();
        let report = fastexec::block_on(async {
            let group = TaskGroup::new();
            let (run, scope) = group
                .spawn(async move { (g.start(), fastexec::Scope::current()) })
                .await
                .unwrap();
            started.wait().await;
            run.pause("then").await.unwrap();
            release.open();
            run.wait("first").await.unwrap();
            // Every runner and driver of the run has finished, and the
            // membership they held is dropped just after their count.
            group.wait().await;
            assert!(support::spin_until(|| scope.has_ended()));
            group.cancel();
            let mut all = std::pin::pin!(run.wait_all());
            let waiting = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(all.as_mut().poll(cx).is_pending())
            })
            .await;
            assert!(waiting, "the run ended with no task of it alive");
            assert_eq!(run.state("then"), Some(TaskState::Paused));
            run.resume("then").unwrap();
            all.await
        });
        assert!(ran.load(Ordering::SeqCst), "`then` did not run");
        report
    });
    assert!(report.is_success(), "{report}");
}
