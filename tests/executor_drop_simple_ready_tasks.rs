//! Under the simple scheduler, a task still waiting in the ready set when
//! its executor is dropped, whose future spawns from its destructor: the
//! new task belongs to the executor being dropped, so it is dropped with
//! it, unpolled (the promise of `executor.rs`'s shutdown section). Before
//! the fix the ready set was emptied at the start of the drop, before the
//! executor became the dropping thread's current one, so the spawn went to
//! the global executor (starting it), where the new task ran and parked
//! forever. Found by `executor_drop_prop.rs`.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};

use fastexec::Scope;
use support::{spin_until, with_timeout, DropCounter, SpawnOnDrop, TIMEOUT};

#[test]
fn a_ready_task_s_destructor_spawn_dies_with_the_simple_executor() {
    with_timeout(|| {
        let ex = support::simple_executor(1);
        let scope = ex.block_on(async { Scope::current() });
        // Occupies the only worker thread until the drop has begun, so the
        // next task is still ready (never run) when the drop starts.
        let (started_tx, started_rx) = mpsc::channel();
        ex.spawn(async move {
            started_tx.send(()).unwrap();
            assert!(spin_until(|| scope.executor_has_shut_down()));
        })
        .detach();
        started_rx.recv_timeout(TIMEOUT).expect("blocker started");
        let drops = DropCounter::new();
        let polls = Arc::new(AtomicUsize::new(0));
        let spawner = SpawnOnDrop {
            drops: drops.clone(),
            polls: polls.clone(),
        };
        ex.spawn(async move {
            let _spawner = spawner;
        })
        .detach();
        drop(ex);
        assert_eq!(drops.count(), 1, "the spawned task died with the executor");
        assert_eq!(polls.load(SeqCst), 0, "and never ran");
        assert_eq!(
            fastexec::current_threads(),
            None,
            "the global executor was not started"
        );
    })
}
