//! Work spreads over two workers: tasks that can only finish when two
//! threads run them at the same time do finish, on two distinct threads.
//!
//! Each task blocks its thread (not just its future) until enough distinct
//! threads have been seen, with a timeout so that a failure to spread is a
//! failed assertion rather than a hang.

mod support;

use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, ThreadId};

use fastexec::spawn;
use support::{executor, with_timeout, Rendezvous, TIMEOUT};

/// Two tasks spawned from one task each wait at a two-party barrier: they
/// can only pass it if two workers run them concurrently.
#[test]
fn two_children_of_one_task_run_concurrently() {
    with_timeout(|| {
        let ex = executor(2);
        let results = ex.block_on(async {
            spawn(async {
                let barrier = Rendezvous::new(2);
                let handles: Vec<_> = (0..2)
                    .map(|_| {
                        let barrier = barrier.clone();
                        spawn(async move { (barrier.wait(), thread::current().id()) })
                    })
                    .collect();
                let mut results = Vec::new();
                for h in handles {
                    results.push(h.await.unwrap());
                }
                results
            })
            .await
            .unwrap()
        });
        assert!(results.iter().all(|(met, _)| *met), "barrier not reached");
        assert_ne!(results[0].1, results[1].1);
    })
}

/// The same for two tasks posted from outside the executor.
#[test]
fn two_tasks_from_outside_run_concurrently() {
    with_timeout(|| {
        let ex = executor(2);
        let barrier = Rendezvous::new(2);
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let barrier = barrier.clone();
                ex.spawn(async move { (barrier.wait(), thread::current().id()) })
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| futures::executor::block_on(h).unwrap())
            .collect();
        assert!(results.iter().all(|(met, _)| *met), "barrier not reached");
        assert_ne!(results[0].1, results[1].1);
    })
}

/// Records the threads that ran tasks; lets a task block until `n`
/// distinct threads have been seen.
#[derive(Clone, Default)]
struct ThreadsSeen(Arc<(Mutex<HashSet<ThreadId>>, Condvar)>);

impl ThreadsSeen {
    /// Records this thread, then waits until `n` threads were recorded.
    /// Returns whether that happened before the timeout.
    fn arrive_and_wait(&self, n: usize) -> bool {
        let (lock, cvar) = &*self.0;
        let mut seen = lock.lock().unwrap();
        seen.insert(thread::current().id());
        cvar.notify_all();
        let (seen, _) = cvar
            .wait_timeout_while(seen, TIMEOUT, |seen| seen.len() < n)
            .unwrap();
        seen.len() >= n
    }

    fn count(&self) -> usize {
        self.0 .0.lock().unwrap().len()
    }
}

/// A task spawns children into its own worker's queue and then blocks that
/// worker until another thread has run one of them: the other worker must
/// steal from the busy worker's queue.
#[test]
fn idle_worker_steals_from_busy_worker() {
    with_timeout(|| {
        let ex = executor(2);
        let seen = ThreadsSeen::default();
        let s = seen.clone();
        let (parent_ok, children_ok) = ex.block_on(async move {
            spawn(async move {
                let children: Vec<_> = (0..10)
                    .map(|_| {
                        let s = s.clone();
                        spawn(async move { s.arrive_and_wait(2) })
                    })
                    .collect();
                let parent_ok = s.arrive_and_wait(2);
                let mut children_ok = true;
                for c in children {
                    children_ok &= c.await.unwrap();
                }
                (parent_ok, children_ok)
            })
            .await
            .unwrap()
        });
        assert!(parent_ok, "no other worker ran a child of the busy worker");
        assert!(children_ok);
        assert_eq!(seen.count(), 2);
    })
}

/// Many tasks posted from outside each wait until both workers have been
/// seen: they all get through, so both workers took part.
#[test]
fn many_tasks_spread_over_both_workers() {
    with_timeout(|| {
        let ex = executor(2);
        let seen = ThreadsSeen::default();
        let handles: Vec<_> = (0..50)
            .map(|_| {
                let seen = seen.clone();
                ex.spawn(async move { seen.arrive_and_wait(2) })
            })
            .collect();
        for h in handles {
            assert!(futures::executor::block_on(h).unwrap());
        }
        assert_eq!(seen.count(), 2);
    })
}
