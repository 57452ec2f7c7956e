//! Dropping an `Executor` stops its threads and drops the future of every
//! unfinished task: parked forever, parked in a cycle, queued and never
//! run, or parked on a waker held outside the executor.

mod support;

use std::future::{pending, poll_fn};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc;
use std::sync::Mutex;
use std::task::{Poll, Waker};

use fastexec::Executor;
use futures::channel::oneshot;
use support::{counter, executor, get, spawn_parked, with_timeout, DropCounter, TIMEOUT};

/// Tasks parked forever on `pending()`; their handles report cancellation
/// after the drop.
fn parked_forever(threads: usize) {
    with_timeout(move || {
        let ex = executor(threads);
        let drops = DropCounter::new();
        let handles: Vec<_> = (0..100).map(|_| spawn_parked(&ex, drops.guard())).collect();
        assert_eq!(drops.count(), 0);
        drop(ex);
        assert_eq!(drops.count(), 100);
        for handle in handles {
            let err = futures::executor::block_on(handle).unwrap_err();
            assert!(err.is_cancelled());
        }
    })
}

#[test]
fn drop_with_tasks_parked_forever_one_thread() {
    parked_forever(1);
}

#[test]
fn drop_with_tasks_parked_forever_two_threads() {
    parked_forever(2);
}

/// Pairs of tasks each waiting on a channel whose sender the other holds.
#[test]
fn drop_with_tasks_parked_in_a_cycle() {
    with_timeout(|| {
        let ex = executor(2);
        let drops = DropCounter::new();
        let (started_tx, started_rx) = mpsc::channel();
        for _ in 0..50 {
            let (to_a, a_rx) = oneshot::channel::<()>();
            let (to_b, b_rx) = oneshot::channel::<()>();
            for (rx, peer_tx) in [(a_rx, to_b), (b_rx, to_a)] {
                let (guard, started_tx) = (drops.guard(), started_tx.clone());
                ex.spawn(async move {
                    let _guard = guard;
                    let _peer_tx = peer_tx;
                    started_tx.send(()).unwrap();
                    let _ = rx.await;
                    // The peer's sender is dropped only with the peer's
                    // future, so this is reached only during shutdown.
                    pending::<()>().await;
                })
                .detach();
            }
        }
        for _ in 0..100 {
            started_rx.recv_timeout(TIMEOUT).expect("task started");
        }
        drop(ex);
        assert_eq!(drops.count(), 100);
    })
}

/// Occupies the only worker of `ex` until the returned sender is used.
/// Returns once the blocker is running.
fn block_worker<T: Send + 'static>(
    ex: &Executor,
    on_release: impl FnOnce(T) + Send + 'static,
) -> mpsc::Sender<T> {
    let (release_tx, release_rx) = mpsc::channel::<T>();
    let (started_tx, started_rx) = mpsc::channel();
    ex.spawn(async move {
        started_tx.send(()).unwrap();
        on_release(release_rx.recv().unwrap());
    })
    .detach();
    started_rx.recv_timeout(TIMEOUT).expect("blocker started");
    release_tx
}

/// Tasks spawned from outside while the only worker is blocked; the
/// executor is then dropped from the blocking task itself, so the queued
/// tasks can never have started.
#[test]
fn drop_with_tasks_queued_from_outside_never_run() {
    with_timeout(|| {
        let ex = executor(1);
        let (drops, started) = (DropCounter::new(), counter());
        let (dropped_tx, dropped_rx) = mpsc::channel();
        let release = block_worker(&ex, move |ex: Executor| {
            drop(ex);
            dropped_tx.send(()).unwrap();
        });
        for _ in 0..1000 {
            let (guard, started) = (drops.guard(), started.clone());
            ex.spawn(async move {
                let _guard = guard;
                started.fetch_add(1, SeqCst);
            })
            .detach();
        }
        release.send(ex).unwrap();
        dropped_rx.recv_timeout(TIMEOUT).expect("executor dropped");
        assert_eq!(drops.wait_for(1000), 1000);
        assert_eq!(get(&started), 0);
    })
}

