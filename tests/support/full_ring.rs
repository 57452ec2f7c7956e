//! One worker whose ring stays completely full of tasks that keep coming
//! back to it (`scheduling_full_ring_*.rs`): tasks waiting in the overflow
//! queue, and tasks posted from outside, must still get their turn at a
//! global tick. A cap on the total of rounds keeps a failure finite.

use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Poll, Waker};
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
    /// Waits for its turn, then hands it to its partner (the looper spawned
    /// beside it), whom it wakes: the partner goes into the LIFO slot, and
    /// every few such hand-overs the slot's task goes back to the ring, into
    /// the slot a pop freed.
    PassBaton,
}

/// The turn two partners ([`Round::PassBaton`]) hand to each other.
#[derive(Default)]
struct Baton {
    turn: AtomicUsize,
    wakers: Mutex<[Option<Waker>; 2]>,
}

impl Baton {
    /// Waits until it is `me`'s turn.
    async fn turn(&self, me: usize) {
        poll_fn(|cx| {
            if self.turn.load(SeqCst) == me {
                return Poll::Ready(());
            }
            self.wakers.lock().unwrap()[me] = Some(cx.waker().clone());
            if self.turn.load(SeqCst) == me {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }

    /// Gives the turn to `me`'s partner and wakes it.
    fn pass(&self, me: usize) {
        self.turn.store(1 - me, SeqCst);
        let partner = self.wakers.lock().unwrap()[1 - me].take();
        if let Some(partner) = partner {
            partner.wake();
        }
    }
}

impl Round {
    async fn run(self, (baton, me): (&Baton, usize)) {
        match self {
            Round::Yield => fastexec::yield_now().await,
            Round::AwaitChild => fastexec::spawn(async {}).await.unwrap(),
            Round::PassBaton => {
                baton.turn(me).await;
                baton.pass(me);
            }
        }
    }
}

/// Spawns `loopers` tasks from a task of `ex`'s one worker (into its ring,
/// the rest overflowing), two by two partners; each counts itself in
/// `started`, then does `round` until `all` have started or the rounds reach [`ROUND_CAP`], and
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
        let mut baton = Arc::new(Baton::default());
        for i in 0..loopers {
            if i % 2 == 0 {
                baton = Arc::new(Baton::default());
            }
            let (started, rounds, done_tx) = (started.clone(), rounds.clone(), done_tx.clone());
            let baton = baton.clone();
            fastexec::spawn(async move {
                started.fetch_add(1, SeqCst);
                while started.load(SeqCst) < all && rounds.fetch_add(1, SeqCst) < ROUND_CAP {
                    round.run((&baton, i % 2)).await;
                }
                // A partner waiting for its turn gets it, and stops too.
                baton.pass(i % 2);
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
