//! Dropping an executor drops the dependents of it still waiting for their
//! dependencies, unpolled, and finishes their completions as cancelled.
//!
//! A dependent waiting for a dependency on *another* executor sits in its
//! completion's node, neither queued nor parked by a poll of its own; it is
//! registered with its executor's registry of parked tasks so that the
//! executor's drop reaches it. So, once `drop(executor)` returns, its body
//! and what the body captured are gone, and its completion reports the
//! cancellation. (Both used to outlive the executor, for as long as the
//! dependency did: forever here.) The drop does this on the dropping
//! thread before it returns, so the test checks at once, without waiting.

mod support;

use std::sync::Arc;

use fastexec::cancel::CancellationToken;
use support::{executor, with_timeout, DropCounter};

#[test]
fn dropping_the_executor_of_a_waiting_dependent_drops_it_and_cancels_it() {
    with_timeout(|| {
        let other = executor(1);
        let ex = executor(1);
        // A dependency on another executor that never finishes.
        let dep = other.spawn_completion(std::future::pending::<i32>());
        let drops = DropCounter::new();
        let guard = drops.guard();
        let after = ex.spawn_after(&dep, move |v: Arc<i32>| async move {
            let _guard = guard;
            *v
        });
        drop(ex);
        assert_eq!(
            drops.count(),
            1,
            "the dependent's body outlived its executor"
        );
        let err = after
            .try_get()
            .expect("the dependent's completion is pending after its executor was dropped")
            .unwrap_err();
        assert!(err.is_cancelled(), "{err}");
        drop(other);
    });
}

/// A dependent released just before its executor is dropped is dropped
/// with it as well (from a queue), or has run: either way its body is gone
/// and its completion finished once the drop returns. Repeated, to vary
/// the race between the release, on the dependency's executor, and the
/// drop.
#[test]
fn a_dependent_released_while_its_executor_drops_is_gone_after_the_drop() {
    with_timeout(|| {
        let other = executor(1);
        for _ in 0..200 {
            let ex = executor(1);
            let open = CancellationToken::new();
            let o = open.clone();
            let dep = other.spawn_completion(async move { o.cancelled().await });
            let drops = DropCounter::new();
            let guard = drops.guard();
            let after = ex.spawn_after(&dep, move |_: Arc<()>| async move {
                let _guard = guard;
                std::future::pending::<()>().await
            });
            open.cancel();
            drop(ex);
            assert_eq!(
                drops.count(),
                1,
                "the dependent's body outlived its executor"
            );
            assert!(
                after.is_finished(),
                "its completion is pending after the drop"
            );
        }
    });
}

/// Spawns a dependent of `dep` when dropped, and hands its completion
/// out: a clean-up guard in a task's future.
struct SpawnAfterOnDrop {
    dep: fastexec::Completion<i32>,
    guard: Option<support::DropGuard>,
    spawned: std::sync::mpsc::Sender<fastexec::Completion<i32>>,
}

impl Drop for SpawnAfterOnDrop {
    fn drop(&mut self) {
        let guard = self.guard.take();
        let after = fastexec::spawn_after(&self.dep, move |v: Arc<i32>| async move {
            let _guard = guard;
            *v
        });
        let _ = self.spawned.send(after);
    }
}

/// A dependent spawned by a destructor that the executor's drop runs (on
/// its own thread, with the executor current) joins that executor, so it
/// is dropped with it, as a plain spawn there is, instead of waiting on in
/// its node.
#[test]
fn a_dependent_spawned_while_its_executor_drops_is_dropped_with_it() {
    with_timeout(|| {
        let other = executor(1);
        let ex = executor(1);
        let dep = other.spawn_completion(std::future::pending::<i32>());
        let drops = DropCounter::new();
        let (spawned, after) = std::sync::mpsc::channel();
        let (started, has_started) = std::sync::mpsc::channel();
        let on_drop = SpawnAfterOnDrop {
            dep,
            guard: Some(drops.guard()),
            spawned,
        };
        let _task = ex.spawn(async move {
            let _on_drop = on_drop;
            started.send(()).unwrap();
            std::future::pending::<()>().await
        });
        has_started.recv().unwrap();
        drop(ex);
        assert_eq!(
            drops.count(),
            1,
            "the dependent's body outlived its executor"
        );
        let after = after.recv().unwrap();
        let err = after
            .try_get()
            .expect("the dependent is still pending")
            .unwrap_err();
        assert!(err.is_cancelled(), "{err}");
    });
}

/// The registry's count, as the executor's `Debug` shows it.
fn parked_tasks(executor: &fastexec::Executor) -> usize {
    let shown = format!("{executor:?}");
    let (_, rest) = shown
        .split_once("parked_tasks: ")
        .expect("Debug shows parked_tasks");
    rest.trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .expect("a count")
}

/// A waiting dependent holds one entry in its executor's registry, which
/// goes when it starts (and one that never parks leaves none behind), so
/// the registry counts what a shutdown must still drop.
#[test]
fn a_waiting_dependent_leaves_the_registry_when_it_starts() {
    with_timeout(|| {
        let other = executor(1);
        let ex = executor(1);
        let open = CancellationToken::new();
        let o = open.clone();
        let dep = other.spawn_completion(async move { o.cancelled().await });
        let after = ex.spawn_after(&dep, |_: Arc<()>| async { 5 });
        assert_eq!(parked_tasks(&ex), 1, "the waiting dependent's entry");
        open.cancel();
        assert_eq!(*ex.block_on(after).unwrap(), 5);
        assert_eq!(parked_tasks(&ex), 0, "the started dependent's entry stayed");
        // Its dependency had succeeded: it is queued at once, not parked.
        let again = ex.spawn_after(&dep, |_: Arc<()>| async { 6 });
        assert_eq!(parked_tasks(&ex), 0);
        assert_eq!(*ex.block_on(again).unwrap(), 6);
    });
}
