//! Under the simple scheduler, an executor's drop skips its wait for the
//! futures of parked tasks (step 4 of the shutdown sequence, `executor.rs`)
//! only when it runs in one of that executor's own tasks. A task of
//! ANOTHER simple executor, run by that other executor's `block_on` inside
//! the root of the dropped executor's own `block_on`, is not one: the drop
//! must still wait, here for a parked task whose wake from another thread
//! was under way as the registry closed (its future is being dropped on the
//! waking thread).
//!
//! Setup: executor B's worker runs task X2, which waits in a nested
//! `block_on` and so lends ownership to a blocking job's `block_on` of B
//! (thread T). T's root calls `A.block_on`, whose task drops B. The join of
//! B's worker lasts until thread V's wake of B's parked task X has begun
//! dropping X's future on V (X2's destructor waits for it); X's destructor
//! then waits (at most 2 s) for the drop to have returned. A drop that
//! waits returns after X's future is gone; one that does not returns
//! first.

mod support;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use fastexec::Executor;
use support::{spin_until, within, Gate, TIMEOUT};

/// Sets `dropping` when its drop starts, then waits (bounded) for a word
/// from the dropping thread, then sets `finished`.
struct SlowDrop {
    dropping: Arc<AtomicBool>,
    returned: mpsc::Receiver<()>,
    finished: Arc<AtomicBool>,
}

impl Drop for SlowDrop {
    fn drop(&mut self) {
        self.dropping.store(true, SeqCst);
        // Only a bound: a drop that waits for this future never sends.
        let _ = self.returned.recv_timeout(Duration::from_secs(2));
        self.finished.store(true, SeqCst);
    }
}

/// Sets `started`, then waits for `until` (bounded).
struct SpinDrop {
    started: Arc<AtomicBool>,
    until: Arc<AtomicBool>,
}

impl Drop for SpinDrop {
    fn drop(&mut self) {
        self.started.store(true, SeqCst);
        assert!(spin_until(|| self.until.load(SeqCst)));
    }
}

/// Whether X's future was gone when B's drop returned; `via_other` drops B
/// from a task of another simple executor rather than from B's root.
fn x_gone_when_the_drop_returned(via_other: bool) -> bool {
    // X2's block_on ends with the shutdown panic, as it should.
    support::quiet_panics("fastexec: the executor shut down");
    let b = support::simple_executor(5);
    let other = Arc::new(support::simple_executor(6));
    let (x_dropping, x_finished, x2_dropping) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (returned_tx, returned_rx) = mpsc::channel();
    // X: parked for good, its waker kept for V.
    let slot_waker = Arc::new(Mutex::new(None::<Waker>));
    let (parked_tx, parked) = mpsc::channel();
    let slow = SlowDrop {
        dropping: x_dropping.clone(),
        returned: returned_rx,
        finished: x_finished.clone(),
    };
    let keep = slot_waker.clone();
    b.spawn(async move {
        let _slow = slow;
        std::future::poll_fn(|cx| {
            *keep.lock().unwrap() = Some(cx.waker().clone());
            let _ = parked_tx.send(());
            Poll::<()>::Pending
        })
        .await;
    })
    .detach();
    parked.recv_timeout(TIMEOUT).expect("X parked");
    // X2: waits in a nested block_on on B's worker, lending ownership.
    let spin = SpinDrop {
        started: x2_dropping.clone(),
        until: x_dropping.clone(),
    };
    let (nested_tx, nested) = mpsc::channel();
    b.spawn(async move {
        let _spin = spin;
        fastexec::block_on(async move {
            nested_tx.send(()).unwrap();
            std::future::pending::<()>().await;
        });
    })
    .detach();
    nested.recv_timeout(TIMEOUT).expect("X2's block_on started");
    // V: wakes X once the shutdown has reached X2 (state marked shut down).
    let v = std::thread::spawn(move || {
        assert!(spin_until(|| x2_dropping.load(SeqCst)));
        let waker = slot_waker.lock().unwrap().take().expect("X's waker");
        waker.wake();
    });
    let slot = Arc::new(Mutex::new(None::<Executor>));
    let placed = Gate::new();
    let (in_job, go) = (slot.clone(), placed.clone());
    let finished = x_finished.clone();
    let drop_b = move || {
        drop(in_job.lock().unwrap().take().expect("placed"));
        let gone = finished.load(SeqCst);
        let _ = returned_tx.send(());
        gone
    };
    let in_other = other.clone();
    let job = b.spawn_blocking(move || {
        fastexec::block_on(async move {
            go.wait().await;
            if via_other {
                in_other.block_on(async move { fastexec::spawn(async move { drop_b() }).await })
            } else {
                Ok(drop_b())
            }
        })
    });
    *slot.lock().unwrap() = Some(b);
    placed.open();
    let gone = futures::executor::block_on(job)
        .expect("the job returned")
        .expect("the dropping task returned");
    v.join().expect("V woke X");
    gone
}

#[test]
fn control_a_drop_from_the_executors_own_block_on_root_waits() {
    within(60, || assert!(x_gone_when_the_drop_returned(false)));
}

#[test]
fn a_drop_from_another_simple_executors_task_waits_too() {
    within(60, || {
        assert!(
            x_gone_when_the_drop_returned(true),
            "the drop returned while a parked task's future was still alive"
        );
    });
}

/// The other side: a task of the other executor that runs inside one of
/// B's own tasks (B's task calls the other's `block_on`) is still inside
/// that task, whose future is alive and registered: B's drop from there
/// must not wait for it, as from B's task itself.
#[test]
fn a_drop_from_another_executors_task_inside_the_executors_own_task_returns() {
    within(60, || {
        let b = support::simple_executor(7);
        let other = Arc::new(support::simple_executor(8));
        let slot = Arc::new(Mutex::new(None::<Executor>));
        let placed = Gate::new();
        let (in_job, go) = (slot.clone(), placed.clone());
        let (done, dropped) = mpsc::channel();
        let job = b.spawn_blocking(move || {
            fastexec::block_on(async move {
                fastexec::spawn(async move {
                    // Registered at its first `Pending` (a yield's).
                    fastexec::yield_now().await;
                    go.wait().await;
                    other.block_on(async move {
                        fastexec::spawn(async move {
                            drop(in_job.lock().unwrap().take().expect("placed"));
                            done.send(()).unwrap();
                        })
                        .await
                        .expect("the other executor's task returned");
                    });
                })
                .detach();
            });
        });
        *slot.lock().unwrap() = Some(b);
        placed.open();
        dropped
            .recv_timeout(TIMEOUT)
            .expect("the drop from inside B's own task returned");
        futures::executor::block_on(job).expect("the job finished");
    });
}
