//! A `block_on` nested in a task, run on the worker, may look for work
//! (`Worker::next_task`, which makes the worker a searcher) and then find
//! its root future woken and ready. It must end that search before it
//! returns to the task: a worker counted as searching through the task's
//! long poll kept every notifier quiet and, with two workers, kept the
//! other from searching, so a task that poll spawned waited for it to end
//! although a worker was idle (`worker.rs` promises the idle worker takes
//! it within about one watch interval).
//!
//! The root future wakes itself once (a `yield_now`), so its wake lands
//! during its own poll, before `next_task` runs: no race is needed.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant};

use support::{executor, with_timeout, TIMEOUT};

/// Pending once, waking itself; then ready.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn unparked(ex: &fastexec::Executor) -> usize {
    let text = format!("{ex:?}");
    let at = text.find("unparked: ").expect("Debug shows unparked") + "unparked: ".len();
    text[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Runs one round: a task (on worker A) waits until worker B is parked,
/// optionally runs a nested `block_on` of a future that yields once, then
/// spawns a child and blocks (a long poll) until the child has run, for at
/// most `patience`. Returns whether the child ran.
fn round(ex: &Arc<fastexec::Executor>, nested_block_on: bool, patience: Duration) -> bool {
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (result_tx, result_rx) = mpsc::channel::<bool>();
    ex.spawn(async move {
        started_tx.send(()).unwrap();
        go_rx.recv_timeout(TIMEOUT).expect("go");
        if nested_block_on {
            fastexec::block_on(YieldOnce(false));
        }
        let (ran_tx, ran_rx) = mpsc::channel::<()>();
        fastexec::spawn(async move {
            let _ = ran_tx.send(());
        })
        .detach();
        // A long poll: the child can only run on the other worker.
        let ran = ran_rx.recv_timeout(patience).is_ok();
        result_tx.send(ran).unwrap();
    })
    .detach();
    started_rx.recv_timeout(TIMEOUT).expect("task started");
    // Wait (bounded) until the other worker has parked: only the task's
    // worker is unparked.
    let deadline = Instant::now() + TIMEOUT;
    while unparked(ex) != 1 {
        assert!(Instant::now() < deadline, "the idle worker never parked");
        thread::yield_now();
    }
    go_tx.send(()).unwrap();
    result_rx.recv_timeout(TIMEOUT).expect("task reported")
}

/// Control: without the nested `block_on`, the idle worker (the watcher)
/// takes the lone child within about a watch interval.
#[test]
fn the_child_of_a_long_poll_is_taken_by_the_idle_worker() {
    with_timeout(|| {
        let ex = Arc::new(executor(2));
        for _ in 0..5 {
            assert!(round(&ex, false, Duration::from_secs(2)));
        }
    });
}

/// The same after a nested `block_on` that returned.
#[test]
fn the_child_of_a_long_poll_after_a_nested_block_on_is_taken_by_the_idle_worker() {
    with_timeout(|| {
        let ex = Arc::new(executor(2));
        for attempt in 0..5 {
            assert!(
                round(&ex, true, Duration::from_secs(2)),
                "attempt {attempt}: the child of a task that ran a nested block_on \
                 was not run by the idle worker within 2 s (executor: {:?})",
                ex
            );
        }
    });
}
