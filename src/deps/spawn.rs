//! The task behind a completion: a wrapper future that stores its output in
//! the node, or, if it is dropped first, a cancellation.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::dependencies::{Held, Parked};
use super::error::CompletionError;
use super::node::Node;
use crate::executor::Shared;
use crate::task::builder::Options;
use crate::task::{JoinError, JoinHandle, RawTask, Runnable};
use crate::task_group::MembershipArc;
use crate::worker::Worker;

/// Why a producer's future gave no value.
pub(crate) enum Missing {
    Panic(Box<dyn Any + Send>),
    Cancelled,
}

/// Finishes the node as cancelled if the producer's future is dropped before
/// it finished it (abort, group cancellation, executor shutdown).
struct CancelOnDrop<T: Send + Sync + 'static>(Option<Arc<Node<T>>>);

impl<T: Send + Sync + 'static> Drop for CancelOnDrop<T> {
    fn drop(&mut self) {
        if let Some(node) = self.0.take() {
            node.finish(Err(CompletionError::Cancelled { task: node.label() }));
        }
    }
}

pin_project_lite::pin_project! {
    /// Runs `future` and stores what it gives in the node.
    ///
    /// A struct rather than an `async` block: the guard exists from the
    /// start (a task cancelled before its first poll still finishes its
    /// node), and the future is stored once (an `async` block would keep
    /// both the captured future and the one it awaits).
    struct Produce<T, F>
    where
        T: Send,
        T: Sync,
        T: 'static,
    {
        // Dropped first: the task's own state goes before its dependents
        // hear of the cancellation.
        #[pin]
        future: F,
        guard: CancelOnDrop<T>,
    }
}

/// The task of `node`: `future`, then its outcome stored in `node`.
fn produce<T, F>(node: Arc<Node<T>>, future: F) -> Produce<T, F>
where
    T: Send + Sync + 'static,
    F: Future<Output = Result<T, Missing>>,
{
    Produce {
        future,
        guard: CancelOnDrop(Some(node)),
    }
}

impl<T, F> Future for Produce<T, F>
where
    T: Send + Sync + 'static,
    F: Future<Output = Result<T, Missing>>,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        let result = std::task::ready!(this.future.poll(cx));
        let node = this.guard.0.take().expect("a producer finishes once");
        finish_with(&node, result);
        Poll::Ready(())
    }
}

/// Finishes `node` with what a producer's future gave.
fn finish_with<T: Send + Sync + 'static>(node: &Node<T>, result: Result<T, Missing>) {
    let outcome = match result {
        Ok(value) => Ok(value),
        Err(Missing::Panic(payload)) => {
            let error = CompletionError::from_panic(node.label(), &*payload);
            // Its `Drop` may panic (a payload is any value given to
            // `panic_any`): caught, or it would unwind past the node,
            // taken out of the guard but not finished yet, which every
            // awaiter and dependent would then wait for forever.
            crate::task::drop_panic(payload);
            Err(error)
        }
        Err(Missing::Cancelled) => Err(CompletionError::Cancelled { task: node.label() }),
    };
    node.finish(outcome);
}

pin_project_lite::pin_project! {
    /// A dependent's future: `body(outputs)` once its dependencies have
    /// succeeded, which they have when the task is first polled. The
    /// dependencies' handles are dropped then, so that a running task does
    /// not keep its upstream alive (nor make dropping a long chain recurse).
    ///
    /// While it waits, `parked` keeps its entry in its executor's registry
    /// of parked tasks, if it has one; leaving `Waiting` (the first poll,
    /// or the drop, after the job's) removes it.
    #[project = StartProj]
    pub(crate) enum Start<D, B, Fut> {
        Waiting { job: Option<(D, B)>, parked: Parked },
        Running { #[pin] future: Fut },
    }
}

/// The future of a task that runs `body` on the outputs of `deps`,
/// registered as `parked` until it starts.
pub(crate) fn start<D, B, Fut>(deps: D, body: B, parked: Parked) -> Start<D, B, Fut>
where
    D: Held,
    B: FnOnce(D::Outputs) -> Fut,
    Fut: Future,
{
    Start::Waiting {
        job: Some((deps, body)),
        parked,
    }
}

impl<D, B, Fut> Future for Start<D, B, Fut>
where
    D: Held,
    B: FnOnce(D::Outputs) -> Fut,
    Fut: Future,
{
    type Output = Fut::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fut::Output> {
        if let StartProj::Waiting { job, .. } = self.as_mut().project() {
            let (deps, body) = job.take().expect("a dependent starts once");
            let outputs = deps.outputs();
            drop(deps);
            self.set(Start::Running {
                future: body(outputs),
            });
        }
        match self.project() {
            StartProj::Running { future } => future.poll(cx),
            StartProj::Waiting { .. } => unreachable!("set to running above"),
        }
    }
}

pin_project_lite::pin_project! {
    /// `future`'s output, or its panic (see [`catching`]); `Done` once
    /// `future` gave its output and was dropped.
    #[project = CatchingProj]
    pub(crate) enum Catching<F> {
        Live { #[pin] future: F },
        Done,
    }
}

/// `future`'s output, or its panic: a producer stores the panic's message
/// in its node. (Not `catch_unwind().map(..)`, whose `Map` adds a word.)
///
/// `future` is dropped as soon as it is ready, before the producer stores
/// its output: as for a [`JoinHandle`], whose task's future is dropped
/// before its output is stored, whoever sees the completion finished (an
/// awaiter, a dependent the outcome releases on another worker) finds what
/// the future held released. A panic from its destructor is the task's
/// panic, as for a `JoinHandle` (the output is lost with the unwinding).
/// A future that panicked is dropped before the panic is stored, too.
pub(crate) fn catching<F: Future>(future: F) -> Catching<F> {
    Catching::Live { future }
}

impl<F: Future> Future for Catching<F> {
    type Output = Result<F::Output, Missing>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let polled = catch_unwind(AssertUnwindSafe(|| {
            let CatchingProj::Live { future } = self.as_mut().project() else {
                unreachable!("a producer's future is not polled after it is ready")
            };
            let output = std::task::ready!(future.poll(cx));
            // Should the destructor panic, `Done` is in place all the same.
            self.set(Catching::Done);
            Poll::Ready(output)
        }));
        match polled {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(payload) => {
                // What the unwinding left of the future goes too, before
                // the panic is stored (a panic from its destructor is
                // dropped: the task's panic is the first).
                if let Err(second) = catch_unwind(AssertUnwindSafe(|| self.set(Catching::Done))) {
                    crate::task::drop_panic(second);
                }
                Poll::Ready(Err(Missing::Panic(payload)))
            }
        }
    }
}

/// The outcome of the task behind `handle`, for the producer of `node`
/// (the completion of `JoinHandle::shared`). If this future is dropped
/// first (even before its first poll: the guard is built outside the async
/// block, as in [`produce`]), see [`Forwarded`]. Polling a handle that
/// already gave its output (`shared()` on one) panics: that panic is the
/// forwarder's, reported as any producer's, not a cancellation.
pub(crate) fn forwarding<T: Send + Sync + 'static>(
    handle: JoinHandle<T>,
    node: Arc<Node<T>>,
) -> impl Future<Output = Result<T, Missing>> {
    let mut forwarded = Forwarded { handle, node };
    async move { catching(&mut forwarded.handle).await?.map_err(missing) }
}

