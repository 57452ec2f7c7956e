//! A completion's task that panics with a payload (`std::panic::panic_any`)
//! whose own destructor panics. The producer keeps the panic's message in
//! its node; before the fix it dropped the payload before it finished the
//! node, so the destructor's panic left the node unfinished for good: every
//! awaiter of the completion and every dependent waited forever. Now the
//! node is finished first (panicked, as any panicking task's), and the
//! destructor's panic is caught (the panic hook reports it).

mod support;

use std::panic::panic_any;
use std::sync::Arc;

use fastexec::deps::CompletionError;
use fastexec::{spawn_after, spawn_completion};
use support::{executor, within, DropCounter, DropGuard};

/// A panic payload that counts its drop, then panics (unless already
/// unwinding).
struct PanicOnDrop(#[allow(dead_code)] DropGuard);

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("panic in a panic payload's drop");
        }
    }
}

fn is_panicked(error: &CompletionError) -> bool {
    matches!(error, CompletionError::Panicked { .. })
}

#[test]
fn a_completion_panicking_with_such_a_payload_fails_its_awaiters_and_dependents() {
    let drops = DropCounter::new();
    let guard = drops.guard();
    let (own, dependent, after) = within(10, move || {
        let ex = executor(1);
        ex.block_on(async move {
            let bad = spawn_completion(async move {
                fastexec::yield_now().await;
                panic_any(PanicOnDrop(guard))
            });
            let dependent = spawn_after(&bad, |_: Arc<()>| async {});
            let own = bad.await.unwrap_err();
            let dependent = dependent.await.unwrap_err();
            // The worker is alive and the executor goes on.
            let after = spawn_completion(async { 7 }).await.unwrap();
            (own, dependent, *after)
        })
    });
    assert!(is_panicked(&own), "{own}");
    assert!(
        matches!(&dependent, CompletionError::UpstreamFailed { cause, .. } if is_panicked(cause)),
        "{dependent}"
    );
    assert_eq!(after, 7);
    assert_eq!(drops.count(), 1, "the payload was dropped, once");
}

#[test]
fn a_dependent_panicking_with_such_a_payload_fails_its_own_dependents() {
    let drops = DropCounter::new();
    let guard = drops.guard();
    let (own, dependent) = within(10, move || {
        let ex = executor(1);
        ex.block_on(async move {
            let first = spawn_completion(async { 1 });
            let bad = spawn_after(&first, move |_: Arc<i32>| async move {
                panic_any(PanicOnDrop(guard))
            });
            let dependent = spawn_after(&bad, |_: Arc<()>| async {});
            (bad.await.unwrap_err(), dependent.await.unwrap_err())
        })
    });
    assert!(is_panicked(&own), "{own}");
    assert!(
        matches!(&dependent, CompletionError::UpstreamFailed { .. }),
        "{dependent}"
    );
    assert_eq!(drops.count(), 1, "the payload was dropped, once");
}
