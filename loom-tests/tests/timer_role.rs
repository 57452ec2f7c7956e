//! Loom model of the timer-role hand-off (`Shared::try_take_timer_role` and
//! `Shared::on_earlier_deadline`, reduced to their protocol): a worker
//! taking the role and a thread inserting an earlier deadline never miss
//! each other. Either the worker reads the new deadline after taking the
//! role, or the inserter sees the holder and unparks it to re-arm; a holder
//! that sleeps through the insert is a deadlock, which loom reports.
//!
//! A second model adds the worker's way to sleep (`Worker::park`): it leaves
//! the unparked count, then takes the role only if a deadline is pending,
//! while an inserter that finds no holder wakes a parked worker through the
//! idle protocol. Without the fence before that check for a deadline, loom
//! finds the worker asleep with no timeout and the deadline unseen.
#![cfg(loom)]

use fastexec::__loom::{Idle, Parker, Unparker};
use loom::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering::*};
use loom::sync::Arc;
use loom::thread;

const NO_HOLDER: usize = usize::MAX;
const NO_DEADLINE: u64 = u64::MAX;

struct Timers {
    holder: AtomicUsize,
    /// The earliest deadline, published Relaxed as the real queue does.
    earliest: AtomicU64,
}

/// `try_take_timer_role` followed by the read of the deadline to park with.
fn take_role_and_read(timers: &Timers, index: usize) -> Option<u64> {
    let taken = timers
        .holder
        .compare_exchange(NO_HOLDER, index, SeqCst, SeqCst)
        .is_ok();
    fence(SeqCst);
    assert!(taken, "one worker in this model");
    match timers.earliest.load(Relaxed) {
        NO_DEADLINE => None,
        deadline => Some(deadline),
    }
}

/// An insert that moved the earliest deadline, then `on_earlier_deadline`.
fn insert_earlier(timers: &Timers, deadline: u64, holder_unparker: &Unparker) {
    timers.earliest.store(deadline, Relaxed);
    fence(SeqCst);
    if timers.holder.load(SeqCst) != NO_HOLDER {
        holder_unparker.unpark();
    }
}

#[test]
fn earlier_deadline_reaches_the_holder() {
    loom::model(|| {
        let timers = Arc::new(Timers {
            holder: AtomicUsize::new(NO_HOLDER),
            earliest: AtomicU64::new(NO_DEADLINE),
        });
        let parker = Parker::new();
        let unparker = parker.unparker();
        let inserter = {
            let timers = timers.clone();
            thread::spawn(move || insert_earlier(&timers, 7, &unparker))
        };
        // The worker: with no deadline known it parks without a timeout (a
        // deadline would be a timed park, which loom does not model, so the
        // worker is done as soon as it knows the deadline).
        let mut armed = take_role_and_read(&timers, 0);
        while armed.is_none() {
            parker.park();
            armed = match timers.earliest.load(Relaxed) {
                NO_DEADLINE => None,
                deadline => Some(deadline),
            };
        }
        assert_eq!(armed, Some(7));
        inserter.join().unwrap();
    });
}

/// `Shared::try_take_timer_role` as a worker calls it in `Worker::park`,
/// right after leaving the unparked count: it takes the role only if a
/// deadline is pending. Returns the deadline to park with, if any.
fn try_take_role(timers: &Timers, index: usize) -> Option<u64> {
    // SeqCst: as in `try_take_timer_role`; the fence orders the caller's
    // `transition_to_parked` before the read of the deadline.
    fence(SeqCst);
    if timers.earliest.load(Relaxed) == NO_DEADLINE {
        return None;
    }
    take_role_and_read(timers, index)
}

/// `on_earlier_deadline` when no one holds the role: the inserter wakes a
/// parked worker through the idle protocol.
fn insert_earlier_with_idle(timers: &Timers, deadline: u64, idle: &Idle, unparker: &Unparker) {
    timers.earliest.store(deadline, Relaxed);
    fence(SeqCst);
    let wake = match timers.holder.load(SeqCst) {
        NO_HOLDER => idle.worker_to_notify().is_some(),
        _ => true,
    };
    if wake {
        unparker.unpark();
    }
}

/// A worker that parks while a deadline is inserted: either its check
/// for a deadline sees the insert (and it parks as the role holder) or the
/// inserter sees it parked and wakes it. A worker that parked unbounded
/// with a deadline pending and no one to fire it is a deadlock.
#[test]
fn a_worker_parking_as_a_deadline_arrives_is_not_missed() {
    loom::model(|| {
        let timers = Arc::new(Timers {
            holder: AtomicUsize::new(NO_HOLDER),
            earliest: AtomicU64::new(NO_DEADLINE),
        });
        let idle = Arc::new(Idle::new(1));
        let parker = Parker::new();
        let inserter = {
            let (timers, idle, unparker) = (timers.clone(), idle.clone(), parker.unparker());
            thread::spawn(move || insert_earlier_with_idle(&timers, 7, &idle, &unparker))
        };
        // The worker found no task; it leaves the unparked count, then
        // looks for a deadline before it sleeps.
        let mut searching = false;
        loop {
            idle.transition_to_parked(0, searching);
            if let Some(deadline) = try_take_role(&timers, 0) {
                // A timed park, which loom does not model: armed.
                assert_eq!(deadline, 7);
                break;
            }
            parker.park();
            searching = idle.transition_from_parked(0);
        }
        inserter.join().unwrap();
    });
}
