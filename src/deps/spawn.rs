//! The task behind a completion: a wrapper future that stores its output in
//! the node, or, if it is dropped first, a cancellation.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;

use super::error::CompletionError;
use super::node::Node;
use crate::executor::Shared;
use crate::task::builder::Options;
use crate::task::JoinHandle;
use crate::task_group::Membership;
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

/// Runs `future` and stores what it gives in `node`.
///
/// Not an `async fn`: its body would create the guard only when first
/// polled, and a task cancelled before that would leave the node pending.
/// Built here, the guard is captured by the future from the start.
fn produce<T, F>(node: Arc<Node<T>>, future: F) -> impl Future<Output = ()>
where
    T: Send + Sync + 'static,
    F: Future<Output = Result<T, Missing>>,
{
    let mut guard = CancelOnDrop(Some(node));
    async move {
        let result = future.await;
        let node = guard.0.take().expect("the guard is disarmed only here");
        let outcome = match result {
            Ok(value) => Ok(Arc::new(value)),
            Err(Missing::Panic(payload)) => {
                Err(CompletionError::from_panic(node.label(), &*payload))
            }
            Err(Missing::Cancelled) => Err(CompletionError::Cancelled { task: node.label() }),
        };
        node.finish(outcome);
    }
}

/// `future`'s output, or its panic.
pub(crate) fn catching<F: Future>(future: F) -> impl Future<Output = Result<F::Output, Missing>> {
    AssertUnwindSafe(future)
        .catch_unwind()
        .map(|r| r.map_err(Missing::Panic))
}

/// The outcome of the task behind `handle`, aborting the task if this
/// future is dropped first (even before its first poll: the guard is built
/// outside the async block, as in [`produce`]).
pub(crate) fn forwarding<T: Send + 'static>(
    handle: JoinHandle<T>,
) -> impl Future<Output = Result<T, Missing>> {
    let mut handle = AbortOnDrop(handle);
    async move {
        (&mut handle.0).await.map_err(|e| match e.try_into_panic() {
            Ok(payload) => Missing::Panic(payload),
            Err(_) => Missing::Cancelled,
        })
    }
}

/// Spawns the producer of `node`: a task storing what `future` gives, with
/// `options` (name, priority) and the node's number as its task id.
pub(crate) fn spawn_producer<T, F>(
    shared: &Arc<Shared>,
    node: Arc<Node<T>>,
    future: F,
    membership: Option<Arc<Membership>>,
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
    node.set_task(task);
}

/// Aborts the forwarded task if the forwarder is dropped before it finished,
/// so that aborting a shared completion aborts the task behind it.
struct AbortOnDrop<T: Send + 'static>(JoinHandle<T>);

impl<T: Send + 'static> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        if !self.0.is_finished() {
            self.0.abort();
        }
    }
}
