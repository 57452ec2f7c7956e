//! A worker that held the timer role while it slept in a nested `block_on`,
//! and was woken for that `block_on`'s future, hands the role on: the timers
//! still fire while the task that called `block_on` keeps the worker busy
//! and every other worker sleeps.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use fastexec::time::sleep;

mod support;
use support::{spin_until, with_timeout, Gate};

/// A waker that records that it was woken.
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
/// How long the busy task waits for the timer before counting it as lost:
/// twenty times the timer's duration.
const PATIENCE: Duration = Duration::from_secs(1);

/// One round; returns how long after its deadline the timer fired, or
/// `None` if it had not fired within [`PATIENCE`].
fn one_round() -> Option<Duration> {
    let executor = support::executor(2);
    // A task that holds one worker until the test lets it go, so that the
    // other worker parks (in `block_on`) while a worker is awake: it takes
    // the timer role.
    let (held_tx, held_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = executor.spawn(async move {
        held_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    held_rx.recv().unwrap();

    let fired = Arc::new(Flag::default());
    let (registered_tx, registered_rx) = mpsc::channel::<Instant>();
    let gate = Gate::new();
    let busy = {
        let fired = fired.clone();
        let gate = gate.clone();
        executor.spawn(async move {
            // Its timer's waker only sets `fired`, so that nothing but the
            // executor's timer driving can set it.
            let mut sleep = sleep(TIMER);
            fastexec::block_on(async {
                let waker = Waker::from(fired.clone());
                std::future::poll_fn(|_| {
                    let mut cx = Context::from_waker(&waker);
                    assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
                    Poll::Ready(())
                })
                .await;
                registered_tx.send(sleep.deadline()).unwrap();
                // The worker parks here, holding the timer role.
                gate.wait().await;
            });
            // A long poll: this worker fires no timers until it returns.
            let start = Instant::now();
            while !fired.is_set() && start.elapsed() < PATIENCE {
                std::hint::spin_loop();
            }
            fired.is_set().then(Instant::now)
        })
    };
    let deadline = registered_rx.recv().unwrap();
    // Let the other worker go to sleep: it finds the role taken and sleeps
    // with no timeout. Its park, and the role holder's re-park that follows
    // (no worker is left awake to watch), are counted.
    release_tx.send(()).unwrap();
    futures::executor::block_on(holder).unwrap();
    let parks = executor.metrics().parks;
    spin_until(|| executor.metrics().parks >= parks + 2);
    // Wake the role holder for its `block_on`: it gives the role back and
    // goes back to the busy task.
    gate.open();
    futures::executor::block_on(busy)
        .unwrap()
        .map(|at| at.saturating_duration_since(deadline))
}

#[test]
fn timers_fire_while_the_worker_woken_from_a_nested_block_on_stays_busy() {
    with_timeout(|| {
        // The interleaving that strands the role is likely, not certain:
        // several rounds make a regression show.
        for round in 0..3 {
            let late = one_round();
            assert!(
                late.is_some(),
                "round {round}: a {TIMER:?} timer had not fired after {PATIENCE:?}"
            );
        }
    });
}
