//! The registry of parked tasks gives its memory back: once a burst of
//! parked tasks has ended, the heap is back to within a few pages of where
//! it was (the spare page each shard keeps), rather than keeping the
//! registry's peak size (16 bytes for each task of the burst, the wakers'
//! slots: 2 MB after the first burst here when it did).

mod support;

// The benches' counting allocator; this test does not stop it.
#[allow(dead_code)]
#[path = "../benches/common/alloc.rs"]
mod alloc;

use alloc::{live_bytes, peak_bytes, start_counting, Counting};
use std::time::Instant;

use support::{executor, with_timeout, DropCounter, TIMEOUT};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const TASKS: usize = 100_000;

/// Parks `TASKS` tasks, aborts them all, and returns the heap bytes left
/// over once every one is gone.
fn burst(ex: &fastexec::Executor, handles: &mut Vec<fastexec::JoinHandle<()>>) -> isize {
    let before = live_bytes();
    let started = DropCounter::new();
    let dropped = DropCounter::new();
    for _ in 0..TASKS {
        let (started, guard) = (started.guard(), dropped.guard());
        handles.push(ex.spawn(async move {
            let _guard = guard;
            drop(started);
            std::future::pending::<()>().await;
        }));
    }
    assert_eq!(started.wait_for(TASKS), TASKS, "tasks did not all start");
    for handle in handles.iter_mut() {
        handle.abort();
    }
    handles.clear();
    assert_eq!(dropped.wait_for(TASKS), TASKS, "tasks were not all dropped");
    // A task's memory goes after its future: wait for it to settle below a
    // byte per task, or (within the test's time) report where it stayed.
    let bound = before + TASKS as isize;
    let deadline = Instant::now() + TIMEOUT / 4;
    while live_bytes() >= bound && Instant::now() < deadline {
        std::thread::yield_now();
    }
    live_bytes() - before
}

#[test]
fn a_burst_of_parked_tasks_leaves_the_heap_as_it_found_it() {
    with_timeout(|| {
        let ex = executor(2);
        let mut handles = Vec::with_capacity(TASKS);
        start_counting();
        // The first burst sizes whatever is kept for the next (a spare
        // page per shard, queue blocks); the second must keep no more.
        let first = burst(&ex, &mut handles);
        let peak = peak_bytes();
        let second = burst(&ex, &mut handles);
        eprintln!("left {first} then {second} bytes, peak {peak}");
        assert!(
            peak > (TASKS * 100) as isize,
            "the burst was not measured: peak {peak} bytes"
        );
        assert!(
            first < TASKS as isize && second < TASKS as isize,
            "a burst of {TASKS} parked tasks left {first} and then {second} bytes \
             (peak {peak}): more than a byte per task"
        );
    })
}
