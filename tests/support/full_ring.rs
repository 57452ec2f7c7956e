//! One worker whose ring stays completely full of tasks that keep coming
//! back to it (`scheduling_full_ring_*.rs`): tasks waiting in the overflow
//! queue, and tasks posted from outside, must still get their turn at a
//! global tick. A cap on the total of rounds keeps a failure finite.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::thread;

use super::{executor, spin_until, with_timeout, TIMEOUT};

/// Rounds of all the looping tasks together after which they give up.
pub const ROUND_CAP: usize = 2_000_000;

/// The worker's ring's size (`queue::CAPACITY`, not public).
pub const RING: usize = 256;

/// What one round of a looping task does to come back to the ring.
#[derive(Debug, Clone, Copy)]
pub enum Round {
    /// Wakes itself (`yield_now`): requeued into the slot its pop freed.
    Yield,
    /// Spawns a child and awaits it: the child takes the slot its parent's
    /// pop freed, and the child's completion requeues the parent into the
    /// slot the child's pop freed.
    AwaitChild,
}

impl Round {
    async fn run(self) {
        match self {
            Round::Yield => fastexec::yield_now().await,
            Round::AwaitChild => fastexec::spawn(async {}).await.unwrap(),
        }
    }
}

/// Spawns `loopers` tasks from a task of `ex`'s one worker (into its ring,
/// the rest overflowing); each counts itself in `started`, then does
/// `round` until `all` have started or the rounds reach [`ROUND_CAP`], and
/// sends whether `all` had started. Returns the receiver of those answers.
fn spawn_loopers(
    ex: &fastexec::Executor,
    (loopers, all): (usize, usize),
    round: Round,
    (started, rounds): (&Arc<AtomicUsize>, &Arc<AtomicUsize>),
) -> mpsc::Receiver<bool> {
    let (done_tx, done_rx) = mpsc::channel::<bool>();
    let (started, rounds) = (started.clone(), rounds.clone());
    ex.spawn(async move {
        for _ in 0..loopers {
            let (started, rounds, done_tx) = (started.clone(), rounds.clone(), done_tx.clone());
            fastexec::spawn(async move {
                started.fetch_add(1, SeqCst);
                while started.load(SeqCst) < all && rounds.fetch_add(1, SeqCst) < ROUND_CAP {
                    round.run().await;
                }
                let _ = done_tx.send(started.load(SeqCst) == all);
            })
            .detach();
        }
    })
    .detach();
    done_rx
}

/// Whether all of two rings and a hundred tasks doing `round` start (the
/// overflowed ones included) before the rounds reach [`ROUND_CAP`].
pub fn overflowed_tasks_start(round: Round) -> bool {
    let loopers = RING * 2 + 100;
    with_timeout(move || {
        let ex = executor(1);
        let counts = (
            &Arc::new(AtomicUsize::new(0)),
            &Arc::new(AtomicUsize::new(0)),
        );
        let done = spawn_loopers(&ex, (loopers, loopers), round, counts);
        (0..loopers).all(|_| done.recv_timeout(TIMEOUT).unwrap())
    })
}

/// Whether, with exactly a ring of tasks doing `round`, a task injected
/// from another thread and one posted by the outside poster start before
/// the rounds reach [`ROUND_CAP`].
pub fn outside_tasks_start(round: Round) -> bool {
    with_timeout(move || {
        let ex = Arc::new(executor(1));
        let started = Arc::new(AtomicUsize::new(0));
        let rounds = Arc::new(AtomicUsize::new(0));
        // Exactly a ring of them: no overflow. They wait for two starts
        // more than theirs: the outside tasks' below.
        let done = spawn_loopers(&ex, (RING, RING + 2), round, (&started, &rounds));
        assert!(spin_until(|| started.load(SeqCst) == RING));
        let (ok_tx, ok_rx) = mpsc::channel::<bool>();
        let outside_task = |ok_tx: mpsc::Sender<bool>| {
            let (started, rounds) = (started.clone(), rounds.clone());
            async move {
                started.fetch_add(1, SeqCst);
                let _ = ok_tx.send(rounds.load(SeqCst) < ROUND_CAP);
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
    })
}
