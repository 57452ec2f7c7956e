//! A `Scope` captured inside a member task of an explicit `TaskGroup`
//! holds that task's membership (the group, and the groups around it)
//! weakly. The membership ends when that task, and the tasks spawned from
//! it, have finished, even though the `TaskGroup` lives on with other
//! members and the enclosing `block_on` still runs. A task spawned through
//! the scope after that belongs to no group at all: the group does not
//! count or cancel it, and the enclosing `block_on` does not wait for it.
//! (What `Scope`'s docs say, checked.)

mod support;

use fastexec::{Scope, TaskGroup};
use support::{within, Gate};

#[test]
fn a_scope_captured_in_a_finished_group_member_spawns_in_no_group() {
    within(30, || {
        let (other_started, release_other) = (Gate::new(), Gate::new());
        let (late_started, release_late) = (Gate::new(), Gate::new());
        let (late_tx, late_rx) = futures::channel::oneshot::channel();
        let group = TaskGroup::new();
        let mut late = None;
        fastexec::block_on(async {
            // Another member keeps the group busy throughout.
            let (s, r) = (other_started.clone(), release_other.clone());
            let other = group.spawn(async move {
                s.open();
                r.wait().await;
            });
            other_started.wait().await;
            let scope = group.spawn(async { Scope::current() }).await.unwrap();
            // Its membership goes a moment after the handle is ready (the
            // member counts out of its groups after storing its output).
            while !scope.has_ended() {
                fastexec::yield_now().await;
            }
            assert_eq!(group.active(), 1, "only `other` is left");
            let (s, r) = (late_started.clone(), release_late.clone());
            let spawned = scope.spawn(async move {
                s.open();
                r.wait().await;
                late_tx.send(7).unwrap();
            });
            late = Some(spawned);
            late_started.wait().await;
            assert_eq!(group.active(), 1, "the late task is not a member");
            group.cancel();
            assert!(other.await.unwrap_err().is_cancelled());
            group.wait().await;
        });
        let late = late.unwrap();
        // The block_on returned with the late task still waiting: it did
        // not count in the block_on's scope either; the cancel spared it.
        assert!(!late.is_finished());
        release_late.open();
        assert_eq!(futures::executor::block_on(late_rx), Ok(7));
        futures::executor::block_on(late).unwrap();
    });
}