/// Tasks spawned from the blocking task itself, so they sit in the
/// worker's own queue (and, past its capacity, the overflow); the executor
/// is then dropped from that task.
#[test]
fn drop_with_tasks_queued_from_a_task_never_run() {
    with_timeout(|| {
        let ex = executor(1);
        let (drops, started) = (DropCounter::new(), counter());
        let (d, s) = (drops.clone(), started.clone());
        let release = block_worker(&ex, move |ex: Executor| {
            for _ in 0..1000 {
                let (guard, started) = (d.guard(), s.clone());
                fastexec::spawn(async move {
                    let _guard = guard;
                    started.fetch_add(1, SeqCst);
                })
                .detach();
            }
            drop(ex);
        });
        release.send(ex).unwrap();
        assert_eq!(drops.wait_for(1000), 1000);
        assert_eq!(get(&started), 0);
    })
}

/// Tasks queued behind a blocked worker and parked forever once they run;
/// the worker is released just before the executor is dropped from the
/// test thread, so each task is either still queued or parked: all are
/// dropped by the time `drop` returns.
#[test]
fn drop_right_after_releasing_a_blocked_worker() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let release = block_worker(&ex, |()| {});
        for _ in 0..1000 {
            let guard = drops.guard();
            ex.spawn(async move {
                let _guard = guard;
                pending::<()>().await;
            })
            .detach();
        }
        release.send(()).unwrap();
        drop(ex);
        assert_eq!(drops.count(), 1000);
    })
}

static HELD_WAKER: Mutex<Option<Waker>> = Mutex::new(None);

/// A task whose only waker is kept in a static: dropping the executor drops
/// its future, and a later wake through that waker is harmless.
#[test]
fn drop_with_task_whose_waker_is_held_in_a_static() {
    with_timeout(|| {
        let ex = executor(2);
        let drops = DropCounter::new();
        let polls = counter();
        let (parked_tx, parked_rx) = mpsc::channel();
        let (guard, p) = (drops.guard(), polls.clone());
        ex.spawn(async move {
            let _guard = guard;
            poll_fn(|cx| {
                p.fetch_add(1, SeqCst);
                *HELD_WAKER.lock().unwrap() = Some(cx.waker().clone());
                let _ = parked_tx.send(());
                Poll::<()>::Pending
            })
            .await
        })
        .detach();
        parked_rx.recv_timeout(TIMEOUT).expect("task parked");
        drop(ex);
        assert_eq!(drops.count(), 1);
        let polls_at_drop = get(&polls);
        let waker = HELD_WAKER.lock().unwrap().take().expect("waker stored");
        waker.wake_by_ref();
        waker.wake();
        assert_eq!(get(&polls), polls_at_drop, "a dropped task was polled");
    })
}

/// A task waiting for a plain thread's message: after the drop the thread
/// finds the receiving end gone.
#[test]
fn drop_with_task_waiting_on_foreign_thread() {
    with_timeout(|| {
        let ex = executor(1);
        let (tx, rx) = oneshot::channel::<u32>();
        let (started_tx, started_rx) = mpsc::channel();
        ex.spawn(async move {
            started_tx.send(()).unwrap();
            rx.await
        })
        .detach();
        started_rx.recv_timeout(TIMEOUT).unwrap();
        drop(ex);
        let thread = std::thread::spawn(move || tx.send(1));
        assert_eq!(thread.join().unwrap(), Err(1), "receiver should be gone");
    })
}

/// Building, using and dropping executors in a loop joins their threads.
#[test]
fn many_executors_built_and_dropped() {
    with_timeout(|| {
        for i in 0..50usize {
            let ex = executor(1 + i % 3);
            let drops = DropCounter::new();
            let guard = drops.guard();
            ex.spawn(async move {
                let _guard = guard;
                pending::<()>().await;
            })
            .detach();
            assert_eq!(
                ex.block_on(async move { fastexec::spawn(async move { i }).await })
                    .unwrap(),
                i
            );
            drop(ex);
            assert_eq!(drops.count(), 1);
        }
    })
}
