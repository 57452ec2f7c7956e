//! One worker whose ring stays nearly full of partners handing a turn to
//! each other: each poll wakes the partner, which goes into the LIFO slot,
//! and parks; every few hand-overs the slot's task goes back to the ring,
//! into the slot a pop freed. The ring never overflows again and never runs
//! empty, and once more than three quarters of a ring of them have started
//! it has less room than an overflow batch: the tasks still in the overflow
//! queue (and outside work, which waits behind them) must still get their
//! turn, as with a ring full of tasks that wake themselves
//! (`scheduling_full_ring_turns.rs`). For a while 448 of 612 started, and
//! the rest waited until the partners gave up (a cap on their rounds keeps
//! a failure finite; `support/full_ring.rs`).

mod support;

use support::full_ring::{outside_tasks_start, overflowed_tasks_start, Round, ROUND_CAP};

#[test]
fn overflowed_tasks_start_while_partners_keep_the_ring_nearly_full() {
    assert!(
        overflowed_tasks_start(Round::PassBaton),
        "tasks in the overflow queue waited for {ROUND_CAP} rounds"
    );
}

#[test]
fn outside_tasks_start_while_partners_keep_the_ring_full() {
    assert!(
        outside_tasks_start(Round::PassBaton),
        "a task from outside waited for {ROUND_CAP} rounds"
    );
}
