//! A task's drop skips its bookkeeping when there is nothing to release
//! (`TaskFuture`'s drop in `src/task/mod.rs`); these check that it still
//! releases what is there: the registry entry of a task that parked (the
//! first test fails if the drop ignores it), its future when it never
//! finished, its place in a group. (A task registers with a cancellable
//! group when it first parks, as it registers in the registry, so the
//! registry's entry alone already sends such a task down the full drop.)

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use fastexec::{Executor, TaskGroup};
use futures::channel::oneshot;

fn executor() -> Executor {
    Executor::builder().threads(1).build().unwrap()
}

/// The registry's count, as the executor's `Debug` shows it.
fn parked_tasks(executor: &Executor) -> usize {
    let shown = format!("{executor:?}");
    let (_, rest) = shown
        .split_once("parked_tasks: ")
        .expect("Debug shows parked_tasks");
    rest.trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .expect("a count")
}

#[test]
fn tasks_that_parked_leave_the_registry_when_they_finish() {
    let executor = executor();
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..50).map(|_| oneshot::channel::<usize>()).unzip();
    let handles: Vec<_> = receivers
        .into_iter()
        .map(|rx| executor.spawn(async move { rx.await.unwrap() }))
        .collect();
    // Let every task run once and park on its channel.
    executor.block_on(async {
        while parked_tasks(&executor) < 50 {
            fastexec::yield_now().await;
        }
    });
    assert_eq!(parked_tasks(&executor), 50);
    for (i, tx) in senders.into_iter().enumerate() {
        tx.send(i).unwrap();
    }
    let sum: usize = executor.block_on(async {
        let mut sum = 0;
        for handle in handles {
            sum += handle.await.unwrap();
        }
        sum
    });
    assert_eq!(sum, (0..50).sum::<usize>());
    assert_eq!(parked_tasks(&executor), 0);
}

/// Counts drops of the value it is attached to.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn an_aborted_parked_task_drops_its_future_and_leaves_the_registry() {
    let executor = executor();
    let drops = Arc::new(AtomicUsize::new(0));
    let counted = Counted(drops.clone());
    let (_tx, rx) = oneshot::channel::<()>();
    let mut handle = executor.spawn(async move {
        let _counted = counted;
        let _ = rx.await;
    });
    executor.block_on(async {
        while parked_tasks(&executor) < 1 {
            fastexec::yield_now().await;
        }
    });
    handle.abort();
    let err = executor.block_on(handle).unwrap_err();
    assert!(err.is_cancelled());
    assert_eq!(drops.load(SeqCst), 1);
    assert_eq!(parked_tasks(&executor), 0);
}

#[test]
fn a_group_member_that_parked_is_counted_out_and_a_later_cancel_is_harmless() {
    let executor = executor();
    let group = TaskGroup::new();
    let ran = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = oneshot::channel::<()>();
    let counter = ran.clone();
    // All in one `block_on`, which waits for what is spawned under it.
    executor.block_on(async {
        let member = group.spawn(async move {
            rx.await.unwrap();
            counter.fetch_add(1, SeqCst);
        });
        while parked_tasks(&executor) < 1 {
            fastexec::yield_now().await;
        }
        tx.send(()).unwrap();
        member.await.unwrap();
        // The group counted the member out: its wait returns.
        group.wait().await;
    });
    assert_eq!(ran.load(SeqCst), 1);
    assert_eq!(group.active(), 0);
    assert_eq!(parked_tasks(&executor), 0);
    // Cancelling a group whose member finished (and was dropped) is
    // harmless.
    group.cancel();
    executor.block_on(group.wait());
}
