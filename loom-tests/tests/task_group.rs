//! Loom model of the task-group counter: `wait` resolves neither early (while
//! a member is alive, or before its effects are visible) nor never.
#![cfg(loom)]

use fastexec::__loom::GroupCounter;
use loom::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use loom::sync::Arc;
use loom::thread;

#[test]
fn wait_sees_every_member_finish() {
    loom::model(|| {
        let group = GroupCounter::new();
        let work = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        // Both members are counted before they start, as spawn does.
        group.enter();
        group.enter();
        let members: Vec<_> = (0..2)
            .map(|i| {
                let (group, work) = (group.clone(), work.clone());
                thread::spawn(move || {
                    // Relaxed on purpose: only the group's release/acquire
                    // may make this visible to the waiter.
                    work[i].store(1, Relaxed);
                    group.leave();
                })
            })
            .collect();
        loom::future::block_on(group.wait());
        assert_eq!(group.active(), 0);
        assert_eq!(work[0].load(Relaxed) + work[1].load(Relaxed), 2);
        for member in members {
            member.join().unwrap();
        }
    });
}

/// A member that spawns a child before finishing: the child is counted
/// before the parent leaves, so the group cannot hit zero in between.
#[test]
fn child_counted_before_parent_leaves() {
    loom::model(|| {
        let group = GroupCounter::new();
        let child_done = Arc::new(AtomicUsize::new(0));
        group.enter();
        let parent = {
            let (group, child_done) = (group.clone(), child_done.clone());
            thread::spawn(move || {
                group.enter(); // spawn the child
                let child = {
                    let (group, child_done) = (group.clone(), child_done.clone());
                    thread::spawn(move || {
                        child_done.store(1, Relaxed);
                        group.leave();
                    })
                };
                group.leave(); // the parent finishes first
                child
            })
        };
        loom::future::block_on(group.wait());
        assert_eq!(
            child_done.load(Relaxed),
            1,
            "wait returned before the child"
        );
        parent.join().unwrap().join().unwrap();
    });
}
