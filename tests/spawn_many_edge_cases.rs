//! `spawn_many` at its edges: an iterator that panics midway (the tasks
//! already created are queued and run, their handles kept, none leaked),
//! an executor that is shutting down (the tasks are dropped unpolled, as a
//! `spawn`'s would be), and an empty batch.

mod support;

use std::future::pending;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};

use support::{executor, spawn_parked, with_timeout, DropCounter, TIMEOUT};

/// Futures that count their run; the iterator panics when asked for item
/// `panic_at`.
fn panicking_batch(
    ran: &Arc<AtomicUsize>,
    panic_at: usize,
) -> impl Iterator<Item = impl std::future::Future<Output = usize>> {
    let ran = ran.clone();
    (0..).map(move |i| {
        assert!(i != panic_at, "the iterator gives up at {i}");
        let ran = ran.clone();
        async move {
            ran.fetch_add(1, SeqCst);
            i
        }
    })
}

#[test]
fn a_panicking_iterator_loses_no_task_created_before_it() {
    with_timeout(|| {
        let ex = executor(2);
        // Mid-chunk, on a chunk's edge, and after several chunks.
        for panic_at in [0, 5, 128, 1_000] {
            let ran = Arc::new(AtomicUsize::new(0));
            let mut handles = Vec::new();
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                ex.spawn_many(panicking_batch(&ran, panic_at), &mut handles)
            }));
            assert!(unwound.is_err());
            assert_eq!(handles.len(), panic_at);
            let outputs: Vec<usize> = ex.block_on(async {
                let mut outputs = Vec::new();
                for handle in handles {
                    outputs.push(handle.await.unwrap());
                }
                outputs
            });
            assert_eq!(outputs, (0..panic_at).collect::<Vec<_>>());
            assert_eq!(ran.load(SeqCst), panic_at);
        }
    })
}

#[test]
fn a_panicking_iterator_inside_a_scope_still_counts_its_tasks() {
    with_timeout(|| {
        let ex = executor(2);
        let ran = Arc::new(AtomicUsize::new(0));
        let batch = panicking_batch(&ran, 300);
        // The panic leaves the spawning task (its handle reports it), and
        // block_on still waits for the 300 detached tasks created before.
        let outcome = ex.block_on(async move {
            fastexec::spawn(async move { fastexec::detach_many(batch) }).await
        });
        assert!(outcome.unwrap_err().is_panic());
        assert_eq!(ran.load(SeqCst), 300);
    })
}

/// Spawns a batch (holding drop guards, counting polls) when dropped, and
/// sends the batch's handles back.
struct SpawnManyOnDrop {
    drops: DropCounter,
    polls: Arc<AtomicUsize>,
    handles: mpsc::Sender<Vec<fastexec::JoinHandle<()>>>,
}

const PER_DROP: usize = 300;

impl Drop for SpawnManyOnDrop {
    fn drop(&mut self) {
        let tasks = (0..PER_DROP).map(|_| {
            let (guard, polls) = (self.drops.guard(), self.polls.clone());
            async move {
                let _guard = guard;
                polls.fetch_add(1, SeqCst);
                pending::<()>().await;
            }
        });
        let mut handles = Vec::new();
        fastexec::spawn_many(tasks, &mut handles);
        self.handles.send(handles).unwrap();
    }
}

#[test]
fn a_batch_spawned_while_shutting_down_is_dropped_with_the_executor() {
    with_timeout(|| {
        let ex = executor(2);
        let drops = DropCounter::new();
        let polls = Arc::new(AtomicUsize::new(0));
        let (handles_tx, handles_rx) = mpsc::channel();
        for _ in 0..2 {
            let spawner = SpawnManyOnDrop {
                drops: drops.clone(),
                polls: polls.clone(),
                handles: handles_tx.clone(),
            };
            spawn_parked(&ex, spawner).detach();
        }
        drop(ex);
        assert_eq!(
            drops.count(),
            2 * PER_DROP,
            "the batches died with the executor"
        );
        assert_eq!(polls.load(SeqCst), 0, "and never ran");
        for _ in 0..2 {
            let handles = handles_rx.recv_timeout(TIMEOUT).unwrap();
            assert_eq!(handles.len(), PER_DROP);
            for handle in handles {
                assert!(handle.is_finished());
                let err = futures::executor::block_on(handle).unwrap_err();
                assert!(err.is_cancelled(), "{err}");
            }
        }
        assert_eq!(
            fastexec::current_threads(),
            None,
            "no global executor started"
        );
    })
}

#[test]
fn an_empty_batch_spawns_nothing() {
    with_timeout(|| {
        let ex = executor(1);
        let before = ex.metrics().spawned;
        let mut handles: Vec<fastexec::JoinHandle<()>> = Vec::new();
        ex.spawn_many(std::iter::empty::<std::future::Ready<()>>(), &mut handles);
        ex.detach_many(Vec::<std::future::Ready<()>>::new());
        ex.block_on(async {
            fastexec::detach_many(std::iter::empty::<std::future::Ready<()>>());
        });
        assert!(handles.is_empty());
        assert_eq!(ex.metrics().spawned, before);
    })
}
