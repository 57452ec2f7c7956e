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
use std::time::Instant;

use fastexec::{spawn, Executor};
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

/// Spins (bounded by [`TIMEOUT`]) until a worker other than the caller's
/// has gone to sleep, so that a spawn that follows finds it parked.
fn other_worker_parked(ex: &Executor) -> bool {
    let parks = ex.metrics().parks;
    let deadline = Instant::now() + TIMEOUT;
    while ex.metrics().parks == parks {
        if Instant::now() > deadline {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

/// A flag a task raises once and a thread can block or spin on.
#[derive(Default)]
struct Flag(Mutex<bool>, Condvar);

impl Flag {
    fn raise(&self) {
        *self.0.lock().unwrap() = true;
        self.1.notify_all();
    }

    fn is_raised(&self) -> bool {
        *self.0.lock().unwrap()
    }

    /// Blocks until raised; `false` if not within [`TIMEOUT`].
    fn wait(&self) -> bool {
        let raised = self.0.lock().unwrap();
        let (raised, _) = self.1.wait_timeout_while(raised, TIMEOUT, |r| !*r).unwrap();
        *raised
    }
}

/// On two workers, once the other one sleeps, a task spawns one child and
/// then keeps its thread until `hold` returns (given the flag the child
/// raises when it runs). Returns what `hold` returned, and whether the
/// child ran on a thread other than its spawner's.
fn spawn_lone_child_then_hold(hold: fn(&Flag) -> bool) -> (bool, bool) {
    with_timeout(move || {
        let ex = Arc::new(executor(2));
        let handle = ex.clone();
        ex.block_on(async {
            spawn(async move {
                assert!(other_worker_parked(&handle), "the other worker never slept");
                let ran = Arc::new(Flag::default());
                let flag = ran.clone();
                let child = spawn(async move {
                    flag.raise();
                    thread::current().id()
                });
                let held = hold(&ran);
                let spawner = thread::current().id();
                (held, child.await.unwrap() != spawner)
            })
            .await
            .unwrap()
        })
    })
}

/// A task spawned alone, by a task that then blocks its worker until the
/// child has run, still runs, on the other worker, which was asleep: the
/// spawner wakes nobody when a watcher sleeps (it expects to run its lone
/// child next itself), and the watcher's next look finds the child
/// (`idle.rs`); with no watcher, the spawn wakes the sleeper.
#[test]
fn lone_child_of_a_blocked_task_runs_on_the_other_worker() {
    let (ran, elsewhere) = spawn_lone_child_then_hold(Flag::wait);
    assert!(ran, "the lone child did not run while its spawner blocked");
    assert!(elsewhere);
}

/// The same with a spawner that spins (bounded by [`TIMEOUT`]) instead of
/// blocking: its poll does not end until the child has run elsewhere.
#[test]
fn lone_child_of_a_busy_task_runs_on_the_other_worker() {
    let (ran, elsewhere) = spawn_lone_child_then_hold(|ran| {
        let deadline = Instant::now() + TIMEOUT;
        while !ran.is_raised() && Instant::now() < deadline {
            std::hint::spin_loop();
        }
        ran.is_raised()
    });
    assert!(ran, "the lone child waited for its spawner's poll");
    assert!(elsewhere);
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

/// On `ex`, a task spawns `children` children into its own worker's queue
/// and then blocks that worker until another thread has run one of them;
/// with `after_sleep`, it first waits until the other worker has parked
/// (from inside the task: with this worker busy, the other one parks as
/// the watcher and keeps parking again, so a park is sure to come).
/// Returns whether the parent got past that wait, whether every child did,
/// and how many threads were seen.
fn burst_then_hold(ex: &Arc<Executor>, children: usize, after_sleep: bool) -> (bool, bool, usize) {
    let seen = ThreadsSeen::default();
    let s = seen.clone();
    let handle = ex.clone();
    let (parent_ok, children_ok) = ex.block_on(async move {
        spawn(async move {
            if after_sleep {
                assert!(other_worker_parked(&handle), "the other worker never slept");
            }
            let handles: Vec<_> = (0..children)
                .map(|_| {
                    let s = s.clone();
                    spawn(async move { s.arrive_and_wait(2) })
                })
                .collect();
            let parent_ok = s.arrive_and_wait(2);
            let mut children_ok = true;
            for h in handles {
                children_ok &= h.await.unwrap();
            }
            (parent_ok, children_ok)
        })
        .await
        .unwrap()
    });
    (parent_ok, children_ok, seen.count())
}

/// A task spawns children into its own worker's queue and then blocks that
/// worker until another thread has run one of them: the other worker must
/// steal from the busy worker's queue.
#[test]
fn idle_worker_steals_from_busy_worker() {
    with_timeout(|| {
        let ex = Arc::new(executor(2));
        let (parent_ok, children_ok, threads) = burst_then_hold(&ex, 10, false);
        assert!(parent_ok, "no other worker ran a child of the busy worker");
        assert!(children_ok);
        assert_eq!(threads, 2);
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

/// Round after round, once the other worker sleeps, a task spawns a burst
/// of two to six children and blocks its worker until another thread has
/// run one. Only the push that makes spare work (the second task held)
/// wakes anyone; later pushes onto it rely on that wake-up. A liveness
/// check, not a check of the rule itself: were no one woken, the watcher's
/// next look would still find the burst, a watch interval later.
#[test]
fn every_burst_onto_spare_work_reaches_a_sleeping_worker() {
    with_timeout(|| {
        let ex = Arc::new(executor(2));
        for round in 0..20 {
            let (parent_ok, children_ok, threads) = burst_then_hold(&ex, 2 + round % 5, true);
            assert!(parent_ok, "round {round}: the burst stayed on its worker");
            assert!(children_ok, "round {round}");
            assert_eq!(threads, 2, "round {round}");
        }
    })
}
