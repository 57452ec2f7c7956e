//! A detached member's output is dropped by the executor as the member
//! completes, and the member counts in its groups until that drop is over
//! (its place is released only once the output is stored, or dropped).
//! That holds also when the output's destructor calls `block_on`, which on
//! a worker (or under the simple scheduler) runs other tasks meanwhile:
//! their runs must not release the member's place early. Before the fix
//! they did, so a group's `wait` could return while the destructor still
//! ran, and a task the destructor spawned afterwards escaped that wait.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use fastexec::{Executor, TaskGroup};
use support::{executor, simple_executor, spin_until, within, TIMEOUT};

/// An output whose destructor runs a `block_on` that has a task run (on
/// the dropping thread: a worker, or any thread under the simple
/// scheduler), then reports how many members its group has left.
struct BlocksOnWhenDropped {
    /// The executor to `block_on`; the current one when `None`.
    executor: Option<Arc<Executor>>,
    group: Arc<TaskGroup>,
    active_after: mpsc::Sender<usize>,
}

impl Drop for BlocksOnWhenDropped {
    fn drop(&mut self) {
        let ran = Arc::new(AtomicUsize::new(0));
        let in_task = ran.clone();
        let runs_a_task = async move {
            fastexec::spawn(async move {
                in_task.fetch_add(1, Ordering::Relaxed);
            })
            .await
            .unwrap();
        };
        match &self.executor {
            Some(executor) => executor.block_on(runs_a_task),
            None => fastexec::block_on(runs_a_task),
        }
        assert_eq!(ran.load(Ordering::Relaxed), 1);
        self.active_after.send(self.group.active()).unwrap();
    }
}

/// Spawns, from a task outside any group, a detached member of a new group
/// whose output is a [`BlocksOnWhenDropped`]; returns how many members the
/// group had once the output's `block_on` returned.
fn active_after_the_outputs_block_on(ex: &Executor) -> usize {
    let group = Arc::new(TaskGroup::new());
    let (tx, rx) = mpsc::channel();
    let in_group = group.clone();
    let output = BlocksOnWhenDropped {
        executor: None,
        group: group.clone(),
        active_after: tx,
    };
    // The member runs after this poll (one thread): detached by then, so
    // its output is dropped as it completes.
    ex.spawn(async move {
        in_group.spawn(async move { output }).detach();
    })
    .detach();
    let active = rx.recv_timeout(TIMEOUT).expect("output dropped");
    ex.block_on(group.wait());
    active
}

#[test]
fn a_detached_members_output_counts_while_its_destructor_block_ons() {
    within(30, || {
        let ex = executor(1);
        assert_eq!(
            active_after_the_outputs_block_on(&ex),
            1,
            "the member is still in its group while its output is dropped"
        );
    });
}

#[test]
fn a_detached_members_output_counts_while_its_destructor_block_ons_simple() {
    within(30, || {
        let ex = simple_executor(7);
        assert_eq!(
            active_after_the_outputs_block_on(&ex),
            1,
            "the member is still in its group while its output is dropped"
        );
    });
}

/// The same for a detached `spawn_blocking` job's value, which the pool's
/// task drops on the pool thread once stored: the job counts in its group
/// until then, also while the value's destructor `block_on`s a simple
/// executor, which runs the executor's tasks on that thread.
#[test]
fn a_detached_blocking_jobs_value_counts_while_its_destructor_block_ons_simple() {
    within(30, || {
        let ex = Arc::new(simple_executor(7));
        let group = Arc::new(TaskGroup::new());
        let (tx, rx) = mpsc::channel();
        let value = BlocksOnWhenDropped {
            executor: Some(ex.clone()),
            group: group.clone(),
            active_after: tx,
        };
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let in_group = group.clone();
        // Spawned from a task, not from a `block_on`, which would wait for
        // the member and the job.
        let (member_tx, member_rx) = mpsc::channel();
        ex.spawn(async move {
            let member = in_group.spawn(async move {
                fastexec::spawn_blocking(move || {
                    go_rx.recv_timeout(TIMEOUT).unwrap();
                    value
                })
                .detach();
            });
            member_tx.send(member).unwrap();
        })
        .detach();
        let member = member_rx.recv_timeout(TIMEOUT).expect("member spawned");
        ex.block_on(member).unwrap();
        // The member has let go of its place: the job is the one left.
        assert!(spin_until(|| group.active() == 1));
        go_tx.send(()).unwrap();
        let active = rx.recv_timeout(TIMEOUT).expect("value dropped");
        assert_eq!(
            active, 1,
            "the job is still in its group while its value is dropped"
        );
        ex.block_on(group.wait());
    });
}
