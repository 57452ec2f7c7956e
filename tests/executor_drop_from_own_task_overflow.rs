//! A task that drops its own executor and then spawns a ring's worth of
//! tasks and one more: the overflow queue is closed, so the ring's older
//! half, sent there, is dropped on the spot, and the destructor of one of
//! those futures spawns a task into the very ring being pushed to. That
//! task must be dropped with the rest when the worker exits. Before the
//! fix the push that overflowed went on with the ring's tail it had read
//! before the overflow, wrote its task over the destructor's, and moved the
//! tail back: the destructor's task was never dropped (nor run), and its
//! future leaked.

mod support;

use std::future::pending;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fastexec::Executor;
use support::{counter, get, within, DropCounter, Gate, SpawnOnDrop};

/// A worker's ring holds this many tasks (`queue::CAPACITY`).
const RING: usize = 256;

#[test]
fn a_task_spawned_by_a_destructor_while_the_closed_overflow_queue_drops_a_half_is_dropped() {
    within(60, || {
        let executor = support::executor(1);
        let drops = DropCounter::new();
        let polls = counter();
        let slot = Arc::new(Mutex::new(None::<Executor>));
        let (in_task, placed) = (Arc::clone(&slot), Gate::new());
        let go = placed.clone();
        let (task_drops, task_polls) = (drops.clone(), polls.clone());
        executor
            .spawn(async move {
                go.wait().await;
                drop(in_task.lock().unwrap().take().expect("placed"));
                // The oldest task in the ring: its destructor spawns.
                let spawner = SpawnOnDrop {
                    drops: task_drops.clone(),
                    polls: task_polls,
                };
                fastexec::spawn(async move {
                    let _spawner = spawner;
                    pending::<()>().await;
                })
                .detach();
                // Fills the ring, and the last one overflows it.
                for _ in 0..RING {
                    let guard = task_drops.guard();
                    fastexec::spawn(async move {
                        let _guard = guard;
                        pending::<()>().await;
                    })
                    .detach();
                }
            })
            .detach();
        *slot.lock().unwrap() = Some(executor);
        placed.open();
        // The ring's worth of tasks, and the one the destructor spawned.
        assert_eq!(
            drops.wait_for_within(RING + 1, Duration::from_secs(10)),
            RING + 1,
            "every future was dropped, the destructor's spawn's too"
        );
        assert_eq!(get(&polls), 0, "the destructor's spawn never ran");
    });
}
