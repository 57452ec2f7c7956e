//! A pause of a running task that ends before it reaches a checkpoint
//! (its body returns, fails, or it is cancelled) reports
//! `GraphError::TaskEnded` with the state it ended in, as a pause of a
//! task that had ended already does: not `Ok`, which says it paused.

mod support;

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;

use fastexec::graph::{Graph, GraphError, RunHandle, Task, TaskState};
use support::{within, Gate};

/// Pauses `id` (running, with no checkpoint), lets `end` end it, and
/// returns what the pause says.
fn pause_then(run: &RunHandle<u32>, id: &str, end: impl FnOnce()) -> Result<(), GraphError> {
    fastexec::block_on(async {
        let mut pause = pin!(run.pause(id));
        let pending = poll_fn(|cx| Poll::Ready(pause.as_mut().poll(cx).is_pending())).await;
        assert!(
            pending,
            "a running task without a checkpoint cannot pause at once"
        );
        end();
        pause.await
    })
}

fn ended(err: Result<(), GraphError>, id: &str, state: TaskState) {
    match err {
        Err(GraphError::TaskEnded {
            id: ref i,
            state: s,
        }) if i.as_str() == id && s == state => {}
        other => panic!("expected TaskEnded({id}, {state}), got {other:?}"),
    }
}

#[test]
fn a_pause_of_a_task_that_ends_before_its_checkpoint_is_task_ended() {
    within(30, || {
        let mut g = Graph::<u32>::new();
        let (started, release) = (Gate::new(), Gate::new());
        g.add(support::gated_task("completes", &started, &release))
            .unwrap();
        let (failing, fail) = (Gate::new(), Gate::new());
        let (s, f) = (failing.clone(), fail.clone());
        g.add(Task::new("fails", move |_| {
            let (s, f) = (s.clone(), f.clone());
            async move {
                s.open();
                f.wait().await;
                Err("broken".into())
            }
        }))
        .unwrap();
        let (running, never) = (Gate::new(), Gate::new());
        g.add(support::gated_task("cancelled", &running, &never))
            .unwrap();
        let run = g.start();
        started.wait_blocking();
        failing.wait_blocking();
        running.wait_blocking();

        ended(
            pause_then(&run, "completes", || release.open()),
            "completes",
            TaskState::Completed,
        );
        ended(
            pause_then(&run, "fails", || fail.open()),
            "fails",
            TaskState::Failed,
        );
        let r = run.clone();
        ended(
            pause_then(&run, "cancelled", move || r.cancel("cancelled").unwrap()),
            "cancelled",
            TaskState::Cancelled,
        );
        // As for a pause of a task that had ended already.
        ended(
            fastexec::block_on(run.pause("completes")),
            "completes",
            TaskState::Completed,
        );
        assert!(fastexec::block_on(run.wait_all()).tasks().len() == 3);
        drop(never);
    });
}
