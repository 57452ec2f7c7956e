//! Tasks spawned by `spawn_many` / `detach_many` are counted as `spawn`'s
//! are: in the caller's task groups (so `block_on` and `TaskGroup::wait`
//! wait for them), in the executor's metrics, and by its spawn hooks.

mod support;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use fastexec::{Executor, JoinHandle, TaskGroup};
use support::{executor, with_timeout, Gate};

const N: usize = 1_000;

fn adders(
    ran: &Arc<AtomicUsize>,
    n: usize,
) -> impl Iterator<Item = impl std::future::Future<Output = ()>> {
    let ran = ran.clone();
    (0..n).map(move |_| {
        let ran = ran.clone();
        async move {
            fastexec::yield_now().await;
            ran.fetch_add(1, Relaxed);
        }
    })
}

#[test]
fn block_on_waits_for_a_detached_batch() {
    with_timeout(|| {
        for threads in [1, 2] {
            let ex = executor(threads);
            let ran = Arc::new(AtomicUsize::new(0));
            let batch = adders(&ran, N);
            ex.block_on(async move { fastexec::detach_many(batch) });
            assert_eq!(ran.load(Relaxed), N);
            // From a task inside the scope, through the executor's method.
            let ran = Arc::new(AtomicUsize::new(0));
            let batch = adders(&ran, N);
            // Weak: the task must not hold the last reference, or the
            // executor could be dropped on its own worker, whose thread is
            // then left to exit on its own (`block_on` may return just
            // before the task's future is dropped).
            let ex = Arc::new(ex);
            let inner = Arc::downgrade(&ex);
            ex.block_on(async move {
                fastexec::spawn(async move {
                    let ex = inner.upgrade().expect("alive during block_on");
                    ex.detach_many(batch);
                })
                .detach();
            });
            assert_eq!(ran.load(Relaxed), N);
        }
    })
}

/// Spawns `future` into `group` on `ex`, outside any `block_on` scope: from
/// a task that `ex.spawn` started from this (outside) thread. Calling
/// `group.spawn` here directly would run the member on the global executor,
/// whose threads outlive the test (Miri reports them left running).
// The task hands back the member's handle for the caller to await.
#[allow(clippy::async_yields_async)]
fn spawn_member<F>(ex: &Executor, group: &Arc<TaskGroup>, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let group = group.clone();
    ex.block_on(ex.spawn(async move { group.spawn(future) }))
        .unwrap()
}

#[test]
fn a_task_group_waits_for_a_batch_and_cancels_it() {
    with_timeout(|| {
        let ex = executor(2);
        let ran = Arc::new(AtomicUsize::new(0));
        let group = Arc::new(TaskGroup::new());
        let batch = adders(&ran, N);
        let member = spawn_member(&ex, &group, async move { fastexec::detach_many(batch) });
        ex.block_on(async {
            member.await.unwrap();
            group.wait().await;
        });
        assert_eq!(ran.load(Relaxed), N);
        assert_eq!(group.active(), 0);

        // Cancelling the group ends a batch of its members parked on a gate.
        let group = Arc::new(TaskGroup::new());
        let gate = Gate::new();
        let mut handles = Vec::new();
        let waiting = gate.clone();
        let spawner = spawn_member(&ex, &group, async move {
            let mut handles = Vec::new();
            fastexec::spawn_many(
                (0..N).map(|_| {
                    let gate = waiting.clone();
                    async move { gate.wait().await }
                }),
                &mut handles,
            );
            handles
        });
        handles.extend(ex.block_on(spawner).unwrap());
        assert_eq!(handles.len(), N);
        group.cancel();
        ex.block_on(group.wait());
        for handle in handles {
            let err = ex.block_on(handle).unwrap_err();
            assert!(err.is_cancelled(), "{err}");
        }
        drop(gate);
    })
}

#[test]
fn metrics_and_hooks_count_every_task_of_a_batch() {
    with_timeout(|| {
        // Plain executor: the batch path, counted per chunk.
        let ex = executor(2);
        let before = ex.metrics().spawned;
        let ran = Arc::new(AtomicUsize::new(0));
        let batch = adders(&ran, N);
        ex.block_on(async move { fastexec::detach_many(batch) });
        ex.detach_many(adders(&ran, N));
        let mut handles = Vec::new();
        ex.spawn_many(adders(&ran, N), &mut handles);
        ex.block_on(async {
            for handle in handles {
                handle.await.unwrap();
            }
        });
        assert_eq!(ex.metrics().spawned - before, 3 * N as u64);

        // With a spawn hook: each task is spawned and reported one by one.
        let seen = Arc::new(Mutex::new(0_usize));
        let on_spawn = seen.clone();
        let ex = Executor::builder()
            .threads(2)
            .on_task_spawn(move |_| *on_spawn.lock().unwrap() += 1)
            .build()
            .unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let batch = adders(&ran, N);
        ex.block_on(async move { fastexec::detach_many(batch) });
        assert_eq!(ran.load(Relaxed), N);
        assert_eq!(*seen.lock().unwrap(), N);
    })
}
