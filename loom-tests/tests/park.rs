//! Loom model of the park/notify protocol: a worker that finds nothing and
//! parks is always woken for work pushed concurrently (loom reports a
//! deadlock if it sleeps forever).
#![cfg(loom)]

use fastexec::__loom::{Idle, Parker, Unparker};
use loom::sync::atomic::{AtomicUsize, Ordering::*};
use loom::sync::Arc;
use loom::thread;

/// A stand-in run queue: a count of available items.
#[derive(Default)]
struct Queue(AtomicUsize);

impl Queue {
    fn push(&self) {
        // Release: pairs with the Acquire in `take`.
        self.0.fetch_add(1, Release);
    }

    fn take(&self) -> bool {
        // Acquire: pairs with the Release in `push`.
        let mut n = self.0.load(Acquire);
        while n > 0 {
            match self.0.compare_exchange(n, n - 1, Acquire, Acquire) {
                Ok(_) => return true,
                Err(actual) => n = actual,
            }
        }
        false
    }

    fn has_work(&self) -> bool {
        self.0.load(Acquire) > 0
    }
}

struct Pool {
    idle: Idle,
    queue: Queue,
    unparkers: Vec<Unparker>,
    taken: AtomicUsize,
    shutdown: AtomicUsize,
    done: Unparker,
}

impl Pool {
    fn notify(&self) {
        if let Some(i) = self.idle.worker_to_notify() {
            self.unparkers[i].unpark();
        }
    }
}

/// The worker loop of `worker.rs`, reduced to its protocol: look, search,
/// park, until shut down. Reports each item taken.
fn worker(pool: &Pool, index: usize, parker: &Parker, items: usize) {
    let mut searching = false;
    // Acquire: pairs with the Release store of the flag by the main thread.
    while pool.shutdown.load(Acquire) == 0 {
        if !searching && pool.idle.transition_to_searching() {
            searching = true;
        }
        if pool.queue.take() {
            if searching {
                searching = false;
                if pool.idle.transition_from_searching() {
                    pool.notify();
                }
            }
            // AcqRel: the last taker wakes the main thread.
            if pool.taken.fetch_add(1, AcqRel) + 1 == items {
                pool.done.unpark();
            }
            continue;
        }
        let last = pool.idle.transition_to_parked(index, searching);
        searching = false;
        if last && pool.queue.has_work() {
            pool.notify();
        }
        parker.park();
        if pool.idle.transition_from_parked(index) {
            searching = true;
        }
    }
}

/// Pushes `items` items with a notification each while `workers` workers
/// run, then waits (parked, not spinning) until every item was taken. If
/// an item were stranded with every worker asleep, loom reports a deadlock.
fn model(workers: usize, items: usize) {
    let parkers: Vec<Parker> = (0..workers).map(|_| Parker::new()).collect();
    let done = Parker::new();
    let pool = Arc::new(Pool {
        idle: Idle::new(workers),
        queue: Queue::default(),
        unparkers: parkers.iter().map(Parker::unparker).collect(),
        taken: AtomicUsize::new(0),
        shutdown: AtomicUsize::new(0),
        done: done.unparker(),
    });
    let handles: Vec<_> = parkers
        .into_iter()
        .enumerate()
        .map(|(i, parker)| {
            let pool = pool.clone();
            thread::spawn(move || worker(&pool, i, &parker, items))
        })
        .collect();
    for _ in 0..items {
        pool.queue.push();
        pool.notify();
    }
    // Acquire: pairs with the AcqRel increment of the last taker.
    while pool.taken.load(Acquire) < items {
        done.park();
    }
    // Release: pairs with the workers' Acquire load of the flag.
    pool.shutdown.store(1, Release);
    pool.unparkers.iter().for_each(Unparker::unpark);
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(pool.taken.load(Acquire), items, "pushed == run");
    assert!(!pool.queue.has_work());
}

#[test]
fn no_stranded_work_one_worker() {
    loom::model(|| model(1, 1));
}

#[test]
fn no_stranded_work_two_workers() {
    loom::model(|| model(2, 2));
}
