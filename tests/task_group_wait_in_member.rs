//! `TaskGroup::wait` awaited by one of the group's own members (or their
//! descendants) can never resolve: the waiter counts itself. Before the fix
//! it hung silently; now it panics at once, naming the mistake, and the
//! member's handle reports that panic.

mod support;

use std::sync::Arc;

use fastexec::TaskGroup;
use support::{executor, with_timeout};

#[test]
fn waiting_for_ones_own_group_panics_instead_of_hanging() {
    with_timeout(|| {
        let ex = executor(2);
        let group = Arc::new(TaskGroup::new());
        let inner = group.clone();
        let err = ex
            .block_on(async { group.spawn(async move { inner.wait().await }).await })
            .unwrap_err();
        assert!(err.is_panic());
        assert!(err.to_string().contains("one of its own members"), "{err}");
        ex.block_on(group.wait());
        assert!(group.is_empty());
    })
}

#[test]
fn a_descendant_waiting_for_the_group_panics_too() {
    with_timeout(|| {
        let ex = executor(1);
        let group = Arc::new(TaskGroup::new());
        let inner = group.clone();
        let err = ex
            .block_on(async {
                group
                    .spawn(async move { fastexec::spawn(async move { inner.wait().await }).await })
                    .await
            })
            .unwrap()
            .unwrap_err();
        assert!(err.is_panic(), "{err}");
    })
}

#[test]
fn waiting_from_outside_the_group_still_works() {
    with_timeout(|| {
        let ex = executor(2);
        let group = Arc::new(TaskGroup::new());
        let other = TaskGroup::new();
        let waited = group.clone();
        // A member of another group may wait for this one.
        ex.block_on(async {
            group.spawn(async {}).detach();
            other.spawn(async move { waited.wait().await }).await
        })
        .unwrap();
        ex.block_on(group.wait());
    })
}