/// What a producer reports for the task behind a handle that gave `error`.
fn missing(error: JoinError) -> Missing {
    match error.try_into_panic() {
        Ok(payload) => Missing::Panic(payload),
        Err(_) => Missing::Cancelled,
    }
}

/// Spawns the producer of `node`: a task storing what `future` gives, with
/// `options` (name, priority) and the node's number as its task id.
pub(crate) fn spawn_producer<T, F>(
    shared: &Arc<Shared>,
    node: Arc<Node<T>>,
    future: F,
    membership: Option<MembershipArc>,
    worker: Option<&Worker>,
    options: &Options,
) where
    T: Send + Sync + 'static,
    F: Future<Output = Result<T, Missing>> + Send + 'static,
{
    let id = Some(node.id());
    let task = options.spawn(
        shared,
        produce(node.clone(), future),
        membership,
        worker,
        id,
    );
    // The task may have finished already: then this detaches it.
    node.set_task(task.into_raw(), None);
}

/// Builds the producer of `node` as [`spawn_producer`] does, without
/// queueing it (the node keeps it until its dependencies are met); returns
/// it with its handle.
pub(crate) fn build_producer<T, F>(
    shared: &Arc<Shared>,
    node: &Arc<Node<T>>,
    future: F,
    membership: Option<MembershipArc>,
    worker: Option<&Worker>,
    options: &Options,
) -> (Runnable, RawTask<()>)
where
    T: Send + Sync + 'static,
    F: Future<Output = Result<T, Missing>> + Send + 'static,
{
    let id = Some(node.id());
    let producer = produce(node.clone(), future);
    options.build(shared, producer, membership, worker, id)
}

/// Builds the producer of `node` as [`build_producer`] does, but as a bare
/// async-task task of no executor, counted in no group: `schedule` gets it
/// when it is released. For the loom models only.
#[cfg(loom)]
pub(crate) fn build_bare<T, F>(
    node: &Arc<Node<T>>,
    future: F,
    schedule: impl Fn(Runnable) + Send + Sync + 'static,
) -> (Runnable, RawTask<()>)
where
    T: Send + Sync + 'static,
    F: Future<Output = Result<T, Missing>> + Send + 'static,
{
    use futures_util::FutureExt;
    let producer = produce(node.clone(), future)
        .map(|()| Ok::<_, crate::task::Failure>(crate::task::TaskOutput::new(())));
    let (unstarted, task) = async_task::spawn(producer, schedule);
    (unstarted, task.fallible())
}

/// The task behind a shared completion, as its forwarder holds it.
///
/// Dropped before the forwarder took the task's outcome, it passes on the
/// outcome of a task that has finished meanwhile: the task completed (or
/// panicked), so its completion says so, whatever ended the forwarder; the
/// producer's guard, dropped next, then finds the node finished. A task
/// still running is aborted only if `Completion::abort` asked for it
/// (dropping the forwarder's handle is how that abort reaches here).
/// Otherwise the forwarder ended for its own reasons: a task group it
/// counts in was cancelled, or the executor it runs on was dropped. The
/// task behind the handle is not the forwarder's to end (it may be in no
/// such group, on another executor): it is detached, as a dropped
/// `JoinHandle` is, and runs on; its output is dropped, and the completion
/// reports the forwarder's cancellation.
struct Forwarded<T: Send + Sync + 'static> {
    handle: JoinHandle<T>,
    node: Arc<Node<T>>,
}

impl<T: Send + Sync + 'static> Drop for Forwarded<T> {
    fn drop(&mut self) {
        if let Some(result) = self.handle.try_take() {
            finish_with(&self.node, result.map_err(missing));
        } else if !self.handle.is_finished() && self.node.abort_requested() {
            self.handle.abort();
        }
    }
}
