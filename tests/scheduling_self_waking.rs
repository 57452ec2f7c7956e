//! Workers that do nothing but requeue tasks that wake themselves: work
//! posted from outside still runs, and such a worker offers its core to
//! the operating system once per global interval, but not while other
//! tasks are queued on it (`worker.rs`, "Spinning on self-waking tasks").

mod support;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use fastexec::{spawn, yield_now};
use support::{executor, with_timeout};

async fn yield_times(n: usize) {
    for _ in 0..n {
        yield_now().await;
    }
}

/// A task yielding 10,000 times alone on the only worker: one core offer per
/// 61 ticks, about 160 in all.
#[test]
fn lone_self_waking_task_offers_the_core() {
    with_timeout(|| {
        let ex = executor(1);
        ex.block_on(async { spawn(yield_times(10_000)).await.unwrap() });
        let offers = ex.metrics().core_offers;
        assert!((100..=200).contains(&offers), "{offers} core offers");
    })
}

/// 200 tasks yielding in turn on one worker keep its ring full: it never
/// offers its core.
#[test]
fn no_core_offer_while_other_tasks_are_queued() {
    with_timeout(|| {
        let ex = executor(1);
        ex.block_on(async {
            spawn(async {
                let handles: Vec<_> = (0..200).map(|_| spawn(yield_times(100))).collect();
                for handle in handles {
                    handle.await.unwrap();
                }
            })
            .await
            .unwrap()
        });
        assert_eq!(ex.metrics().core_offers, 0);
    })
}

/// Every worker runs a task that yields until told to stop; 1,000 tasks
/// spawned from outside all run and their handles all complete meanwhile.
#[test]
fn outside_work_runs_while_every_worker_spins() {
    with_timeout(|| {
        let ex = executor(2);
        let stop = Arc::new(AtomicBool::new(false));
        let spinners: Vec<_> = (0..2)
            .map(|_| {
                let stop = stop.clone();
                ex.spawn(async move {
                    while !stop.load(Relaxed) {
                        yield_now().await;
                    }
                })
            })
            .collect();
        let handles: Vec<_> = (0..1_000).map(|i| ex.spawn(async move { i })).collect();
        let sum: usize = ex.block_on(async {
            let mut sum = 0;
            for handle in handles {
                sum += handle.await.unwrap();
            }
            sum
        });
        assert_eq!(sum, (0..1_000).sum::<usize>());
        stop.store(true, Relaxed);
        ex.block_on(async {
            for spinner in spinners {
                spinner.await.unwrap();
            }
        });
    })
}
