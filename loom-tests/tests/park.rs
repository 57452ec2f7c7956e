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

/// The watch (`idle.rs`): a worker woken for outside work reads the watch
/// (as a push that leaves it one task does) while the other worker parks,
/// takes the watch if someone is awake, gives it back on waking and parks
/// again. If the woken worker read the watch held (and so skipped its
/// wake-up), the watcher's second park must still count it as awake, and
/// so take the watch again: a lone task keeps a watcher. (Each transition
/// here takes the sleepers' lock, which orders them, so this checks the
/// hand-over, not the orderings; it fails if `release_watch` keeps the
/// watch.)
#[test]
fn skipped_wake_keeps_a_watcher() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(2));
        // Worker 0 went to sleep earlier; worker 1 is about to.
        assert!(!idle.transition_to_parked(0, false));
        let woken = {
            let idle = idle.clone();
            // An outside push wakes a worker; if that is worker 0, it then
            // queues a lone task and reads the watch.
            thread::spawn(move || match idle.worker_to_notify() {
                Some(0) => Some(idle.is_watched()),
                _ => None,
            })
        };
        let retook = {
            let idle = idle.clone();
            thread::spawn(move || {
                let _ = idle.transition_to_parked(1, false);
                if !idle.try_take_watch() {
                    return None;
                }
                // Timed out (a timeout is not modelled: it just returns).
                idle.release_watch();
                let _ = idle.transition_from_parked(1);
                let _ = idle.transition_to_parked(1, false);
                Some(idle.try_take_watch())
            })
        };
        let read_held = woken.join().unwrap() == Some(true);
        let retook = retook.join().unwrap();
        assert!(
            !read_held || retook == Some(true),
            "a wake-up was skipped for a watcher that then stopped watching"
        );
    });
}
