//! The completion of `JoinHandle::shared()` when the task behind the handle
//! has finished but its forwarder has not passed the outcome on yet.
//!
//! The forwarder may end before its next poll (its task group cancelled,
//! `Completion::abort` called): the task behind the handle had completed,
//! so its output, not a cancellation, is the completion's outcome.
//!
//! The forwarder runs on a one-worker executor whose worker the test holds
//! in a task (blocked on a channel), so the forwarder cannot run until the
//! test lets that worker go.

mod support;

use std::sync::{mpsc, Arc};

use fastexec::{Completion, Executor, JoinHandle, TaskGroup};
use support::{executor, spin_until, within};

/// A task of the global executor that has completed with 7.
fn finished_task() -> JoinHandle<i32> {
    let handle = fastexec::spawn(async { 7 });
    assert!(
        spin_until(|| handle.is_finished()),
        "the task never finished"
    );
    handle
}

/// Calls `handle.shared()` in a task of `ex` (a member of `group`), which
/// then holds `ex`'s only worker until the test sends on the returned
/// sender: the forwarder is queued behind it, not polled yet.
fn shared_behind_held_worker(
    ex: &Executor,
    group: &Arc<TaskGroup>,
    handle: JoinHandle<i32>,
) -> (Completion<i32>, mpsc::Sender<()>) {
    let (shared_tx, shared_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let group = group.clone();
    // Spawned from a task of `ex`, the member runs on `ex`.
    ex.spawn(async move {
        group
            .spawn(async move {
                shared_tx.send(handle.shared()).unwrap();
                go_rx.recv().unwrap();
            })
            .detach();
    })
    .detach();
    let shared = shared_rx.recv().unwrap();
    (shared, go_tx)
}

/// Ends the forwarder of a completion of a finished task with `end` (given
/// the forwarder's group and the completion) while the forwarder is queued,
/// lets it go, and checks that the completion gives the task's 7.
fn assert_output_after(end: impl FnOnce(&TaskGroup, &Completion<i32>) + Send + 'static) {
    within(30, || {
        let ex = executor(1);
        let group = Arc::new(TaskGroup::new());
        let (shared, go) = shared_behind_held_worker(&ex, &group, finished_task());
        end(&group, &shared);
        go.send(()).unwrap();
        fastexec::block_on(group.wait());
        match shared.try_get() {
            Some(Ok(value)) => assert_eq!(*value, 7),
            Some(Err(err)) => panic!("the task completed with 7, but its completion says: {err}"),
            None => panic!("the completion has no outcome"),
        }
    })
}

#[test]
fn a_group_cancel_of_the_forwarder_keeps_the_output_of_a_finished_task() {
    assert_output_after(|group, _| group.cancel());
}

/// No effect on a task that already finished.
#[test]
fn aborting_the_completion_of_a_finished_task_keeps_its_output() {
    assert_output_after(|_, shared| shared.abort());
}
