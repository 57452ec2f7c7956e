//! Dropping a `JoinHandle` detaches the task: it runs to completion, and
//! its output is dropped when it finishes.

mod support;

use std::sync::mpsc;

use fastexec::yield_now;
use futures::channel::oneshot;
use support::{executor, with_timeout, DropCounter, TIMEOUT};

/// The handle is dropped while the task waits for a message; the task still
/// receives it and reports back.
#[test]
fn dropped_handle_task_runs_to_completion() {
    with_timeout(|| {
        let ex = executor(1);
        let (msg_tx, msg_rx) = oneshot::channel::<u32>();
        let (done_tx, done_rx) = mpsc::channel::<u32>();
        let handle = ex.spawn(async move {
            let n = msg_rx.await.unwrap();
            yield_now().await;
            done_tx.send(n + 1).unwrap();
        });
        drop(handle);
        msg_tx.send(41).unwrap();
        assert_eq!(done_rx.recv_timeout(TIMEOUT), Ok(42));
    })
}

/// A detached task that has not started yet when its handle is dropped.
#[test]
fn handle_dropped_before_task_starts() {
    with_timeout(|| {
        let ex = executor(1);
        let (block_tx, block_rx) = mpsc::channel::<()>();
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<&str>();
        // Occupies the only worker until released.
        ex.spawn(async move {
            started_tx.send(()).unwrap();
            block_rx.recv().unwrap();
        })
        .detach();
        started_rx.recv_timeout(TIMEOUT).unwrap();
        drop(ex.spawn(async move { done_tx.send("ran").unwrap() }));
        block_tx.send(()).unwrap();
        assert_eq!(done_rx.recv_timeout(TIMEOUT), Ok("ran"));
    })
}

/// The output of a detached task is dropped (not leaked) after it finishes.
#[test]
fn detached_task_output_is_dropped() {
    with_timeout(|| {
        let ex = executor(2);
        let drops = DropCounter::new();
        for _ in 0..50 {
            let guard = drops.guard();
            ex.spawn(async move {
                yield_now().await;
                guard
            })
            .detach();
        }
        assert_eq!(drops.wait_for(50), 50);
    })
}

/// Detached tasks spawned from a task (with `.detach()`) run too.
#[test]
fn detached_from_inside_a_task() {
    with_timeout(|| {
        let ex = executor(2);
        let (done_tx, done_rx) = mpsc::channel::<usize>();
        ex.spawn(async move {
            for i in 0..10 {
                let done_tx = done_tx.clone();
                fastexec::spawn(async move {
                    yield_now().await;
                    done_tx.send(i).unwrap();
                })
                .detach();
            }
        })
        .detach();
        let mut got: Vec<usize> = (0..10)
            .map(|_| {
                done_rx
                    .recv_timeout(TIMEOUT)
                    .expect("detached task finished")
            })
            .collect();
        got.sort();
        assert_eq!(got, (0..10).collect::<Vec<_>>());
    })
}
