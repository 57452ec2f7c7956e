//! The completion protocol without an executor, for the loom models in
//! `loom-tests/`; not public API.
//!
//! A [`source`] is a completion with no task, which the model finishes by
//! hand from any thread ([`succeed`], [`fail`]); [`spawn_after`] runs the
//! real spawner (registration, the spawner's token, the counter) with a
//! task that no executor holds, so that a release is seen as a call. The
//! rest is the public API: awaiting a [`Completion`], [`Completion::abort`],
//! [`Completion::try_get`].

use std::future::Future;
use std::sync::Arc;

use super::dependencies::{spawn_after_on, Dependencies, Parked, Target, Watch};
use super::node::Node;
use super::spawn::{build_bare, Missing};
use super::{Completion, CompletionError};
use crate::task::{RawTask, Runnable};

/// A pending completion with no task behind it.
pub fn source<T: Send + Sync + 'static>() -> Completion<T> {
    Completion::new(Arc::new(Node::new(None, 0)))
}

/// Finishes `completion` with `value`, as its task would on returning it
/// (nothing if it had finished already).
pub fn succeed<T: Send + Sync + 'static>(completion: &Completion<T>, value: T) {
    completion.node().finish(Ok(value));
}

/// Finishes `completion` as cancelled, as its task would when aborted while
/// running (nothing if it had finished already).
pub fn fail<T: Send + Sync + 'static>(completion: &Completion<T>) {
    let node = completion.node();
    node.finish(Err(CompletionError::Cancelled { task: node.label() }));
}

/// Spawns `body(outputs)` after `deps` as [`spawn_after`](crate::spawn_after)
/// does, but with a task of no executor: the decrement that releases it
/// calls `released`, then runs the task at once, on the releasing thread
/// (where a worker would queue it next in line). Its completion finishes
/// when the task has run, or fails without it.
pub fn spawn_after<D, F, Fut>(
    deps: D,
    body: F,
    released: impl Fn() + Send + Sync + 'static,
) -> Completion<Fut::Output>
where
    D: Dependencies,
    F: FnOnce(D::Outputs) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Send + Sync + 'static,
{
    let bare = Bare(Arc::new(released));
    Completion::new(spawn_after_on(&bare, deps.hold(), body))
}

/// Builds tasks of no executor, which a release hands to the callback and
/// then runs.
struct Bare(Arc<dyn Fn() + Send + Sync>);

impl Target for Bare {
    fn name(&self) -> Option<Arc<str>> {
        None
    }

    /// A task of no executor has no registry to park in.
    fn build<T, F>(
        &self,
        node: &Arc<Node<T>>,
        _parks: bool,
        future: impl FnOnce(Parked) -> F,
    ) -> (Runnable, RawTask<()>, Watch)
    where
        T: Send + Sync + 'static,
        F: Future<Output = Result<T, Missing>> + Send + 'static,
    {
        let released = self.0.clone();
        let (unstarted, task) = build_bare(node, future(Parked::NONE), move |task| {
            released();
            task.run();
        });
        (unstarted, task, None)
    }

    fn is_shutting_down(&self) -> bool {
        false
    }
}
