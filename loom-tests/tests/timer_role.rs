//! Loom model of the timer-role hand-off (`Shared::try_take_timer_role` and
//! `Shared::on_earlier_deadline`, reduced to their protocol): a worker
//! taking the role and a thread inserting an earlier deadline never miss
//! each other. Either the worker reads the new deadline after taking the
//! role, or the inserter sees the holder and unparks it to re-arm; a holder
//! that sleeps through the insert is a deadlock, which loom reports.
#![cfg(loom)]

use fastexec::__loom::Parker;
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
fn insert_earlier(timers: &Timers, deadline: u64, holder_unparker: &fastexec::__loom::Unparker) {
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
