//! `JoinHandle::abort`: the future is dropped and awaiting gives a cancelled
//! error; a finished task still gives its output; aborting twice is
//! harmless; `wait!` on a cancelled task panics saying so.

mod support;

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::mpsc;
use std::sync::Arc;

use fastexec::spawn;
use support::{counter, executor, get, panic_text, spin_until, with_timeout, DropCounter, TIMEOUT};

/// A task parked on `pending()` is aborted from outside: by the time the
/// handle reports the cancellation, the future (and what it owned) is gone.
fn abort_parked_task(threads: usize) {
    with_timeout(move || {
        let ex = executor(threads);
        let drops = DropCounter::new();
        let owned = Arc::new(());
        let (started_tx, started_rx) = mpsc::channel();
        let guard = drops.guard();
        let held = owned.clone();
        let mut handle = ex.spawn(async move {
            let _guard = guard;
            let _held = held;
            started_tx.send(()).unwrap();
            std::future::pending::<()>().await;
        });
        started_rx.recv_timeout(TIMEOUT).expect("task started");
        assert_eq!(drops.count(), 0);
        assert_eq!(Arc::strong_count(&owned), 2);
        handle.abort();
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_cancelled());
        assert!(!err.is_panic());
        assert_eq!(drops.count(), 1);
        assert_eq!(Arc::strong_count(&owned), 1);
    })
}

#[test]
fn abort_parked_task_one_thread() {
    abort_parked_task(1);
}

#[test]
fn abort_parked_task_two_threads() {
    abort_parked_task(2);
}

/// A task still queued behind the running one on the only worker is
/// aborted before it ever runs: its body never executes.
#[test]
fn abort_queued_task_never_runs_it() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let ran = counter();
        let (guard, r) = (drops.guard(), ran.clone());
        let err = ex.block_on(async move {
            spawn(async move {
                let mut child = spawn(async move {
                    let _guard = guard;
                    r.fetch_add(1, SeqCst);
                });
                child.abort();
                child.await.unwrap_err()
            })
            .await
            .unwrap()
        });
        assert!(err.is_cancelled());
        assert_eq!(get(&ran), 0);
        assert_eq!(drops.count(), 1);
    })
}

/// A task on `ex` that holds a drop guard and blocks inside its first poll
/// until the returned sender sends (then parks forever), aborted while it
/// is in that poll.
fn aborted_while_in_poll(
    ex: &fastexec::Executor,
    drops: &DropCounter,
) -> (fastexec::JoinHandle<()>, mpsc::Sender<()>) {
    let (in_poll_tx, in_poll_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let guard = drops.guard();
    let mut handle = ex.spawn(async move {
        let _guard = guard;
        in_poll_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        std::future::pending::<()>().await;
    });
    in_poll_rx
        .recv_timeout(TIMEOUT)
        .expect("task is being polled");
    handle.abort();
    (handle, go_tx)
}

/// Aborted while inside a poll: the future is dropped after that poll
/// returns `Pending`, and the handle reports the cancellation.
#[test]
fn abort_task_while_it_is_being_polled() {
    with_timeout(|| {
        let (ex, drops) = (executor(1), DropCounter::new());
        let (handle, go) = aborted_while_in_poll(&ex, &drops);
        go.send(()).unwrap();
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(drops.count(), 1);
    })
}

/// `is_finished` after `abort` reports the task, not the handle: while the
/// aborted task's poll still runs it is not finished, and once it reports
/// finished its future has been dropped.
#[test]
fn aborted_task_is_finished_only_once_its_future_is_dropped() {
    with_timeout(|| {
        let (ex, drops) = (executor(1), DropCounter::new());
        let (handle, go) = aborted_while_in_poll(&ex, &drops);
        assert!(!handle.is_finished(), "its poll is still running");
        go.send(()).unwrap();
        assert!(spin_until(|| handle.is_finished()), "finished in time");
        assert_eq!(drops.count(), 1, "finished means its future is gone");
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_cancelled());
    })
}

/// Asking `is_finished` of an aborted handle that is being awaited keeps
/// the awaiter's wake-up: here the awaiting poll asks it right after
/// registering, then returns `Pending`, and only the task's end can wake
/// it again.
#[test]
fn is_finished_on_an_awaited_aborted_handle_keeps_the_wake_up() {
    with_timeout(|| {
        let (ex, drops) = (executor(1), DropCounter::new());
        let (mut handle, go) = aborted_while_in_poll(&ex, &drops);
        let mut go = Some(go);
        let err = futures::executor::block_on(std::future::poll_fn(|cx| {
            let polled = std::pin::Pin::new(&mut handle).poll(cx);
            if polled.is_pending() {
                assert!(!handle.is_finished());
                if let Some(go) = go.take() {
                    go.send(()).unwrap();
                }
            }
            polled
        }))
        .unwrap_err();
        assert!(err.is_cancelled());
    })
}

#[test]
fn abort_finished_task_still_gives_output() {
    with_timeout(|| {
        let ex = executor(1);
        let mut handle = ex.spawn(async { 99 });
        assert!(spin_until(|| handle.is_finished()), "task never finished");
        handle.abort();
        assert_eq!(futures::executor::block_on(handle).unwrap(), 99);
    })
}

#[test]
fn abort_twice_is_harmless() {
    with_timeout(|| {
        let ex = executor(2);
        let drops = DropCounter::new();
        let guard = drops.guard();
        let mut handle = ex.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        });
        handle.abort();
        handle.abort();
        let err = futures::executor::block_on(&mut handle).unwrap_err();
        assert!(err.is_cancelled());
        handle.abort();
        assert_eq!(drops.count(), 1);
    })
}

/// Aborting after the output was taken through `&mut handle` does nothing.
#[test]
fn abort_after_output_taken_is_harmless() {
    with_timeout(|| {
        let ex = executor(1);
        let mut handle = ex.spawn(async { "done" });
        assert_eq!(futures::executor::block_on(&mut handle).unwrap(), "done");
        assert!(handle.is_finished());
        handle.abort();
        handle.abort();
    })
}

/// `wait!` on an aborted task panics with a message about the cancellation.
#[test]
fn wait_on_cancelled_handle_panics() {
    with_timeout(|| {
        let ex = executor(1);
        let mut handle = ex.spawn(std::future::pending::<u8>());
        handle.abort();
        let caught = catch_unwind(AssertUnwindSafe(|| fastexec::wait!(handle)));
        let text = panic_text(&*caught.expect_err("wait! must panic"));
        assert!(text.contains("cancelled"), "unexpected message: {text:?}");
    })
}

/// Aborting many parked tasks from a task drops every one of them.
#[test]
fn abort_many_parked_tasks_from_a_task() {
    with_timeout(|| {
        let ex = executor(2);
        let drops = DropCounter::new();
        let d = drops.clone();
        let cancelled = ex.block_on(async move {
            let mut handles: Vec<_> = (0..500)
                .map(|_| {
                    let guard = d.guard();
                    spawn(async move {
                        let _guard = guard;
                        std::future::pending::<()>().await;
                    })
                })
                .collect();
            handles.iter_mut().for_each(|h| h.abort());
            let mut cancelled = 0;
            for h in handles {
                cancelled += usize::from(h.await.unwrap_err().is_cancelled());
            }
            cancelled
        });
        assert_eq!(cancelled, 500);
        assert_eq!(drops.count(), 500);
    })
}
