//! `CancellationToken`: trees, waiting, and cancellation from other threads.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::task::{Context, Waker};

use fastexec::cancel::CancellationToken;

mod support;
use support::{block_on_guarded, CountingWake};

#[test]
fn tokens_and_their_futures_are_send_and_sync() {
    fn assert_traits<T: Send + Sync>() {}
    assert_traits::<CancellationToken>();
    assert_traits::<fastexec::cancel::WaitForCancellation<'static>>();
    assert_traits::<fastexec::cancel::DropGuard>();
}

#[test]
fn clones_share_the_flag() {
    let token = CancellationToken::new();
    let clone = token.clone();
    assert!(!clone.is_cancelled());
    token.cancel();
    assert!(clone.is_cancelled());
}

#[test]
fn cancelling_a_parent_reaches_every_descendant() {
    let root = CancellationToken::new();
    let child = root.child_token();
    let grandchild = child.child_token();
    // The middle token's handles are gone; the grandchild must still be reached.
    drop(child);
    let sibling = root.child_token();
    assert!(!grandchild.is_cancelled());
    root.cancel();
    assert!(grandchild.is_cancelled());
    assert!(sibling.is_cancelled());
}

#[test]
fn cancelling_a_child_leaves_its_parent_and_siblings_alone() {
    let root = CancellationToken::new();
    let child = root.child_token();
    let sibling = root.child_token();
    let grandchild = child.child_token();
    child.cancel();
    assert!(grandchild.is_cancelled());
    assert!(!root.is_cancelled());
    assert!(!sibling.is_cancelled());
}

#[test]
fn children_of_a_cancelled_token_start_cancelled() {
    let root = CancellationToken::new();
    root.cancel();
    let child = root.child_token();
    assert!(child.is_cancelled());
    assert!(child.child_token().is_cancelled());
}

#[test]
fn cancelled_completes_at_once_when_already_cancelled() {
    let token = CancellationToken::new();
    token.cancel();
    let waker = Waker::from(Arc::new(CountingWake::default()));
    let mut cx = Context::from_waker(&waker);
    let mut future = token.cancelled();
    assert!(Pin::new(&mut future).poll(&mut cx).is_ready());
}

#[test]
fn a_pending_wait_is_woken_by_cancel() {
    let token = CancellationToken::new();
    let wake = Arc::new(CountingWake::default());
    let waker = Waker::from(Arc::clone(&wake));
    let mut cx = Context::from_waker(&waker);
    let mut future = token.cancelled();
    assert!(Pin::new(&mut future).poll(&mut cx).is_pending());
    assert_eq!(wake.0.load(Ordering::Relaxed), 0);

    token.cancel();
    assert_eq!(wake.0.load(Ordering::Relaxed), 1);
    assert!(Pin::new(&mut future).poll(&mut cx).is_ready());
}

#[test]
fn cancel_from_another_thread_wakes_waiters_on_many_children() {
    const CHILDREN: usize = 2_000;
    let root = CancellationToken::new();
    let children: Vec<_> = (0..CHILDREN).map(|_| root.child_token()).collect();
    let started = Arc::new(Barrier::new(2));

    let canceller = {
        let root = root.clone();
        let started = Arc::clone(&started);
        std::thread::spawn(move || {
            started.wait();
            root.cancel();
        })
    };
    let woken = block_on_guarded(async move {
        started.wait();
        let waits = children.iter().map(|child| child.cancelled());
        futures::future::join_all(waits).await.len()
    });
    canceller.join().unwrap();
    assert_eq!(woken, CHILDREN);
}

#[test]
fn racing_child_creation_with_cancel_never_leaves_a_live_child() {
    for _ in 0..200 {
        let root = CancellationToken::new();
        let maker = {
            let root = root.clone();
            std::thread::spawn(move || (0..50).map(|_| root.child_token()).collect::<Vec<_>>())
        };
        root.cancel();
        let children = maker.join().unwrap();
        assert!(children.iter().all(CancellationToken::is_cancelled));
    }
}

#[test]
fn a_drop_guard_cancels_unless_disarmed() {
    let token = CancellationToken::new();
    let kept = token.clone().drop_guard().disarm();
    assert!(!token.is_cancelled());
    {
        let _guard = kept.drop_guard();
        assert!(!token.is_cancelled());
    }
    assert!(token.is_cancelled());
}

/// A chain of child tokens in which only the deepest is held: dropping it
/// frees every ancestor. The chain is deeper than a recursive drop (one
/// stack frame per token) fits in a test thread's 2 MiB stack, as is
/// cancelling it (which `cancel` already walks with an explicit stack).
#[test]
fn dropping_the_leaf_of_a_deep_chain_frees_it_without_recursion() {
    const DEPTH: usize = 200_000;
    let root = CancellationToken::new();
    let observer = root.clone();
    let mut leaf = root.child_token();
    drop(root);
    for _ in 0..DEPTH {
        leaf = leaf.child_token();
    }
    let leaf_observer = leaf.clone();
    observer.cancel();
    assert!(leaf_observer.is_cancelled(), "the cancel reached the leaf");
    drop(leaf_observer);
    drop(leaf);

    // The same chain, dropped before any cancel.
    let mut leaf = observer.child_token();
    for _ in 0..DEPTH {
        leaf = leaf.child_token();
    }
    drop(leaf);
    assert!(observer.is_cancelled());
}
