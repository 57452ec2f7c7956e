//! A blocking job counts in the task groups of the code that spawned it, as
//! a spawned task does: `TaskGroup` counts it until it has run, and an
//! enclosing `block_on` waits for it even when its handle was detached
//! (which `JoinHandle::detach` promised). Before the fix a `spawn_blocking`
//! job counted in no group: the group read empty while the job still ran,
//! and `block_on` returned before it.

mod support;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{mpsc, Arc};

use fastexec::TaskGroup;
use support::{executor, with_timeout, TIMEOUT};

#[test]
fn a_task_group_counts_a_blocking_job_until_it_has_run() {
    with_timeout(|| {
        let ex = executor(1);
        let group = Arc::new(TaskGroup::new());
        let (release_tx, release_rx) = mpsc::channel::<()>();
        // Spawned from outside any block_on, which would wait for the job.
        let in_group = group.clone();
        let member = ex.spawn(async move {
            in_group
                .spawn(async move {
                    fastexec::spawn_blocking(move || release_rx.recv_timeout(TIMEOUT)).detach();
                })
                .await
        });
        futures::executor::block_on(member).unwrap().unwrap();
        assert_eq!(group.active(), 1, "the job, blocked, still counts");
        release_tx.send(()).unwrap();
        ex.block_on(group.wait());
        assert!(group.is_empty());
    })
}

#[test]
fn block_on_waits_for_a_detached_blocking_job() {
    with_timeout(|| {
        let ex = executor(1);
        let done = Arc::new(AtomicBool::new(false));
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        // Releases the job once it runs, from outside the block_on.
        let releaser = std::thread::spawn(move || {
            started_rx.recv_timeout(TIMEOUT).unwrap();
            release_tx.send(()).unwrap();
        });
        let flag = done.clone();
        ex.block_on(async move {
            fastexec::spawn_blocking(move || {
                started_tx.send(()).unwrap();
                release_rx.recv_timeout(TIMEOUT).unwrap();
                flag.store(true, SeqCst);
            })
            .detach();
        });
        assert!(done.load(SeqCst), "block_on returned after the job ran");
        releaser.join().unwrap();
    })
}
