//! A task whose future spawns from its destructor, dropped by the shutdown
//! of its executor: the new task belongs to the executor being dropped, so
//! it is dropped with it, unpolled. Before the fix the drop ran on the
//! dropping thread outside any executor context, so the spawn went to the
//! global executor (starting it), where the new task ran and outlived its
//! executor.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use support::{executor, spawn_parked, with_timeout, DropCounter, SpawnOnDrop};

#[test]
fn a_task_spawned_while_shutting_down_is_dropped_with_the_executor() {
    with_timeout(|| {
        let ex = executor(2);
        let drops = DropCounter::new();
        let polls = Arc::new(AtomicUsize::new(0));
        for _ in 0..4 {
            let spawner = SpawnOnDrop {
                drops: drops.clone(),
                polls: polls.clone(),
            };
            spawn_parked(&ex, spawner).detach();
        }
        drop(ex);
        assert_eq!(drops.count(), 4, "the spawned tasks died with the executor");
        assert_eq!(polls.load(SeqCst), 0, "and never ran");
        assert_eq!(
            fastexec::current_threads(),
            None,
            "the global executor was not started"
        );
    })
}
