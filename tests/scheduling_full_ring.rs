//! One worker whose ring stays full (or nearly) of tasks that keep coming
//! back to it without ever overflowing it or running it empty: each
//! requeue lands in a slot a pop just freed. Three ways to get there
//! (`support/full_ring.rs`, [`Round`]):
//!
//! * tasks that wake themselves (`yield_now`);
//! * tasks that spawn a child and await it: the child takes the slot its
//!   parent's pop freed, and its completion requeues the parent into the
//!   slot the child's pop freed;
//! * partners handing a turn to each other: each wake goes into the LIFO
//!   slot, and every few hand-overs the slot's task goes back to the ring.
//!   Once more than three quarters of a ring of them have started, the
//!   ring has less room than an overflow batch.
//!
//! Tasks waiting in the overflow queue, and tasks posted from outside, must
//! still get their turn at a global tick. For a while they waited until
//! the loopers gave up (a cap on their rounds keeps a failure finite): with
//! partners, 448 of 612 started.

mod support;

use support::full_ring::{outside_tasks_start, overflowed_tasks_start, Round, ROUND_CAP};

fn overflowed_start(round: Round) {
    assert!(
        overflowed_tasks_start(round),
        "tasks in the overflow queue waited for {ROUND_CAP} rounds"
    );
}

fn outside_start(round: Round) {
    assert!(
        outside_tasks_start(round),
        "a task from outside waited for {ROUND_CAP} rounds"
    );
}

#[test]
fn overflowed_tasks_start_while_self_waking_tasks_keep_the_ring_full() {
    overflowed_start(Round::Yield);
}

#[test]
fn outside_tasks_start_while_self_waking_tasks_keep_the_ring_full() {
    outside_start(Round::Yield);
}

#[test]
fn overflowed_tasks_start_while_awaited_children_keep_the_ring_full() {
    overflowed_start(Round::AwaitChild);
}

#[test]
fn outside_tasks_start_while_awaited_children_keep_the_ring_full() {
    outside_start(Round::AwaitChild);
}

#[test]
fn overflowed_tasks_start_while_partners_keep_the_ring_nearly_full() {
    overflowed_start(Round::PassBaton);
}

#[test]
fn outside_tasks_start_while_partners_keep_the_ring_full() {
    outside_start(Round::PassBaton);
}
