//! Loom model of `CancellationToken::cancelled`'s wake-up: a waiter that
//! registers while another thread cancels is woken or sees the flag, never
//! neither (the fenced protocol of `waiters.rs`).
#![cfg(loom)]

use fastexec::cancel::CancellationToken;
use loom::thread;

#[test]
fn a_waiter_racing_a_cancel_is_woken() {
    loom::model(|| {
        let parent = CancellationToken::new();
        let child = parent.child_token();
        let canceller = thread::spawn(move || parent.cancel());
        loom::future::block_on(child.cancelled());
        assert!(child.is_cancelled());
        canceller.join().unwrap();
    });
}
