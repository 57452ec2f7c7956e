//! A lone worker that runs dry looks at the queues for a few microseconds
//! before it parks (`worker.rs`, "Waiting before parking"). The wait is
//! bounded: the worker still parks after every run of work; work posted
//! while it waits runs, in the order it was posted; and an executor dropped
//! while its worker waits shuts down.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use support::{executor, with_timeout, TIMEOUT};

/// Waits (yielding, bounded by [`TIMEOUT`]) until the executor has counted
/// more than `parks` parks; panics if it never does.
fn wait_for_parks_above(ex: &fastexec::Executor, parks: u64) -> u64 {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let now = ex.metrics().parks;
        if now > parks {
            return now;
        }
        assert!(
            Instant::now() < deadline,
            "the lone worker never parked (still {now} parks)"
        );
        std::thread::yield_now();
    }
}

#[test]
fn a_lone_worker_parks_again_after_each_run() {
    with_timeout(|| {
        let ex = executor(1);
        // It parks once on start, finding nothing.
        let mut parks = wait_for_parks_above(&ex, 0);
        for round in 0..20 {
            let ran = ex.block_on(ex.spawn(async move { round })).unwrap();
            assert_eq!(ran, round);
            // The worker was parked (its count was read after its last
            // park), the spawn woke it, and after running the task it must
            // park again: its wait for more work is bounded.
            parks = wait_for_parks_above(&ex, parks);
        }
    });
}

#[test]
fn bursts_posted_while_the_worker_waits_run_in_order() {
    with_timeout(|| {
        const BURSTS: usize = 200;
        const PER_BURST: usize = 50;
        let ex = executor(1);
        let order = Arc::new(Mutex::new(Vec::with_capacity(BURSTS * PER_BURST)));
        for burst in 0..BURSTS {
            let done = Arc::new(AtomicUsize::new(0));
            let mut handles = Vec::with_capacity(PER_BURST);
            for i in 0..PER_BURST {
                let order = order.clone();
                let done = done.clone();
                handles.push(ex.spawn(async move {
                    order.lock().unwrap().push(burst * PER_BURST + i);
                    done.fetch_add(1, Ordering::Relaxed);
                }));
            }
            // Each burst ends before the next begins, so the worker runs
            // dry between bursts and the next burst arrives while it waits
            // (or after it parked, which the first test covers).
            for handle in handles {
                ex.block_on(handle).unwrap();
            }
            assert_eq!(done.load(Ordering::Relaxed), PER_BURST);
        }
        let order = order.lock().unwrap();
        assert_eq!(order.len(), BURSTS * PER_BURST);
        assert!(
            order.iter().enumerate().all(|(i, &n)| i == n),
            "one worker starts one poster's tasks in the order they were posted"
        );
    });
}

#[test]
fn an_executor_dropped_while_its_worker_waits_shuts_down() {
    with_timeout(|| {
        for round in 0..100 {
            let ex = executor(1);
            let ran = ex.block_on(ex.spawn(async move { round })).unwrap();
            assert_eq!(ran, round);
            // The worker has just run dry and is most likely still looking
            // for work: the drop must still join it.
            drop(ex);
        }
    });
}
