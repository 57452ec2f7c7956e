//! One worker whose ring is completely full of self-waking tasks: each
//! yield requeues its task into the slot its own pop freed, so the ring
//! never overflows again and never runs empty. Tasks waiting in the
//! overflow queue, and tasks posted from outside, must still get their
//! turn at a global tick. For a while they waited until the ring drained:
//! here, until the yielders gave up (a cap on the total of yields keeps a
//! failure finite).

mod support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::thread;

use support::{executor, spin_until, with_timeout, TIMEOUT};

const YIELD_CAP: usize = 2_000_000;

/// The worker's ring's size (`queue::CAPACITY`, not public).
const RING: usize = 256;

/// Spawns `yielders` tasks from a task of `ex`'s one worker (into its ring,
/// the rest overflowing); each counts itself in `started`, then yields
/// until `all` have started or the yields reach [`YIELD_CAP`], and sends
/// whether `all` had started. Returns the receiver of those answers.
fn spawn_yielders(
    ex: &fastexec::Executor,
    (yielders, all): (usize, usize),
    started: &Arc<AtomicUsize>,
    yields: &Arc<AtomicUsize>,
) -> mpsc::Receiver<bool> {
    let (done_tx, done_rx) = mpsc::channel::<bool>();
    let (started, yields) = (started.clone(), yields.clone());
    ex.spawn(async move {
        for _ in 0..yielders {
            let (started, yields, done_tx) = (started.clone(), yields.clone(), done_tx.clone());
            fastexec::spawn(async move {
                started.fetch_add(1, SeqCst);
                while started.load(SeqCst) < all && yields.fetch_add(1, SeqCst) < YIELD_CAP {
                    fastexec::yield_now().await;
                }
                let _ = done_tx.send(started.load(SeqCst) == all);
            })
            .detach();
        }
    })
    .detach();
    done_rx
}

#[test]
fn overflowed_tasks_start_while_the_ring_stays_full() {
    let yielders = RING * 2 + 100;
    let all_started = with_timeout(move || {
        let ex = executor(1);
        let started = Arc::new(AtomicUsize::new(0));
        let yields = Arc::new(AtomicUsize::new(0));
        let done = spawn_yielders(&ex, (yielders, yielders), &started, &yields);
        (0..yielders).all(|_| done.recv_timeout(TIMEOUT).unwrap())
    });
    assert!(
        all_started,
        "tasks in the overflow queue waited for {YIELD_CAP} yields"
    );
}

#[test]
fn outside_tasks_start_while_the_ring_stays_full() {
    let in_time = with_timeout(move || {
        let ex = Arc::new(executor(1));
        let started = Arc::new(AtomicUsize::new(0));
        let yields = Arc::new(AtomicUsize::new(0));
        // Exactly a ring of yielders: no overflow. They wait for two starts
        // more than theirs: the outside tasks' below.
        let done = spawn_yielders(&ex, (RING, RING + 2), &started, &yields);
        assert!(spin_until(|| started.load(SeqCst) == RING));
        let (ok_tx, ok_rx) = mpsc::channel::<bool>();
        let outside_task = |ok_tx: mpsc::Sender<bool>| {
            let (started, yields) = (started.clone(), yields.clone());
            async move {
                started.fetch_add(1, SeqCst);
                let _ = ok_tx.send(yields.load(SeqCst) < YIELD_CAP);
            }
        };
        // From another thread than the poster (this one): the injector.
        let injected = outside_task(ok_tx.clone());
        let ex2 = ex.clone();
        thread::spawn(move || ex2.spawn(injected).detach())
            .join()
            .unwrap();
        // From the poster: its ring.
        ex.spawn(outside_task(ok_tx)).detach();
        let in_time = (0..2).all(|_| ok_rx.recv_timeout(TIMEOUT).unwrap());
        for _ in 0..RING {
            done.recv_timeout(TIMEOUT).unwrap();
        }
        in_time
    });
    assert!(in_time, "a task from outside waited for {YIELD_CAP} yields");
}
