//! `spawn_many` and `detach_many` run every task exactly once and hand the
//! handles back in the order of the futures: from outside the executor
//! (the outside poster's ring, and the injector for a second thread), from
//! one of its workers, through the free functions, for batches of zero,
//! one, and several chunks and rings' worth of tasks.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;

use support::{executor, with_timeout};

/// Several rings (256 slots) and chunks (128 tasks), and a partial chunk.
const MANY: usize = 2_000 + 37;

/// A counter per task: each task adds one to its own.
fn counters(n: usize) -> Arc<Vec<AtomicUsize>> {
    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect())
}

fn assert_each_ran_once(ran: &[AtomicUsize]) {
    for (i, count) in ran.iter().enumerate() {
        assert_eq!(count.load(Relaxed), 1, "task {i} ran {count:?} times");
    }
}

/// Futures that count their own run and return their index.
fn counted(
    ran: &Arc<Vec<AtomicUsize>>,
) -> impl Iterator<Item = impl std::future::Future<Output = usize>> {
    let ran = ran.clone();
    (0..ran.len()).map(move |i| {
        let ran = ran.clone();
        async move {
            ran[i].fetch_add(1, Relaxed);
            i
        }
    })
}

#[test]
fn from_outside_the_outputs_come_back_in_order() {
    with_timeout(|| {
        for threads in [1, 2] {
            let ex = executor(threads);
            for n in [0, 1, 128, MANY] {
                let ran = counters(n);
                let mut handles = Vec::new();
                ex.spawn_many(counted(&ran), &mut handles);
                assert_eq!(handles.len(), n);
                let outputs: Vec<usize> = ex.block_on(async {
                    let mut outputs = Vec::new();
                    for handle in handles {
                        outputs.push(handle.await.unwrap());
                    }
                    outputs
                });
                assert_eq!(outputs, (0..n).collect::<Vec<_>>());
                assert_each_ran_once(&ran);
            }
        }
    })
}

#[test]
fn from_a_worker_the_outputs_come_back_in_order() {
    with_timeout(|| {
        for threads in [1, 2] {
            let ex = executor(threads);
            for n in [0, 1, 128, MANY] {
                let ran = counters(n);
                let inner = ran.clone();
                let outputs = ex.block_on(async move {
                    let spawner = fastexec::spawn(async move {
                        let mut handles = Vec::new();
                        fastexec::spawn_many(counted(&inner), &mut handles);
                        let mut outputs = Vec::new();
                        for handle in handles {
                            outputs.push(handle.await.unwrap());
                        }
                        outputs
                    });
                    spawner.await.unwrap()
                });
                assert_eq!(outputs, (0..n).collect::<Vec<_>>());
                assert_each_ran_once(&ran);
            }
        }
    })
}

#[test]
fn detached_batches_run_once_from_everywhere() {
    with_timeout(|| {
        let ex = Arc::new(executor(2));
        // The test thread's first post claims the outside ring; a second
        // thread's batches go through the injector.
        ex.spawn(async {}).detach();
        let from_here = counters(MANY);
        let from_other = counters(MANY);
        let from_worker = counters(MANY);
        let other = {
            let (ex, from_other) = (ex.clone(), from_other.clone());
            thread::spawn(move || {
                ex.block_on(async move {
                    fastexec::detach_many(counted(&from_other));
                })
            })
        };
        let worker_side = from_worker.clone();
        ex.block_on(async move {
            fastexec::spawn(async move {
                fastexec::detach_many(counted(&worker_side));
            })
            .detach();
        });
        let here = from_here.clone();
        ex.block_on(async move {
            fastexec::detach_many(counted(&here));
        });
        other.join().unwrap();
        // Each block_on waited for its batch (the tasks count in its group).
        assert_each_ran_once(&from_here);
        assert_each_ran_once(&from_other);
        assert_each_ran_once(&from_worker);
    })
}

#[test]
fn a_batch_from_outside_with_no_scope_runs_detached() {
    with_timeout(|| {
        let ex = executor(2);
        let ran = counters(MANY);
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let last = ran.clone();
        ex.detach_many(counted(&ran).map(|task| async {
            task.await;
        }));
        // No group outside a block_on: a task after the batch, awaited,
        // and then every counter, polled until set (no sleeps).
        ex.spawn(async move { done_tx.send(()).unwrap() }).detach();
        done_rx.recv_timeout(support::TIMEOUT).unwrap();
        assert!(support::spin_until(|| last
            .iter()
            .all(|c| c.load(Relaxed) == 1)));
        assert_each_ran_once(&ran);
    })
}

#[test]
fn one_worker_starts_an_outside_batch_in_order() {
    with_timeout(|| {
        let ex = executor(1);
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        // The only worker is blocked while the batch, several rings' worth,
        // is posted: the ring overflows, and order must survive that.
        ex.spawn(async move {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv();
        })
        .detach();
        started_rx.recv_timeout(support::TIMEOUT).unwrap();
        let mut handles = Vec::new();
        let tasks = (0..MANY).map(|i| {
            let order = order.clone();
            async move { order.lock().unwrap().push(i) }
        });
        ex.spawn_many(tasks, &mut handles);
        release_tx.send(()).unwrap();
        ex.block_on(async {
            for handle in handles {
                handle.await.unwrap();
            }
        });
        assert_eq!(*order.lock().unwrap(), (0..MANY).collect::<Vec<_>>());
    })
}
