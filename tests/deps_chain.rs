//! Long chains of `spawn_after`: they run in order, and a failure at the
//! head reaches the tail without recursion.
//!
//! Length: the million links. In a debug build each test takes 2-4 s
//! on the 2-core machine and the pending chain peaks at about 400 MB (~0.4 KB
//! per pending link). A hundred times fewer links would still catch
//! recursion: a test thread has a 2 MiB stack, so a recursive release would
//! need under 21 bytes per link to survive 100,000 links, and no call frame
//! is that small.

mod support;

use std::sync::Arc;

use fastexec::task::Builder;
use fastexec::{spawn_after, spawn_completion, Completion};
use support::within;

const LINKS: u64 = 1_000_000;

/// `LINKS` tasks after `head`, each adding one to its predecessor's output.
fn chain(head: &Completion<u64>) -> Completion<u64> {
    let mut last = head.clone();
    for _ in 0..LINKS {
        last = spawn_after(last, |prev: Arc<u64>| async move { *prev + 1 });
    }
    last
}

#[test]
fn long_chain_runs_every_link_in_order() {
    let end = within(300, || {
        fastexec::block_on(async {
            let head = spawn_completion(async { 0u64 });
            chain(&head).await.unwrap()
        })
    });
    assert_eq!(*end, LINKS);
}

/// Built entirely while its head is pending, so that the failure walks all
/// of it in one release.
#[test]
fn failure_at_the_head_reaches_the_tail_of_a_long_pending_chain() {
    let err = within(300, || {
        let (sender, receiver) = futures::channel::oneshot::channel::<()>();
        let head = Builder::new().name("head").spawn_completion(async move {
            receiver.await.unwrap();
            panic!("head failed");
        });
        let tail = chain(&head);
        drop(head);
        sender.send(()).unwrap();
        fastexec::block_on(tail).unwrap_err()
    });
    let text = err.to_string();
    assert!(text.contains("\"head\" panicked: head failed"), "{text}");
    assert!(err.failed_dependency().is_some());
}
