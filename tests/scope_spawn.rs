//! `Scope`: tasks spawned through a captured scope join the groups of the
//! code that captured it, not those of the thread that spawns.

mod support;

use fastexec::{Scope, TaskGroup};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use support::{within, Gate};

#[test]
fn a_task_spawned_through_the_scope_survives_the_spawners_group_cancel() {
    within(30, || {
        fastexec::block_on(async {
            let scope = Scope::current();
            let (started, release) = (Gate::new(), Gate::new());
            let (tx, rx) = futures::channel::oneshot::channel();
            let group = TaskGroup::new();
            let (s, r) = (started.clone(), release.clone());
            group
                .spawn(async move {
                    scope
                        .spawn(async move {
                            s.open();
                            r.wait().await;
                            tx.send(7).unwrap();
                        })
                        .detach();
                })
                .await
                .unwrap();
            started.wait().await;
            group.cancel();
            group.wait().await;
            release.open();
            // Spawned with `fastexec::spawn`, the task would have been a
            // member of `group`, cancelled with it, its sender dropped.
            assert_eq!(rx.await, Ok(7));
        });
    });
}

#[test]
fn block_on_waits_for_a_task_spawned_through_its_scope_from_a_plain_thread() {
    within(30, || {
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let root_done = Gate::new();
        let done = root_done.clone();
        fastexec::block_on(async move {
            let scope = Scope::current();
            let (spawned_tx, spawned_rx) = futures::channel::oneshot::channel();
            let spawner = std::thread::spawn(move || {
                // Not a worker, in no group: only the scope can count the
                // task in the block_on.
                scope
                    .spawn(async move {
                        done.wait().await;
                        flag.store(true, SeqCst);
                    })
                    .detach();
                spawned_tx.send(()).unwrap();
            });
            spawned_rx.await.unwrap();
            spawner.join().unwrap();
            // The task can only finish after the root future has.
            root_done.open();
        });
        assert!(ran.load(SeqCst), "block_on returned before the task ran");
    });
}

#[test]
fn a_scope_kept_past_its_block_on_does_not_hold_it_open() {
    within(30, || {
        let scope = fastexec::block_on(async { Scope::current() });
        assert!(scope.has_ended());
        // Its groups are gone: the task belongs to none and still runs.
        let handle = scope.spawn(async { 5 });
        assert_eq!(fastexec::block_on(handle).unwrap(), 5);
    });
}

#[test]
fn a_scope_captured_outside_any_group_never_ends() {
    let scope = Scope::current();
    assert!(!scope.has_ended());
    assert_eq!(fastexec::block_on(scope.spawn(async { 3 })).unwrap(), 3);
}
