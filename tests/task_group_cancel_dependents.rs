//! `TaskGroup::cancel` reaches a dependent (`spawn_after`) that waits for
//! its dependencies unqueued: its task is dropped unpolled, its completion
//! reports the cancellation, and the group's `wait` returns without waiting
//! for the dependencies (before the fix, a dependency outside the group that
//! had not finished kept a cancelled group's `wait` from returning, for ever
//! if it never finished). A dependent the cancel did not meet runs as usual.

// The members hand their dependents' completions out, unawaited, on purpose.
#![allow(clippy::async_yields_async)]

mod support;

use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use fastexec::cancel::CancellationToken;
use fastexec::{Completion, TaskGroup};
use support::{counter, get, with_timeout, DropCounter};

/// A task outside any group that finishes once `open` is cancelled.
fn dependency(open: &CancellationToken) -> Completion<()> {
    let open = open.clone();
    fastexec::spawn_completion(async move { open.cancelled().await })
}

/// Cancelled while the dependent waits: it is dropped unpolled at the
/// cancel, and never runs when its dependency finishes later.
#[test]
fn a_cancelled_group_drops_a_dependent_still_waiting_for_its_dependency() {
    with_timeout(|| {
        let open = CancellationToken::new();
        let dependency = dependency(&open);
        let group = TaskGroup::new();
        let (ran, drops) = (counter(), DropCounter::new());
        let (r, guard, d) = (ran.clone(), drops.guard(), dependency.clone());
        // Outside any task: on the global executor, the handle awaited
        // outside the group.
        let member = group.spawn(async move {
            fastexec::spawn_after(d, move |_| async move {
                let _guard = guard;
                r.fetch_add(1, SeqCst);
            })
        });
        let dependent = fastexec::block_on(member).unwrap();
        group.cancel();
        fastexec::block_on(group.wait());
        assert_eq!(drops.count(), 1, "its task was dropped");
        let err = fastexec::block_on(dependent).unwrap_err();
        assert!(err.is_cancelled(), "{err}");
        open.cancel();
        fastexec::block_on(dependency).unwrap();
        assert_eq!(get(&ran), 0, "the dependent never ran");
    })
}

/// A member spawns a dependent after cancelling its own group: the
/// dependent ends at once, as any task spawned into a cancelled group.
#[test]
fn a_dependent_spawned_into_a_cancelled_group_ends_at_once() {
    with_timeout(|| {
        let open = CancellationToken::new();
        let dependency = dependency(&open);
        let group = Arc::new(TaskGroup::new());
        let ran = counter();
        let (r, g, d) = (ran.clone(), group.clone(), dependency.clone());
        let member = group.spawn(async move {
            g.cancel();
            fastexec::spawn_after(d, move |_| async move {
                r.fetch_add(1, SeqCst);
            })
        });
        // The member ran to the end of the poll that cancelled.
        let dependent = fastexec::block_on(member).unwrap();
        fastexec::block_on(group.wait());
        assert!(fastexec::block_on(dependent).unwrap_err().is_cancelled());
        open.cancel();
        fastexec::block_on(dependency).unwrap();
        assert_eq!(get(&ran), 0, "the dependent never ran");
    })
}

/// Without a cancel, a dependent in a group runs once its dependency
/// finishes, and the group waits for it.
#[test]
fn a_dependent_in_a_group_not_cancelled_runs() {
    with_timeout(|| {
        let open = CancellationToken::new();
        let dependency = dependency(&open);
        let group = TaskGroup::new();
        let d = dependency.clone();
        let member = group.spawn(async move { fastexec::spawn_after(d, |_| async { 7 }) });
        let dependent = fastexec::block_on(member).unwrap();
        // (The member may still be counted for a moment: its worker lets
        // go of it after storing its output.)
        assert!(group.active() >= 1, "the waiting dependent counts");
        open.cancel();
        fastexec::block_on(group.wait());
        assert_eq!(*fastexec::block_on(dependent).unwrap(), 7);
    })
}
