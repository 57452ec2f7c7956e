//! A member ended by its group's cancel stays counted in the group while
//! its future's destructor runs: even when that destructor runs a nested
//! `block_on`, whose tasks complete (and release what their completion
//! handed to the worker) on the same thread. Before, the member handed its
//! place in the group to the worker before its future was dropped, and a
//! task completing in that destructor released it: the group's `wait`
//! resolved while the destructor still ran.

mod support;

use std::pin::pin;
use std::sync::{mpsc, Arc, Mutex};

use fastexec::TaskGroup;
use support::{executor, poll_with, within};

/// Held by the member's future: when dropped, runs a nested `block_on` of
/// a task, then records whether the group's `wait` has already resolved.
struct ProbeOnDrop {
    group: Arc<TaskGroup>,
    wait_resolved: Arc<Mutex<Option<bool>>>,
}

impl Drop for ProbeOnDrop {
    fn drop(&mut self) {
        fastexec::block_on(async { fastexec::spawn(async {}).await.unwrap() });
        let mut wait = pin!(self.group.wait());
        let resolved = poll_with(&mut wait, &futures::task::noop_waker()).is_ready();
        *self.wait_resolved.lock().unwrap() = Some(resolved);
    }
}

#[test]
fn a_cancelled_member_stays_counted_while_its_destructor_runs_tasks() {
    let wait_resolved = Arc::new(Mutex::new(None));
    let seen = wait_resolved.clone();
    within(30, move || {
        let ex = executor(1);
        let group = Arc::new(TaskGroup::new());
        let (parked, is_parked) = mpsc::channel();
        let probe = ProbeOnDrop {
            group: group.clone(),
            wait_resolved,
        };
        // Spawned from this thread, which runs no task.
        let member = group.spawn(async move {
            let _probe = probe;
            parked.send(()).unwrap();
            std::future::pending::<()>().await
        });
        is_parked.recv().unwrap();
        group.cancel();
        ex.block_on(group.wait());
        assert!(member.is_finished());
    });
    let seen = *seen.lock().unwrap();
    assert_eq!(
        seen,
        Some(false),
        "the group's wait resolved inside the destructor"
    );
}
