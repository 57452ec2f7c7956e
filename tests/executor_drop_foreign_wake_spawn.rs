//! A task woken during its executor's drop by a thread that is not the
//! dropping one (here a blocking pool thread whose job the task awaits) is
//! dropped by that wake, on that thread; a spawn from its future's
//! destructor must still die with the executor. Before the fix the wake
//! dropped the task with no executor current on that thread, so the spawn
//! went to the global executor, where the new task ran and parked forever.
//! Found by `executor_drop_prop.rs`, under the simple scheduler, whose
//! first shutdown step already refuses wakes (the work-stealing executor's
//! like case, a wake that finds the injector closed, has a window of a few
//! instructions and is left as it is).

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};

use fastexec::Scope;
use support::{spin_until, with_timeout, DropCounter, SpawnOnDrop, TIMEOUT};

#[test]
fn a_task_woken_by_a_blocking_thread_during_the_drop_spawns_into_the_dying_executor() {
    with_timeout(|| {
        let ex = support::simple_executor(1);
        let scope = ex.block_on(async { Scope::current() });
        let (drops, polls) = (DropCounter::new(), Arc::new(AtomicUsize::new(0)));
        let spawner = SpawnOnDrop {
            drops: drops.clone(),
            polls: polls.clone(),
        };
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(dropped.clone());
        let (started_tx, started_rx) = mpsc::channel();
        let started = started_tx.clone();
        ex.spawn(async move {
            let (_flag, _spawner) = (flag, spawner);
            // Finishes once the drop has begun; its completion wakes this
            // task from the blocking thread.
            let job = fastexec::spawn_blocking(move || {
                assert!(spin_until(|| scope.executor_has_shut_down()));
            });
            started.send(()).unwrap();
            let _ = job.await;
        })
        .detach();
        started_rx.recv_timeout(TIMEOUT).expect("task started");
        // Holds the only worker, so the drop stays in its second step (the
        // join) until the blocking thread's wake has dropped the task: the
        // drop's own wake of parked tasks comes after, and would drop it
        // on the dropping thread, in the executor's context.
        ex.spawn(async move {
            started_tx.send(()).unwrap();
            assert!(spin_until(|| dropped.load(SeqCst)));
        })
        .detach();
        started_rx.recv_timeout(TIMEOUT).expect("blocker started");
        drop(ex);
        assert_eq!(drops.count(), 1, "the spawned task died with the executor");
        assert_eq!(polls.load(SeqCst), 0, "and never ran");
    })
}

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}
