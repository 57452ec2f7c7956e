//! A task that a member of a `TaskGroup` spawns inside a nested `block_on`
//! is a descendant of the member, so the group counts it and `cancel`
//! reaches it. Before the fix a nested `block_on` started a fresh chain of
//! groups: the task was not counted (`active` said 1, not 2), `cancel` did
//! not end it, and the member, blocked in the `block_on` waiting for it,
//! kept `wait` from ever returning.

mod support;

use std::future::pending;
use std::sync::{mpsc, Arc};

use fastexec::TaskGroup;
use support::{executor, with_timeout, DropCounter, TIMEOUT};

#[test]
fn cancel_reaches_a_task_spawned_in_a_members_block_on() {
    with_timeout(|| {
        let ex = executor(2);
        let group = Arc::new(TaskGroup::new());
        let drops = DropCounter::new();
        let (started_tx, started_rx) = mpsc::channel();
        let (member_group, guard) = (group.clone(), drops.guard());
        ex.spawn(async move {
            member_group
                .spawn(async move {
                    fastexec::block_on(async move {
                        let inner = fastexec::spawn(async move {
                            let _guard = guard;
                            pending::<()>().await
                        });
                        started_tx.send(()).unwrap();
                        let _ = inner.await;
                    })
                })
                .detach();
        })
        .detach();
        started_rx
            .recv_timeout(TIMEOUT)
            .expect("inner task spawned");
        assert_eq!(group.active(), 2, "the member and the task of its block_on");
        group.cancel();
        let (done_tx, done_rx) = mpsc::channel();
        let waiter = group.clone();
        std::thread::spawn(move || {
            fastexec::Executor::builder()
                .threads(1)
                .build()
                .unwrap()
                .block_on(waiter.wait());
            let _ = done_tx.send(());
        });
        done_rx
            .recv_timeout(TIMEOUT)
            .expect("wait returns once the cancel reached every descendant");
        assert_eq!(drops.count(), 1, "the inner task's future was dropped");
        assert!(group.is_empty());
    })
}

/// A `block_on` inside a task still waits for what it spawned, and the
/// task's own `block_on` scope (the outer one) waits for all of it.
#[test]
fn nested_block_on_still_waits_for_its_own_tasks() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let guard = drops.guard();
        let seen = ex.block_on(async move {
            fastexec::spawn(async move {
                fastexec::block_on(async move {
                    fastexec::spawn(async move {
                        fastexec::yield_now().await;
                        drop(guard);
                    })
                    .detach();
                });
                drops.count()
            })
            .await
            .unwrap()
        });
        assert_eq!(seen, 1, "the nested block_on returned after its task");
    })
}
