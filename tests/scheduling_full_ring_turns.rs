//! One worker whose ring is completely full of self-waking tasks: each
//! yield requeues its task into the slot its own pop freed, so the ring
//! never overflows again and never runs empty. Tasks waiting in the
//! overflow queue, and tasks posted from outside, must still get their
//! turn at a global tick. For a while they waited until the ring drained:
//! here, until the yielders gave up (a cap on the total of yields keeps a
//! failure finite; `support/full_ring.rs`).

mod support;

use support::full_ring::{outside_tasks_start, overflowed_tasks_start, Round, ROUND_CAP};

#[test]
fn overflowed_tasks_start_while_the_ring_stays_full() {
    assert!(
        overflowed_tasks_start(Round::Yield),
        "tasks in the overflow queue waited for {ROUND_CAP} yields"
    );
}

#[test]
fn outside_tasks_start_while_the_ring_stays_full() {
    assert!(
        outside_tasks_start(Round::Yield),
        "a task from outside waited for {ROUND_CAP} yields"
    );
}
