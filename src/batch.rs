//! Spawning many tasks at once: [`Executor::spawn_many`] and
//! [`Executor::detach_many`], and the free functions
//! [`spawn_many`](crate::spawn_many) and [`detach_many`](crate::detach_many).
//!
//! A loop of `spawn` pays, per task, for what a batch can pay once: finding
//! the thread's worker (or the outside poster's ring), publishing the task
//! with a `Release` store, counting it in the metrics, and the wake-up
//! check, whose `SeqCst` fence and read of the idle state (a line every
//! worker writes when it parks or wakes) are the dearest part of a push
//! from outside. Here the tasks are built [`CHUNK`] at a time into a
//! buffer, and each chunk is counted with one add and queued with one
//! operation (the worker's ring: [`Local::push_many`]; the outside poster's
//! ring: [`Local::push_many_in_order`]), followed by one wake-up check.
//! Each task is built exactly as `spawn` builds it, in the caller's task
//! groups (one membership clone per task: a `block_on` scope counts its
//! tasks by that `Arc`'s reference count, which has no add-by-n), and an
//! executor with hooks, the latency histogram or the simple scheduler
//! (the decorated path) spawns the tasks one by one.
//!
//! Chunks are queued as they are built, so workers start on the first
//! chunk while the caller builds the next (and a task waits, at most, for
//! the rest of its chunk to be built: an iterator that blocks on an
//! earlier task of its own batch may wait for ever, which is documented), and a huge batch from outside
//! joins the same queues as single spawns: a full ring sends its older
//! half to the overflow queue, which workers take from in turns with
//! their own work (`worker.rs`), so the batch starves nothing.
//!
//! A panic in the iterator (or in the caller's `Extend`) unwinds through a
//! guard that queues the tasks of the chunk built so far: every task that
//! was created runs (its handle, if it was handed over, reports it), none
//! is dropped unqueued or leaked.
//!
//! [`Local::push_many`]: crate::queue::Local::push_many
//! [`Local::push_many_in_order`]: crate::queue::Local::push_many_in_order

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use crate::context;
use crate::executor::Shared;
use crate::task::{JoinHandle, Runnable};
use crate::task_group::MembershipArc;
use crate::worker::Worker;

/// Tasks built and queued per chunk: half a ring, so a chunk from a worker
/// fits in its ring with room to spare, and the outside poster's ring takes
/// two chunks before it overflows.
pub(crate) const CHUNK: usize = crate::queue::CAPACITY / 2;

/// What becomes of each new task's handle.
pub(crate) trait Handles<T> {
    fn take(&mut self, handle: JoinHandle<T>);
}

/// `spawn_many`: each handle goes to the caller's collection as soon as its
/// task is built (so the collection holds every created task's handle, in
/// order, also when the iterator panics midway).
pub(crate) struct Collect<'a, E>(pub(crate) &'a mut E);

impl<T, E: Extend<JoinHandle<T>>> Handles<T> for Collect<'_, E> {
    #[inline]
    fn take(&mut self, handle: JoinHandle<T>) {
        self.0.extend(Some(handle));
    }
}

/// `detach_many`: each handle is dropped, which detaches its task.
pub(crate) struct Detach;

impl<T> Handles<T> for Detach {
    #[inline]
    fn take(&mut self, handle: JoinHandle<T>) {
        handle.detach();
    }
}

/// The chunk being built; queues what it holds when dropped, so a panic
/// midway queues the tasks already built.
struct Chunk<'a> {
    shared: &'a Shared,
    worker: Option<&'a Worker>,
    tasks: Vec<Runnable>,
}

impl Chunk<'_> {
    #[inline]
    fn queue(&mut self) {
        if !self.tasks.is_empty() {
            self.shared.queue_new_batch(&mut self.tasks, self.worker);
        }
    }
}

impl Drop for Chunk<'_> {
    fn drop(&mut self) {
        self.queue();
    }
}

/// Spawns every future of `futures` onto `shared` in `membership`'s groups,
/// in order, giving each handle to `handles`. `worker` is this thread's
/// worker if the caller knows it belongs to `shared`; otherwise it is
/// looked up here, once.
pub(crate) fn spawn_many<I, F, H>(
    shared: &Arc<Shared>,
    futures: I,
    membership: Option<MembershipArc>,
    worker: Option<&Worker>,
    handles: &mut H,
) where
    I: IntoIterator<Item = F>,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    H: Handles<F::Output>,
{
    // A spawn through `Executor::spawn_many` from one of the executor's own
    // workers goes to that worker's ring, as `Executor::spawn` does.
    let found: Option<Rc<Worker>> = match worker {
        None if context::is_worker_of(shared.id()) => context::worker_of(shared),
        _ => None,
    };
    let worker = worker.or(found.as_deref());
    let mut futures = futures.into_iter();
    if shared.ext.decorates() {
        for future in futures {
            handles.take(shared.spawn(future, membership.clone(), worker));
        }
        return;
    }
    let (lower, _) = futures.size_hint();
    let mut chunk = Chunk {
        shared,
        worker,
        tasks: Vec::with_capacity(lower.min(CHUNK)),
    };
    loop {
        for future in futures.by_ref().take(CHUNK) {
            let (task, handle) = shared.build_plain(future, membership.clone());
            chunk.tasks.push(task);
            handles.take(JoinHandle::new(handle));
        }
        if chunk.tasks.len() < CHUNK {
            // The iterator ended (or its `take` did, a chunk short).
            return; // `chunk`'s drop queues the rest
        }
        chunk.queue();
    }
}
