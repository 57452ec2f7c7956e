//! One worker whose ring stays completely full of tasks that each spawn a
//! child and await it, in a loop: the child's completion wakes its parent,
//! which goes to the back of the ring (as a task that wakes itself does)
//! into the slot the child's pop freed, and the child into the slot its
//! parent's pop freed. The ring never overflows again and never runs
//! empty. Tasks waiting in the overflow queue, and tasks posted from
//! outside, must still get their turn at a global tick, as with a ring
//! full of tasks that wake themselves (`scheduling_full_ring_turns.rs`).
//! For a while they waited until the awaiters gave up (a cap on their
//! rounds keeps a failure finite; `support/full_ring.rs`).

mod support;

use support::full_ring::{outside_tasks_start, overflowed_tasks_start, Round, ROUND_CAP};

#[test]
fn overflowed_tasks_start_while_awaited_children_keep_the_ring_full() {
    assert!(
        overflowed_tasks_start(Round::AwaitChild),
        "tasks in the overflow queue waited for {ROUND_CAP} rounds"
    );
}

#[test]
fn outside_tasks_start_while_awaited_children_keep_the_ring_full() {
    assert!(
        outside_tasks_start(Round::AwaitChild),
        "a task from outside waited for {ROUND_CAP} rounds"
    );
}
