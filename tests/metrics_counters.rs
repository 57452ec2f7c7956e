//! `Executor::metrics`: the counters move as they must, the queue depths
//! show queued work, and the opt-in latency histogram records one latency
//! per poll.

mod support;

use std::sync::mpsc;

use fastexec::{task, Executor, Priority};
use support::{executor, spin_until, with_timeout, Rendezvous};

const N: usize = 100;

#[test]
fn spawned_and_polls_count_every_task() {
    with_timeout(|| {
        let ex = executor(2);
        let before = ex.metrics();
        assert_eq!(before.spawned, 0);
        ex.block_on(async {
            // From block_on's thread (outside) and from a task (a worker).
            for _ in 0..N {
                fastexec::spawn(async {}).detach();
            }
            fastexec::spawn(async {
                for _ in 0..N {
                    fastexec::spawn(async {}).detach();
                }
            })
            .detach();
        });
        let after = ex.metrics();
        assert!(after.spawned > 2 * N as u64, "{after:?}");
        assert!(after.polls > 2 * N as u64, "{after:?}");
        assert!(after.latency.is_none());
    })
}

/// Spawns from several threads that are not workers are each counted once:
/// the first such thread counts on a counter of its own, the others on the
/// shared one, and the sum is exact once the tasks are done.
#[test]
fn spawns_from_several_outside_threads_are_counted_exactly() {
    with_timeout(|| {
        let ex = std::sync::Arc::new(executor(2));
        let spawners: Vec<_> = (0..4)
            .map(|_| {
                let ex = ex.clone();
                std::thread::spawn(move || {
                    let handles: Vec<_> = (0..N).map(|_| ex.spawn(async {})).collect();
                    handles
                })
            })
            .collect();
        let handles: Vec<_> = spawners
            .into_iter()
            .flat_map(|spawner| spawner.join().unwrap())
            .collect();
        ex.block_on(async {
            for handle in handles {
                handle.await.unwrap();
            }
        });
        // The block_on root is not a spawned task: exactly the 4 × N.
        assert_eq!(ex.metrics().spawned, 4 * N as u64);
        // The owner's thread has exited; a new thread still counts.
        let ex2 = ex.clone();
        std::thread::spawn(move || ex2.spawn(async {}).detach())
            .join()
            .unwrap();
        assert_eq!(ex.metrics().spawned, 4 * N as u64 + 1);
    })
}

/// The scheduling_spread technique: two children of one task can only pass
/// a two-party barrier if the other worker steals one of them.
#[test]
fn stealing_counts_steals() {
    with_timeout(|| {
        let ex = executor(2);
        let met = ex.block_on(async {
            fastexec::spawn(async {
                let barrier = Rendezvous::new(2);
                let handles: Vec<_> = (0..2)
                    .map(|_| {
                        let barrier = barrier.clone();
                        fastexec::spawn(async move { barrier.wait() })
                    })
                    .collect();
                let mut met = true;
                for handle in handles {
                    met &= handle.await.unwrap();
                }
                met
            })
            .await
            .unwrap()
        });
        assert!(met, "the children did not run at once");
        assert!(ex.metrics().steals > 0, "{:?}", ex.metrics());
    })
}

#[test]
fn an_idle_worker_counts_parks() {
    with_timeout(|| {
        let ex = executor(1);
        // With nothing to run, the worker parks on its own.
        assert!(spin_until(|| ex.metrics().parks > 0));
        let parks = ex.metrics().parks;
        // One task wakes it; once idle again it parks once more.
        ex.block_on(async { fastexec::spawn(async {}).await.unwrap() });
        assert!(spin_until(|| ex.metrics().parks > parks));
    })
}

/// Tasks posted while the only worker is blocked show in the depths.
#[test]
fn queue_depths_show_waiting_tasks() {
    with_timeout(|| {
        let ex = executor(1);
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let blocker = ex.spawn(async move {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv();
        });
        started_rx.recv().unwrap();
        let mut handles = Vec::new();
        for _ in 0..5 {
            handles.push(ex.spawn(async {}));
        }
        for priority in [Priority::High, Priority::High, Priority::Low] {
            handles.push(
                task::Builder::new()
                    .priority(priority)
                    .on(&ex)
                    .spawn(async {}),
            );
        }
        let metrics = ex.metrics();
        assert_eq!(metrics.injector_depth, 5, "{metrics:?}");
        assert_eq!(metrics.priority_queue_depths, (2, 1), "{metrics:?}");
        assert_eq!(metrics.worker_queue_depths, [0]);
        release_tx.send(()).unwrap();
        ex.block_on(blocker).unwrap();
        for handle in handles {
            ex.block_on(handle).unwrap();
        }
        let metrics = ex.metrics();
        assert_eq!(metrics.injector_depth, 0);
        assert_eq!(metrics.priority_queue_depths, (0, 0));
    })
}

#[test]
fn latency_histogram_records_every_poll() {
    with_timeout(|| {
        let ex = Executor::builder()
            .threads(2)
            .latency_histogram(true)
            .build()
            .unwrap();
        ex.block_on(async {
            for i in 0..N {
                // Each task is polled twice: it yields once.
                let builder = task::Builder::new().priority(match i % 3 {
                    0 => Priority::High,
                    1 => Priority::Normal,
                    _ => Priority::Low,
                });
                builder.spawn(fastexec::yield_now()).detach();
            }
        });
        let metrics = ex.metrics();
        let latency = metrics.latency.clone().expect("enabled");
        assert_eq!(latency.total(), 2 * N as u64, "{metrics:?}");
        assert_eq!(latency.total(), metrics.polls, "{metrics:?}");
        let median = latency.quantile(0.5).unwrap();
        assert!(median <= latency.quantile(1.0).unwrap());
    })
}
