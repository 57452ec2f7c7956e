//! User code that a failure's release runs, and that waits for another
//! failure to reach its dependents, sees it.
//!
//! A failure's release (`release` in `src/deps/node.rs`) runs user code:
//! the drop glue of each unstarted dependent it fails (its body's captures)
//! and the `wake` of each awaiter. Failures finished meanwhile on the same
//! thread are queued for the release loop, to keep a long chain iterative;
//! the user code runs with that queue set aside, so that a clean-up
//! `block_on` inside it (which runs tasks on the thread meanwhile) sees the
//! failure it waits for reach its dependent. (That failure used to be
//! queued behind the very call waiting for it: a hang.) The hang guards
//! are timeouts on the clean-up's report, never sleeps.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};

use fastexec::CompletionError;
use support::{executor, with_timeout};

/// Runs a clean-up job to completion when dropped: a task that fails, and
/// a dependent of it, awaited with `block_on`. Sends the dependent's outcome.
struct CleanupOnDrop(mpsc::Sender<Result<Arc<()>, CompletionError>>);

impl Drop for CleanupOnDrop {
    fn drop(&mut self) {
        let failing = fastexec::spawn_completion(async { panic!("clean-up failed") });
        let after = fastexec::spawn_after(&failing, |_: Arc<()>| async {});
        let _ = self.0.send(fastexec::block_on(after));
    }
}

#[test]
fn a_block_on_in_a_dependents_drop_sees_failures_finished_meanwhile() {
    let (tx, rx) = mpsc::channel();
    // The executor lives in the body thread: if it hangs, it is leaked.
    let _ = std::thread::spawn(move || {
        let ex = executor(1);
        let (gate_tx, gate_rx) = futures::channel::oneshot::channel::<()>();
        let dep = ex.spawn_completion(async move {
            let _ = gate_rx.await;
            panic!("dependency failed");
        });
        let cleanup = CleanupOnDrop(tx);
        // Registered while `dep` waits at the gate.
        let dependent = ex.spawn_after(&dep, move |_: Arc<()>| {
            let _cleanup = cleanup;
            async {}
        });
        gate_tx.send(()).unwrap();
        // The dependency fails on the worker; its release drops the
        // dependent, whose drop glue runs the clean-up there.
        let _ = ex.block_on(dependent);
    });
    with_timeout(move || {
        let outcome = rx.recv_timeout(std::time::Duration::from_secs(10)).expect(
            "the clean-up's block_on never returned: its dependency's failure was stranded",
        );
        let err = outcome.unwrap_err();
        assert!(err.failed_dependency().is_some(), "{err}");
    });
}

/// The same clean-up, dropped on the worker at the end of a plain task's
/// poll (no release loop around it), completes: the nested `block_on`
/// itself is supported there.
#[test]
fn a_block_on_in_a_plain_tasks_drop_sees_the_failure() {
    let (tx, rx) = mpsc::channel();
    let _ = std::thread::spawn(move || {
        let ex = executor(1);
        let cleanup = CleanupOnDrop(tx);
        let _ = ex.block_on(ex.spawn(async move {
            let _cleanup = cleanup;
        }));
    });
    with_timeout(move || {
        let outcome = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the clean-up's block_on never returned");
        let err = outcome.unwrap_err();
        assert!(err.failed_dependency().is_some(), "{err}");
    });
}

/// The same dependent, dropped unstarted on the worker by an `abort` from
/// a task (its drop glue runs the same clean-up, but no failure's release
/// loop is running on the thread), completes.
#[test]
fn a_block_on_in_an_aborted_dependents_drop_sees_the_failure() {
    let (tx, rx) = mpsc::channel();
    let _ = std::thread::spawn(move || {
        let ex = executor(1);
        let (_gate_tx, gate_rx) = futures::channel::oneshot::channel::<()>();
        let dep = ex.spawn_completion(async move {
            let _ = gate_rx.await;
        });
        let cleanup = CleanupOnDrop(tx);
        let dependent = ex.spawn_after(&dep, move |_: Arc<()>| {
            let _cleanup = cleanup;
            async {}
        });
        let d = dependent.clone();
        let _ = ex.block_on(ex.spawn(async move { d.abort() }));
        let _ = ex.block_on(dependent);
    });
    with_timeout(move || {
        let outcome = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the clean-up's block_on never returned");
        let err = outcome.unwrap_err();
        assert!(err.failed_dependency().is_some(), "{err}");
    });
}

/// A waker whose `wake` runs the clean-up (a hand-written executor's waker
/// may own a task, whose drop then runs there).
struct CleanupOnWake(Mutex<Option<CleanupOnDrop>>);

impl Wake for CleanupOnWake {
    fn wake(self: Arc<Self>) {
        drop(self.0.lock().unwrap().take());
    }
}

/// The same clean-up run by an awaiter's `wake`, which the release of a
/// failed task calls from inside its loop.
#[test]
fn a_block_on_in_an_awaiters_wake_sees_failures_finished_meanwhile() {
    let (tx, rx) = mpsc::channel();
    let _ = std::thread::spawn(move || {
        let ex = executor(1);
        let (gate_tx, gate_rx) = futures::channel::oneshot::channel::<()>();
        let dep = ex.spawn_completion(async move {
            let _ = gate_rx.await;
            panic!("dependency failed");
        });
        let waker = Waker::from(Arc::new(CleanupOnWake(Mutex::new(Some(CleanupOnDrop(tx))))));
        // Awaited by hand, so that the failure's release wakes this waker.
        let mut awaiting = dep.clone();
        assert!(Pin::new(&mut awaiting)
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        drop(waker);
        gate_tx.send(()).unwrap();
        let _ = ex.block_on(dep);
        drop(awaiting);
    });
    with_timeout(move || {
        let outcome = rx.recv_timeout(std::time::Duration::from_secs(10)).expect(
            "the clean-up's block_on never returned: its dependency's failure was stranded",
        );
        let err = outcome.unwrap_err();
        assert!(err.failed_dependency().is_some(), "{err}");
    });
}
