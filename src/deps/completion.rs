//! The public handle to a task's completion.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::error::{CompletionError, TaskLabel};
use super::node::{Key, Node};

/// A cloneable, awaitable handle to a task's completion.
///
/// Any number of clones may be awaited, each giving the task's output as an
/// `Arc<T>` (so `T` need not be `Clone`), or the [`CompletionError`] saying
/// why there is none: the task panicked, was cancelled, or never ran because
/// a dependency failed. Awaiting a handle again gives the same result. (A
/// `()` output is not stored: every `Completion<()>` awaited on one thread
/// gives that thread's shared `Arc<()>`, so `Arc::ptr_eq` and the reference
/// counts of such outputs say nothing about which completion gave them.)
/// Dependents started with [`spawn_after`](crate::spawn_after) do not await:
/// they are counted and released (see the [module docs](crate::deps)).
///
/// Get one from [`spawn_completion`](crate::spawn_completion),
/// [`spawn_after`](crate::spawn_after) or
/// [`JoinHandle::shared`](crate::JoinHandle::shared). Dropping every handle
/// does not cancel the task; [`abort`](Completion::abort) does.
///
/// ```
/// let (a, b) = fastexec::block_on(async {
///     let answer = fastexec::spawn_completion(async { String::from("forty-two") });
///     let twice = answer.clone();
///     (answer.await.unwrap(), twice.await.unwrap())
/// });
/// assert!(std::sync::Arc::ptr_eq(&a, &b));
/// ```
pub struct Completion<T> {
    /// `None` only inside [`Completion::into_node`], which moves it out
    /// (a type with `Drop` cannot give up a field otherwise).
    node: Option<Arc<Node<T>>>,
    /// This handle's waker slot in the node, while it is being awaited.
    waiter: Option<Key>,
}

impl<T: Send + Sync + 'static> Completion<T> {
    pub(crate) fn new(node: Arc<Node<T>>) -> Self {
        Completion {
            node: Some(node),
            waiter: None,
        }
    }

    pub(crate) fn node(&self) -> &Arc<Node<T>> {
        self.node
            .as_ref()
            .expect("a completion has its node until consumed")
    }

    /// The node, moved out rather than cloned (no reference count touched):
    /// a dependency given by value to `spawn_after`.
    pub(crate) fn into_node(mut self) -> Arc<Node<T>> {
        let node = self.node.take();
        if let (Some(node), Some(key)) = (&node, self.waiter.take()) {
            node.forget_waker(key);
        }
        node.expect("a completion has its node until consumed")
    }

    /// The task's number, unique in the process; errors show it.
    pub fn id(&self) -> u64 {
        self.node().id().get()
    }

    /// The task's number and name.
    pub fn label(&self) -> TaskLabel {
        self.node().label()
    }

    /// Names the task; errors created from now on show the name, among them
    /// the upstream failures of dependents spawned after this call, even if
    /// the task had failed already. A task may fail before this call: its
    /// own error, and those its failure gave the dependents waiting then,
    /// keep the label it had. To be sure the name is in every error, name
    /// it at spawn with [`task::Builder::name`](crate::task::Builder::name).
    ///
    /// ```
    /// let task = fastexec::spawn_completion(async { 1 }).named("one");
    /// assert_eq!(task.label().name(), Some("one"));
    /// ```
    pub fn named(self, name: impl Into<Arc<str>>) -> Self {
        self.node().set_name(name.into());
        self
    }

    /// Whether the task has an outcome (output or error). A task that ran
    /// has dropped its future by then (what it held is released), as for a
    /// [`JoinHandle`](crate::JoinHandle); a dependent that never started
    /// (a dependency failed) drops its body just after, before its
    /// awaiters are woken. Its place in its task groups is let go of a
    /// moment later.
    pub fn is_finished(&self) -> bool {
        self.node().is_finished()
    }

    /// The outcome if the task has finished, without waiting.
    ///
    /// ```
    /// let task = fastexec::spawn_completion(async { 7 });
    /// fastexec::block_on(task.clone()).unwrap();
    /// assert_eq!(*task.try_get().unwrap().unwrap(), 7);
    /// ```
    pub fn try_get(&self) -> Option<Result<Arc<T>, CompletionError>> {
        self.node().outcome()
    }

    /// How many waiter slots the task's completion state holds: the most
    /// dependents and pending awaiters it had at once (a dropped awaiter's
    /// slot is reused), zero once it finished and released them (an awaiter
    /// may see the outcome a moment before). Not part of the stable API:
    /// tests use it to check that dropped awaiters leave nothing behind.
    #[doc(hidden)]
    pub fn waiter_slots(&self) -> usize {
        self.node().waiter_slots()
    }

    /// Cancels the task. A running task's future is dropped (after its
    /// current poll); a dependent that has not started never will; for
    /// [`JoinHandle::shared`](crate::JoinHandle::shared), the task behind
    /// the handle is aborted. Its completion then reports
    /// [`CompletionError::Cancelled`] and its dependents an upstream
    /// failure. No effect if it already finished (for `shared()`, if the
    /// task behind the handle did: the completion reports its outcome).
    ///
    /// ```
    /// let err = fastexec::block_on(async {
    ///     let stuck = fastexec::spawn_completion(std::future::pending::<()>());
    ///     let after = fastexec::spawn_after(stuck.clone(), |_| async {});
    ///     stuck.abort();
    ///     after.await.unwrap_err()
    /// });
    /// assert!(err.failed_dependency().is_some());
    /// ```
    pub fn abort(&self) {
        self.node().abort();
    }
}

impl<T> Clone for Completion<T> {
    fn clone(&self) -> Self {
        Completion {
            node: self.node.clone(),
            waiter: None,
        }
    }
}

impl<T: Send + Sync + 'static> Future for Completion<T> {
    type Output = Result<Arc<T>, CompletionError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let node = this
            .node
            .as_ref()
            .expect("a completion has its node until consumed");
        node.poll_outcome(&mut this.waiter, cx)
    }
}

impl<T> Unpin for Completion<T> {}

impl<T> Drop for Completion<T> {
    fn drop(&mut self) {
        if let Some(key) = self.waiter.take() {
            if let Some(node) = &self.node {
                node.forget_waker(key);
            }
        }
    }
}

impl<T: Send + Sync + 'static> fmt::Debug for Completion<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Completion")
            .field("task", &self.label())
            .field("finished", &self.is_finished())
            .finish()
    }
}
