//! One completion, many dependents and awaiters; dependents registered
//! after (or while) the completion finishes.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use fastexec::{spawn_after, spawn_completion};
use support::{executor, with_timeout};

#[test]
fn many_dependents_of_one_completion_all_get_the_same_output() {
    let outputs = with_timeout(|| {
        fastexec::block_on(async {
            let root = spawn_completion(async { String::from("root") });
            let dependents: Vec<_> = (0..1_000)
                .map(|_| spawn_after(&root, |r: Arc<String>| async move { r }))
                .collect();
            let mut outputs = Vec::new();
            for dependent in dependents {
                // Each dependent returns the Arc it was given.
                let given: Arc<String> = Arc::clone(&*dependent.await.unwrap());
                outputs.push(given);
            }
            outputs.push(root.await.unwrap());
            outputs
        })
    });
    assert_eq!(outputs.len(), 1_001);
    let first = &outputs[0];
    assert_eq!(**first, "root");
    // Shared, not cloned: T need not be Clone.
    assert!(outputs.iter().all(|o| Arc::ptr_eq(o, first)));
}

#[test]
fn many_awaiters_of_one_pending_completion_are_all_woken() {
    let (sender, receiver) = futures::channel::oneshot::channel::<u32>();
    let sum = with_timeout(move || {
        let ex = executor(2);
        let gate = ex.spawn_completion(async move { receiver.await.unwrap() });
        let awaiters: Vec<_> = (0..100)
            .map(|_| {
                let gate = gate.clone();
                ex.spawn(async move { *gate.await.unwrap() })
            })
            .collect();
        sender.send(3).unwrap();
        ex.block_on(async move {
            let mut sum = 0;
            for a in awaiters {
                sum += a.await.unwrap();
            }
            sum
        })
    });
    assert_eq!(sum, 300);
}

#[test]
fn registering_after_completion_still_releases_the_dependent() {
    let (value, err) = with_timeout(|| {
        fastexec::block_on(async {
            let done = spawn_completion(async { 7 });
            done.clone().await.unwrap();
            assert!(done.is_finished());
            let after = spawn_after(done, |d: Arc<i32>| async move { *d + 1 });
            let failed = fastexec::task::Builder::new()
                .name("already failed")
                .spawn_completion(async { panic!("early") });
            assert!(failed.clone().await.is_err());
            let never = spawn_after(failed, |_: Arc<()>| async { unreachable!() });
            (after.await.unwrap(), never.await.unwrap_err())
        })
    });
    assert_eq!(*value, 8);
    assert_eq!(
        err.failed_dependency().unwrap().name(),
        Some("already failed")
    );
}

/// Dependents registered from another thread while the dependency finishes:
/// whichever side wins the race, each dependent runs exactly once.
#[test]
fn registration_racing_with_completion_loses_no_release() {
    let ran = with_timeout(|| {
        let ex = executor(2);
        let ran = Arc::new(AtomicUsize::new(0));
        for _ in 0..2_000 {
            let root = ex.spawn_completion(async { 1 });
            let ran = ran.clone();
            let dependent = ex.spawn_after(root, move |one: Arc<usize>| async move {
                ran.fetch_add(*one, Ordering::Relaxed);
            });
            ex.block_on(dependent).unwrap();
        }
        ran.load(Ordering::Relaxed)
    });
    assert_eq!(ran, 2_000);
}
