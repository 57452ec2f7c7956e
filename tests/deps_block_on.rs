//! A dependent that has not started yet counts in the task groups of the
//! code that called `spawn_after`, so `block_on` and `TaskGroup::wait`
//! wait for it.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fastexec::{spawn_after, TaskGroup};
use support::{executor, with_timeout};

/// The dependency lives outside the group (spawned from a plain thread), so
/// nothing but the pending dependent itself keeps the group's count up once
/// the member that called `spawn_after` has returned; the gate opens only
/// after that.
#[test]
fn group_wait_waits_for_a_dependent_that_has_not_started() {
    let (counted, ran) = with_timeout(|| {
        let ex = executor(2);
        let (sender, receiver) = futures::channel::oneshot::channel::<u32>();
        let gate = ex.spawn_completion(async move { receiver.await.unwrap() });
        let ran = Arc::new(AtomicBool::new(false));
        let group = Arc::new(TaskGroup::new());
        let (flag, members) = (ran.clone(), group.clone());
        // Spawned from this plain thread (onto the global executor): inside
        // a block_on the dependent would count in its group too, and the
        // block_on would wait for it.
        let spawner = group.spawn(async move {
            // Dropped at once: the dependent runs on regardless.
            drop(spawn_after(gate, move |_| async move {
                flag.store(true, Ordering::SeqCst)
            }));
            // This member and the dependent, which cannot have started.
            members.active()
        });
        let opener = std::thread::spawn(move || {
            let counted = fastexec::block_on(spawner).unwrap();
            sender.send(1).unwrap();
            counted
        });
        ex.block_on(group.wait());
        let ran = ran.load(Ordering::SeqCst);
        let counted = opener.join().unwrap();
        assert_eq!(group.active(), 0);
        (counted, ran)
    });
    assert_eq!(
        counted, 2,
        "the pending dependent is not counted in the group"
    );
    assert!(ran, "group.wait returned before the pending dependent ran");
}

/// `block_on`'s root returns while the dependent waits for a dependency
/// outside it; `block_on` must still wait for the dependent to run.
#[test]
fn block_on_waits_for_a_dependent_that_has_not_started() {
    let ran = with_timeout(|| {
        let ex = executor(2);
        let (sender, receiver) = futures::channel::oneshot::channel::<u32>();
        let gate = ex.spawn_completion(async move { receiver.await.unwrap() });
        let (root_done, root_done_rx) = std::sync::mpsc::channel::<()>();
        // Opens the gate once the root future has returned.
        let opener = std::thread::spawn(move || {
            root_done_rx.recv().unwrap();
            sender.send(7).unwrap();
        });
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        ex.block_on(async move {
            drop(spawn_after(gate, move |_| async move {
                flag.store(true, Ordering::SeqCst)
            }));
            root_done.send(()).unwrap();
        });
        let ran = ran.load(Ordering::SeqCst);
        opener.join().unwrap();
        ran
    });
    assert!(ran, "block_on returned before the pending dependent ran");
}
