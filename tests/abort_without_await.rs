//! `JoinHandle::abort()` cancels by itself: the task's future is dropped
//! whether or not anyone awaits the handle afterwards ("at once if it is
//! idle, after the current poll if it is running").
//!
//! A hang here is the failure mode, turned into a failed test after 30 s.

mod support;

use std::future::pending;
use std::time::Duration;

use fastexec::{spawn, TaskGroup};
use support::{executor, spawn_parked, with_timeout, DropCounter};

/// Abort a parked task and keep the handle without awaiting it: the future
/// must still be dropped.
#[test]
fn abort_alone_drops_the_future() {
    with_timeout(|| {
        let ex = executor(1);
        let drops = DropCounter::new();
        let mut handle = spawn_parked(&ex, drops.guard());
        handle.abort();
        let dropped = drops.wait_for_within(1, Duration::from_secs(10));
        // Awaiting the handle would complete the cancellation; it is kept
        // alive, unpolled, until after the check.
        drop(handle);
        assert_eq!(dropped, 1, "abort() did not drop the parked task's future");
    })
}

/// An aborted task whose handle the root returns: `block_on` must not wait
/// for it forever.
#[test]
#[allow(clippy::async_yields_async)] // returning the handle is the point
fn block_on_returns_with_an_aborted_handle() {
    with_timeout(|| {
        let ex = executor(1);
        let handle = ex.block_on(async {
            let mut handle = spawn(pending::<()>());
            handle.abort();
            handle
        });
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_cancelled());
    })
}

/// An aborted member stops counting in its group even if its handle is
/// never awaited.
#[test]
fn aborted_member_leaves_group_without_await() {
    with_timeout(|| {
        let ex = executor(2);
        ex.block_on(async {
            let group = TaskGroup::new();
            let mut member = group.spawn(pending::<()>());
            member.abort();
            group.wait().await;
            assert_eq!(group.active(), 0);
            drop(member);
        });
    })
}
