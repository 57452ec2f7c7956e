//! Loom models of the task-group counter, and of a `block_on` scope counted
//! by the references to its membership: `wait` resolves neither early
//! (while a member is alive, or before its effects are visible) nor never.
#![cfg(loom)]

use fastexec::__loom::{GroupCounter, Scope};
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

/// A `block_on` scope: two members finish on their own threads while the
/// owner lets go of the membership and waits. The wait ends only after both
/// members' drops, and sees their work.
#[test]
fn scope_wait_sees_every_member_finish() {
    loom::model(|| {
        let mut scope = Scope::new();
        let work = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let members: Vec<_> = (0..2)
            .map(|i| {
                // Spawned by the owner, so counted before it lets go.
                let (member, work) = (scope.spawn(), work.clone());
                thread::spawn(move || {
                    // Relaxed on purpose: only the membership's reference
                    // count and the group may make this visible.
                    work[i].store(1, Relaxed);
                    drop(member);
                })
            })
            .collect();
        scope.let_go();
        loom::future::block_on(scope.wait());
        assert_eq!(scope.active(), 0);
        assert_eq!(work[0].load(Relaxed) + work[1].load(Relaxed), 2);
        for member in members {
            member.join().unwrap();
        }
    });
}

/// A member spawns a child and finishes before it: the child holds the
/// membership from before the parent's drop, so the scope cannot empty in
/// between, and the wait sees the child's work.
#[test]
fn scope_child_counted_before_parent_leaves() {
    loom::model(|| {
        let mut scope = Scope::new();
        let child_done = Arc::new(AtomicUsize::new(0));
        let parent = {
            let (member, child_done) = (scope.spawn(), child_done.clone());
            thread::spawn(move || {
                let child = member.spawn();
                let child = thread::spawn(move || {
                    child_done.store(1, Relaxed);
                    drop(child);
                });
                drop(member); // the parent finishes first
                child
            })
        };
        scope.let_go();
        loom::future::block_on(scope.wait());
        assert_eq!(
            child_done.load(Relaxed),
            1,
            "wait returned before the child"
        );
        parent.join().unwrap().join().unwrap();
    });
}
