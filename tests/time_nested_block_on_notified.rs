//! A worker parked in a nested `block_on` (no timer pending, so no timer
//! role) is the one `notify_one` picks when a timer is registered, and is
//! counted as searching. If the `block_on`'s root is woken too before that
//! worker looks at it, `run_on_worker` polls the root (ready) and returns
//! to the task that called `block_on`, which then keeps the worker for a
//! long poll. The search must end before that poll: a worker counted as
//! searching through it kept every later `notify_one` quiet (a searcher
//! "will find it"), so the other worker slept with no timeout and the
//! timer fired only when the long poll ended, although a worker was idle
//! the whole time. (`block_on_nested_search.rs` covers the same end of a
//! search begun in `next_task`.)

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use fastexec::time::sleep;

mod support;
use support::{spin_until, with_timeout};

#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Flag {
    fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

const TIMER: Duration = Duration::from_millis(50);
const PATIENCE: Duration = Duration::from_millis(500);

/// The nested `block_on`'s root: pending until `open`, counting its polls.
#[derive(Default)]
struct Root {
    polls: AtomicUsize,
    open: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Root {
    fn wake(&self) {
        if let Some(waker) = self.waker.lock().unwrap().take() {
            waker.wake();
        }
    }

    async fn wait(self: Arc<Self>) {
        std::future::poll_fn(|cx| {
            self.polls.fetch_add(1, Ordering::SeqCst);
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            if self.open.load(Ordering::SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

fn all_parked(executor: &fastexec::Executor) -> bool {
    format!("{executor:?}").contains("unparked: 0,")
}

/// One round; how late the timer fired, or `None` if not within PATIENCE.
fn one_round() -> Option<Duration> {
    let executor = support::executor(2);
    // Hold one worker (X) so that the other (W) parks in `block_on`.
    let (held_tx, held_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = executor.spawn(async move {
        held_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    held_rx.recv().unwrap();

    let fired = Arc::new(Flag::default());
    let root = Arc::new(Root::default());
    let busy = {
        let fired = fired.clone();
        let root = root.clone();
        executor.spawn(async move {
            // No timer is pending: W parks here without the timer role.
            fastexec::block_on(root.wait());
            // A long poll on W; X is idle.
            let start = Instant::now();
            while !fired.is_set() && start.elapsed() < PATIENCE {
                std::hint::spin_loop();
            }
            fired.is_set().then(Instant::now)
        })
    };
    assert!(spin_until(|| root.polls.load(Ordering::SeqCst) >= 1));
    // X parks, with no timeout (W is parked, or it is the watcher).
    release_tx.send(()).unwrap();
    futures::executor::block_on(holder).unwrap();
    assert!(spin_until(|| all_parked(&executor)));
    // A spurious wake of the root: W polls it (still pending) and parks
    // again, last, with no watch (X is parked) and no timer role.
    root.wake();
    assert!(spin_until(|| root.polls.load(Ordering::SeqCst) >= 2));
    assert!(spin_until(|| all_parked(&executor)));

    // Register a timer in the executor's queue from this (outside) thread:
    // no holder, so the insert notifies, picking W, the last parked worker,
    // and counting it as searching.
    let mut timer = sleep(TIMER);
    let deadline = timer.deadline();
    let waker = Waker::from(fired.clone());
    executor.block_on(std::future::poll_fn(|_| {
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut timer).poll(&mut cx).is_pending());
        // At once, before W has woken: let the root complete, which ends
        // the nested `block_on`.
        root.open.store(true, Ordering::SeqCst);
        root.wake();
        Poll::Ready(())
    }));
    let result = futures::executor::block_on(busy)
        .unwrap()
        .map(|at| at.saturating_duration_since(deadline));
    drop(timer);
    result
}

#[test]
fn timers_fire_while_a_notified_nested_block_on_worker_stays_busy() {
    with_timeout(|| {
        // W must be the worker the insert's notify picks, and must see its
        // root woken when it wakes: likely, not certain. Up to 40 rounds,
        // stopping at the first lost timer (a passing round takes ~50 ms).
        let rounds = 40;
        for round in 0..rounds {
            assert!(
                one_round().is_some(),
                "round {round}: a {TIMER:?} timer had not fired after {PATIENCE:?} \
                 although one worker was idle the whole time"
            );
        }
    });
}
