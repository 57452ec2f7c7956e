//! A task that drops its own executor and then spawns a ring's worth of
//! tasks and one more: the overflow queue is closed, so the ring's older
//! half, sent there, is dropped on the spot, and the destructor of the
//! oldest of those futures spawns tasks into the very ring being pushed to.
//! Every task must be dropped exactly once when the worker exits.
//!
//! Before the first fix the push that overflowed went on with the ring's
//! tail it had read before the overflow, wrote its task over the
//! destructor's spawn, and moved the tail back: that task was never dropped
//! (nor run), and its future leaked. Before the second, the destructor ran
//! while the older half was still being read out of the ring, whose slots
//! it had already handed back: more spawns than one overflow batch wrote
//! over slots not read yet.

mod support;

use std::future::pending;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fastexec::Executor;
use support::full_ring::RING;
use support::{counter, get, within, DropCounter, DropGuard, Gate, SpawnOnDrop};

/// On one worker, spawns a task that drops the executor and then calls
/// `spawns` (whose spawns go to the worker's ring, the overflow queue being
/// closed).
fn drop_executor_then(spawns: impl FnOnce() + Send + 'static) {
    let executor = support::executor(1);
    let slot = Arc::new(Mutex::new(None::<Executor>));
    let (in_task, placed) = (Arc::clone(&slot), Gate::new());
    let go = placed.clone();
    executor
        .spawn(async move {
            go.wait().await;
            drop(in_task.lock().unwrap().take().expect("placed"));
            spawns();
        })
        .detach();
    *slot.lock().unwrap() = Some(executor);
    placed.open();
}

/// Spawns a task that holds `held` and never finishes.
fn spawn_holding<H: Send + 'static>(held: H) {
    fastexec::spawn(async move {
        let _held = held;
        pending::<()>().await;
    })
    .detach();
}

#[test]
fn a_task_spawned_by_a_destructor_while_the_closed_overflow_queue_drops_a_half_is_dropped() {
    within(60, || {
        let drops = DropCounter::new();
        let polls = counter();
        let (task_drops, task_polls) = (drops.clone(), polls.clone());
        drop_executor_then(move || {
            // The oldest task in the ring: its destructor spawns.
            spawn_holding(SpawnOnDrop {
                drops: task_drops.clone(),
                polls: task_polls,
            });
            // Fills the ring, and the last one overflows it.
            for _ in 0..RING {
                spawn_holding(task_drops.guard());
            }
        });
        // The ring's worth of tasks, and the one the destructor spawned.
        assert_eq!(
            drops.wait_for_within(RING + 1, Duration::from_secs(10)),
            RING + 1,
            "every future was dropped, the destructor's spawn's too"
        );
        assert_eq!(get(&polls), 0, "the destructor's spawn never ran");
    });
}

/// Records its id when dropped.
struct Tag {
    id: usize,
    log: Arc<Mutex<Vec<usize>>>,
    _guard: DropGuard,
}

impl Drop for Tag {
    fn drop(&mut self) {
        self.log.lock().unwrap().push(self.id);
    }
}

/// Spawns `count` tasks holding tags from `first` on when dropped.
struct SpawnTagsOnDrop {
    first: usize,
    count: usize,
    log: Arc<Mutex<Vec<usize>>>,
    drops: DropCounter,
}

impl Drop for SpawnTagsOnDrop {
    fn drop(&mut self) {
        for id in self.first..self.first + self.count {
            spawn_holding(Tag {
                id,
                log: Arc::clone(&self.log),
                _guard: self.drops.guard(),
            });
        }
    }
}

#[test]
fn more_destructor_spawns_than_an_overflow_batch_are_each_dropped_once() {
    within(60, || {
        // One more than an overflow batch (`executor::OVERFLOW_BATCH`).
        const SPAWNED: usize = 65;
        let drops = DropCounter::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (task_drops, task_log) = (drops.clone(), Arc::clone(&log));
        drop_executor_then(move || {
            spawn_holding(SpawnTagsOnDrop {
                first: RING,
                count: SPAWNED,
                log: Arc::clone(&task_log),
                drops: task_drops.clone(),
            });
            for id in 0..RING {
                spawn_holding(Tag {
                    id,
                    log: Arc::clone(&task_log),
                    _guard: task_drops.guard(),
                });
            }
        });
        let total = RING + SPAWNED;
        drops.wait_for_within(total, Duration::from_secs(10));
        let mut dropped = log.lock().unwrap().clone();
        dropped.sort_unstable();
        assert_eq!(
            dropped,
            (0..total).collect::<Vec<_>>(),
            "every task's future was dropped exactly once"
        );
    });
}
