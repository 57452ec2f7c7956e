//! A panic in a thread hook is caught: the worker goes on. Before, a
//! panicking `on_thread_start` hook killed its worker thread while the idle
//! accounting still counted it as awake, and every task queued for it
//! waited for ever (with one worker, `block_on` of the simplest task hung).

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::time::Duration;

mod support;

/// Only a hang guard: a healthy executor answers in microseconds.
const GUARD: Duration = Duration::from_secs(10);

#[test]
fn a_worker_whose_start_hook_panicked_runs_tasks() {
    support::quiet_panics("thread start hook failed");
    let executor = fastexec::Executor::builder()
        .threads(1)
        .on_thread_start(|| panic!("thread start hook failed"))
        .build()
        .expect("the executor builds");
    let handle = executor.spawn(async { 42 });
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(futures::executor::block_on(handle).ok());
    });
    match rx.recv_timeout(GUARD) {
        Ok(answer) => assert_eq!(answer, Some(42)),
        Err(_) => {
            // Leaked: dropping it would wait for the hung worker.
            std::mem::forget(executor);
            panic!("the task never ran on the worker whose start hook panicked");
        }
    }
}

#[test]
fn a_panicking_stop_hook_lets_the_executor_drop() {
    support::quiet_panics("thread stop hook failed");
    let stops = Arc::new(AtomicUsize::new(0));
    let counted = stops.clone();
    let executor = fastexec::Executor::builder()
        .threads(2)
        .on_thread_stop(move || {
            counted.fetch_add(1, SeqCst);
            panic!("thread stop hook failed")
        })
        .build()
        .expect("the executor builds");
    assert_eq!(executor.block_on(async { 7 }), 7);
    support::within(10, move || drop(executor));
    assert_eq!(stops.load(SeqCst), 2, "each worker ran its stop hook once");
}
