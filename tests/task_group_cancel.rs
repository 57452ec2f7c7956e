//! `TaskGroup::cancel` ends every member and descendant; a panicking
//! `block_on` root leaves its descendants running.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use fastexec::{Executor, TaskGroup};

/// Counts drops, to prove a future was dropped.
struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn cancel_ends_parked_members_and_their_descendants() {
    let drops = Arc::new(AtomicUsize::new(0));
    let group = TaskGroup::new();
    let (started_tx, started_rx) = mpsc::channel();
    let mut handles = Vec::new();
    for _ in 0..3 {
        let (drops, started) = (drops.clone(), started_tx.clone());
        // From a plain thread, `group.spawn` uses the global executor (a
        // `block_on` here would wait for the members it spawned).
        handles.push(group.spawn(async move {
            let guard = DropCount(drops.clone());
            // A grandchild, parked forever, spawned without the group.
            let grandchild_guard = DropCount(drops);
            fastexec::spawn(async move {
                let _guard = grandchild_guard;
                std::future::pending::<()>().await
            })
            .detach();
            started.send(()).unwrap();
            std::future::pending::<()>().await;
            drop(guard);
        }));
    }
    for _ in 0..3 {
        started_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    }
    assert_eq!(group.active(), 6);
    group.cancel();
    assert!(group.is_cancelled());
    fastexec::block_on(group.wait());
    assert_eq!(group.active(), 0);
    assert_eq!(drops.load(Ordering::SeqCst), 6, "every future dropped");
    for handle in handles {
        assert!(fastexec::block_on(handle).unwrap_err().is_cancelled());
    }
}

#[test]
fn cancel_stops_a_busy_member_at_its_next_poll() {
    let group = TaskGroup::new();
    let polls = Arc::new(AtomicUsize::new(0));
    let counted = polls.clone();
    let handle = group.spawn(async move {
        loop {
            counted.fetch_add(1, Ordering::SeqCst);
            fastexec::yield_now().await;
        }
    });
    group.cancel();
    fastexec::block_on(group.wait());
    let after = polls.load(Ordering::SeqCst);
    assert!(fastexec::block_on(handle).unwrap_err().is_cancelled());
    assert_eq!(polls.load(Ordering::SeqCst), after, "no poll after the end");
}

#[test]
fn spawning_into_a_cancelled_group_ends_at_once() {
    let group = TaskGroup::new();
    group.cancel();
    let ran = Arc::new(AtomicUsize::new(0));
    let flag = ran.clone();
    let handle = group.spawn(async move { flag.fetch_add(1, Ordering::SeqCst) });
    assert!(fastexec::block_on(handle).unwrap_err().is_cancelled());
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[test]
fn a_panicking_block_on_root_leaves_descendants_running() {
    let executor = Executor::builder().threads(2).build().unwrap();
    let (tx, rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        executor.block_on(async move {
            fastexec::spawn(async move {
                // Finishes only after block_on has already panicked.
                release_rx.recv_timeout(Duration::from_secs(30)).unwrap();
                tx.send("descendant finished").unwrap();
            })
            .detach();
            panic!("root failed");
        })
    }));
    assert!(result.is_err(), "the root's panic propagates");
    release_tx.send(()).unwrap();
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(30)).unwrap(),
        "descendant finished"
    );
}
