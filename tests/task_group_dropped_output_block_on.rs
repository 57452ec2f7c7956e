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
use support::{executor, simple_executor, within, TIMEOUT};

/// An output whose destructor runs a `block_on` that has a task run (on
/// the dropping thread, a worker), then reports how many members its group
/// has left.
struct BlocksOnWhenDropped {
    group: Arc<TaskGroup>,
    active_after: mpsc::Sender<usize>,
}

impl Drop for BlocksOnWhenDropped {
    fn drop(&mut self) {
        let ran = Arc::new(AtomicUsize::new(0));
        let in_task = ran.clone();
        fastexec::block_on(async move {
            fastexec::spawn(async move {
                in_task.fetch_add(1, Ordering::Relaxed);
            })
            .await
            .unwrap();
        });
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
