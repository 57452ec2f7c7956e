//! `RunHandle::pause` called from a task of a `TaskGroup` that is then
//! cancelled: the caller ends (and the watcher it spawned, which joined
//! its groups), but the pause timeout still applies (it is a timer, not a
//! task) and a checkpoint reached later is still recorded as a pause (the
//! checkpoint records it, not the watcher).

mod support;

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use fastexec::graph::{
    CancelReason, Graph, RunHandle, SchedulerConfig, Task, TaskError, TaskState,
};
use fastexec::TaskGroup;
use support::{within, Gate};

/// Requests a pause of `id` from a task of a new group, then cancels the
/// group and checks that the requesting task ended cancelled.
async fn pause_from_a_cancelled_group(run: &RunHandle<u32>, id: &'static str) {
    let (requested, r, run) = (Gate::new(), Gate::new(), run.clone());
    let opened = requested.clone();
    let group = TaskGroup::new();
    let pause = group.spawn(async move {
        let mut pause = pin!(run.pause(id));
        let pending = poll_fn(|cx| Poll::Ready(pause.as_mut().poll(cx).is_pending())).await;
        assert!(
            pending,
            "a running task without a checkpoint cannot pause at once"
        );
        opened.open();
        r.wait().await; // never opened: the group's cancel ends this task here
        pause.await
    });
    requested.wait().await;
    group.cancel();
    group.wait().await;
    assert!(pause.await.unwrap_err().is_cancelled());
}

#[test]
fn the_pause_timeout_applies_after_the_callers_group_is_cancelled() {
    within(30, || {
        let config = SchedulerConfig::new().with_pause_timeout(Duration::from_millis(50));
        let mut g = Graph::<u32>::with_config(config);
        let (started, never) = (Gate::new(), Gate::new());
        g.add(support::gated_task("busy", &started, &never))
            .unwrap();
        g.add(Task::new("after", |_| async { Ok(2) }).after(["busy"]))
            .unwrap();
        let report = fastexec::block_on(async {
            let run = g.start();
            started.wait().await;
            pause_from_a_cancelled_group(&run, "busy").await;
            // Without the timer, "busy" would wait for its checkpoint forever.
            run.wait_all().await
        });
        let busy = report.task("busy").unwrap();
        assert_eq!(busy.state, TaskState::Cancelled);
        assert!(
            matches!(
                busy.error,
                Some(TaskError::Cancelled(CancelReason::PauseTimedOut(d))) if d == Duration::from_millis(50)
            ),
            "{:?}",
            busy.error
        );
        assert_eq!(report.task("after").unwrap().state, TaskState::Cancelled);
        drop(never);
    });
}

#[test]
fn a_checkpoint_after_the_callers_group_is_cancelled_is_recorded_as_a_pause() {
    within(30, || {
        let config = SchedulerConfig::new().with_pause_timeout(Duration::from_secs(3600));
        let mut g = Graph::<u32>::with_config(config);
        let (started, go) = (Gate::new(), Gate::new());
        let (s, gate) = (started.clone(), go.clone());
        g.add(Task::new("busy", move |inp| {
            let (s, gate) = (s.clone(), gate.clone());
            async move {
                s.open();
                gate.wait().await;
                inp.checkpoint().await?;
                Ok(1)
            }
        }))
        .unwrap();
        fastexec::block_on(async {
            let run = g.start();
            started.wait().await;
            pause_from_a_cancelled_group(&run, "busy").await;
            go.open(); // now it reaches its checkpoint and pauses there
            assert!(
                support::spin_until(|| run.state("busy") == Some(TaskState::Paused)),
                "the pause at the checkpoint was not recorded: {:?}",
                run.state("busy")
            );
            // So `stop` cancels it (a task it took for running would be let
            // finish, and would wait at its checkpoint forever).
            run.stop();
            let report = run.wait_all().await;
            let busy = report.task("busy").unwrap();
            assert_eq!(busy.state, TaskState::Cancelled);
        });
    });
}
