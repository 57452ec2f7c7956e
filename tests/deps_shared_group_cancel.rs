//! What ends the task behind `JoinHandle::shared()`: only
//! `Completion::abort`.
//!
//! `shared()` spawns a forwarding task, which counts in the caller's task
//! groups and runs on the caller's executor. When the forwarder ends
//! because of those (its group cancelled, its executor dropped), its
//! completion reports the cancellation, and the task behind the handle is
//! detached, as a dropped `JoinHandle` is: it runs to its end. (The
//! forwarder's drop used to abort it, although it may be in no such group,
//! or on another executor.) `Completion::abort` still aborts it.
//!
//! The task behind the handle sends on a channel when it reaches its end;
//! aborted, it drops the sender instead, so `recv` tells which at once.

mod support;

use std::sync::mpsc;

use fastexec::cancel::CancellationToken;
use fastexec::{Completion, TaskGroup};
use support::{executor, with_timeout};

/// A task body that waits for `open`, then sends 7 and returns it.
async fn outsider(open: CancellationToken, ran: mpsc::Sender<i32>) -> i32 {
    open.cancelled().await;
    ran.send(7).unwrap();
    7
}

/// The completion's error, which must be a cancellation.
fn assert_cancelled(shared: &Completion<i32>) {
    match shared.try_get() {
        Some(Err(err)) => assert!(err.is_cancelled(), "{err}"),
        other => panic!("not cancelled: {:?}", other.map(|o| o.map(|v| *v))),
    }
}

#[test]
fn cancelling_the_forwarders_group_detaches_the_task_behind_shared() {
    with_timeout(|| {
        let open = CancellationToken::new();
        let (ran, reached_end) = mpsc::channel();
        // Outside any group, on the global executor.
        let handle = fastexec::spawn(outsider(open.clone(), ran));
        let group = TaskGroup::new();
        // The member turns the handle into a completion and hands it out;
        // the forwarder it spawned is a member.
        let member = group.spawn(async move { (handle.shared(),) });
        let (shared,) = fastexec::block_on(member).unwrap();
        assert!(!group.is_empty(), "the forwarder counts in the group");
        group.cancel();
        fastexec::block_on(group.wait());
        assert_cancelled(&shared);
        open.cancel();
        assert_eq!(
            reached_end.recv(),
            Ok(7),
            "the task outside the group was aborted by the group's cancel"
        );
    })
}

#[test]
fn dropping_the_forwarders_executor_detaches_a_task_of_another() {
    with_timeout(|| {
        let other = executor(1);
        let ex = executor(1);
        let open = CancellationToken::new();
        let (ran, reached_end) = mpsc::channel();
        let handle = other.spawn(outsider(open.clone(), ran));
        // Called in a task of `ex`: the forwarder runs on `ex`.
        let (shared,) = ex
            .block_on(ex.spawn(async move { (handle.shared(),) }))
            .unwrap();
        drop(ex);
        assert_cancelled(&shared);
        open.cancel();
        assert_eq!(
            reached_end.recv(),
            Ok(7),
            "a task of a live executor was aborted by another's drop"
        );
    })
}

#[test]
fn aborting_the_completion_aborts_the_task_behind_shared_in_a_group() {
    with_timeout(|| {
        let open = CancellationToken::new();
        let (ran, reached_end) = mpsc::channel();
        let handle = fastexec::spawn(outsider(open.clone(), ran));
        let group = TaskGroup::new();
        let member = group.spawn(async move { (handle.shared(),) });
        let (shared,) = fastexec::block_on(member).unwrap();
        shared.abort();
        let err = fastexec::block_on(shared).unwrap_err();
        assert!(err.is_cancelled(), "{err}");
        // Aborted, the task dropped its sender without sending.
        assert!(
            reached_end.recv().is_err(),
            "the task behind was not aborted"
        );
        open.cancel();
        fastexec::block_on(group.wait());
    })
}
