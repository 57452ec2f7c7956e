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

/// A dependent whose dependencies had all succeeded is queued by
/// `spawn_after` itself, without waiting in its node; it can still be
/// aborted while it waits in the queue, and then never runs.
#[test]
fn a_dependent_queued_at_once_can_still_be_aborted() {
    let (err, ran) = with_timeout(|| {
        let ex = executor(1);
        let done = ex.spawn_completion(async { 1 });
        ex.block_on(done.clone()).expect("the dependency succeeds");
        // Keep the only worker busy, so the dependent stays queued.
        let gate = support::Gate::new();
        let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (opened, flag) = (gate.clone(), started.clone());
        let blocker = ex.spawn(async move {
            flag.store(true, Ordering::SeqCst);
            opened.wait_blocking();
        });
        assert!(support::spin_until(|| started.load(Ordering::SeqCst)));
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        let after = ex.spawn_after(&done, move |_| async move {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        after.abort();
        gate.open();
        ex.block_on(blocker).expect("the blocker finishes");
        (ex.block_on(after).unwrap_err(), ran.load(Ordering::SeqCst))
    });
    assert!(err.is_cancelled(), "{err}");
    assert_eq!(ran, 0, "an aborted dependent never runs");
}
