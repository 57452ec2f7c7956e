//! Spawning with options (a name, a priority, an executor), and the
//! decorated spawn path that every task takes when it has a name or a
//! priority, or its executor has task hooks, the latency histogram or the
//! simple scheduler. The spawns with a completion (`deps`) take the same
//! path through [`Options::spawn`], with their completion's number as the
//! task id.
//!
//! A decorated task's future is the user's future wrapped in [`Decorated`],
//! which, around every poll, records the ready-to-running latency and
//! enters the task's `tracing` span; its drop runs the finish hook. Its
//! schedule function queues it by its priority (see `priority.rs`) or in
//! the simple scheduler. The default `spawn` path never builds any of this:
//! it only tests [`Extensions::decorates`](crate::ext::Extensions).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_task::{ScheduleInfo, WithInfo};

use crate::context;
use crate::executor::{self, Executor, Shared};
use crate::hooks::{FinishGuard, TaskId, TaskMeta};
use crate::metrics::Stamp;
use crate::task::{JoinHandle, RawHandle, RawTask, Runnable, TaskFuture};
use crate::task_group::MembershipArc;
use crate::worker::Worker;
use crate::Priority;

/// Options for spawning one task: a name, a priority and, optionally, an
/// executor other than the current one. The same options apply to the
/// three kinds of spawn: [`spawn`](Builder::spawn) (a [`JoinHandle`]),
/// [`spawn_completion`](Builder::spawn_completion) and
/// [`spawn_after`](Builder::spawn_after) (a
/// [`Completion`](crate::Completion)).
///
/// A **name** gives the task a [`TaskId`](crate::task::TaskId), shows in
/// the [`TaskMeta`] the executor's hooks receive, and makes every poll of
/// the task run inside a `tracing` span named `task` with fields `name` and
/// `id` (at level INFO); a completion's errors show the same name and
/// number in its [`TaskLabel`](crate::deps::TaskLabel). A **priority** is
/// honoured best-effort by the workers (see [`Priority`]); the simple
/// scheduler runs higher priorities first too. Unnamed normal-priority
/// tasks spawned through a builder cost the same as [`spawn`](crate::spawn)
/// (or [`spawn_completion`](crate::spawn_completion), ...).
///
/// A builder is not consumed by a spawn: one builder can spawn many tasks
/// with the same options.
///
/// ```
/// use fastexec::{task, Priority};
///
/// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
/// let handle = task::Builder::new()
///     .name("fetch")
///     .priority(Priority::High)
///     .on(&executor)
///     .spawn(async { "page" });
/// assert_eq!(executor.block_on(handle).unwrap(), "page");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Builder<'a> {
    options: Options,
    executor: Option<&'a Executor>,
}

/// The options that travel with a task (a dependent keeps them until it
/// starts).
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    name: Option<Arc<str>>,
    priority: Priority,
}

impl Builder<'static> {
    /// No name, normal priority, the current executor.
    pub fn new() -> Builder<'static> {
        Builder::default()
    }
}

impl<'a> Builder<'a> {
    /// Names the task (see the type's docs).
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Builder<'a> {
        self.options.name = Some(name.into());
        self
    }

    /// The task's priority (default [`Priority::Normal`]); it keeps it
    /// every time it is woken.
    pub fn priority(mut self, priority: Priority) -> Builder<'a> {
        self.options.priority = priority;
        self
    }

    /// Spawns onto `executor` instead of the current one (the executor of
    /// the running task or `block_on`, else the global one). The task still
    /// joins the caller's task groups, as with [`Executor::spawn`].
    pub fn on(self, executor: &Executor) -> Builder<'_> {
        Builder {
            options: self.options,
            executor: Some(executor),
        }
    }

    /// Spawns `future` as [`spawn`](crate::spawn) does (joining the current
    /// task groups), with these options.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let membership = context::membership();
        self.with_target(|shared, worker| {
            self.options.spawn(shared, future, membership, worker, None)
        })
    }

    /// The options without the executor.
    pub(crate) fn options(&self) -> &Options {
        &self.options
    }

    /// Runs `f` with the chosen executor, and this thread's worker when it
    /// is known to belong to that executor.
    pub(crate) fn with_target<R>(&self, f: impl FnOnce(&Arc<Shared>, Option<&Worker>) -> R) -> R {
        if let Some(executor) = self.executor {
            return f(executor.shared(), None);
        }
        // As in `spawn`: a worker's task holds its worker outside the
        // thread-local's borrow.
        if let Some(worker) = context::own_worker() {
            return f(worker.shared_arc(), Some(&worker));
        }
        context::with_executor(|shared, worker| match shared {
            Some(shared) => f(shared, worker),
            None => f(executor::global().shared(), None),
        })
    }
}

impl Options {
    /// The task's name, if it has one.
    pub(crate) fn name(&self) -> Option<&Arc<str>> {
        self.name.as_ref()
    }

    /// Spawns `future` onto `shared` with these options. `id` is the
    /// number the task already has (a completion's): its [`TaskMeta`], if
    /// it gets one, carries the same.
    ///
    /// Unnamed normal-priority tasks take the default path, which decorates
    /// itself when the executor needs it; except that a task with an `id`
    /// decorates here, so that its [`TaskMeta`] keeps the id.
    #[inline]
    pub(crate) fn spawn<F>(
        &self,
        shared: &Arc<Shared>,
        future: F,
        membership: Option<MembershipArc>,
        worker: Option<&Worker>,
        id: Option<TaskId>,
    ) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        if self.takes_default_path(shared, id) {
            return shared.spawn(future, membership, worker);
        }
        spawn_decorated(shared, future, membership, worker, self, id)
    }

    /// Whether a task with these options and `id` takes the default spawn
    /// path (which decorates itself when the executor needs it).
    fn takes_default_path(&self, shared: &Shared, id: Option<TaskId>) -> bool {
        let plain = self.name.is_none() && self.priority == Priority::Normal;
        plain && (id.is_none() || !shared.ext.decorates())
    }

    /// Builds `future` into a task of `shared` with these options, counted
    /// as spawned but not queued (see [`Options::spawn`] for `id`).
    pub(crate) fn build<F>(
        &self,
        shared: &Arc<Shared>,
        future: F,
        membership: Option<MembershipArc>,
        worker: Option<&Worker>,
        id: Option<TaskId>,
    ) -> (Runnable, RawTask<F::Output>)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        if self.takes_default_path(shared, id) {
            return shared.build(future, membership, worker);
        }
        build_decorated(shared, future, membership, worker, self, id)
    }
}

/// Where a decorated task goes when it is spawned (`woke_itself` is
/// `None`; `worker` is the spawner's, if known) or woken.
fn enqueue(
    shared: &Arc<Shared>,
    priority: Priority,
    stamp: Option<&Stamp>,
    task: Runnable,
    worker: Option<&Worker>,
    woke_itself: Option<bool>,
) {
    if let Some(stamp) = stamp {
        stamp.scheduled();
    }
    if let Some(simple) = &shared.ext.simple {
        if let Some(refused) = simple.push(task, priority) {
            drop_after_shutdown(shared, refused);
        }
        return;
    }
    match (priority, woke_itself) {
        (Priority::Normal, Some(woke_itself)) => shared.schedule_woken(task, woke_itself),
        (Priority::Normal, None) => match worker {
            Some(worker) => worker.push_new(task),
            None => shared.schedule_new(task),
        },
        (priority, _) => {
            shared.ext.priority.push(task, priority);
            shared.notify_one();
        }
    }
}

/// Drops a task the shut-down simple scheduler refused, with its executor
/// current on this thread (a worker of it already has it): a spawn from the
/// future's destructor must join this executor, which drops it too, not
/// this thread's own (the global one, say), where it would outlive this
/// one. Shutdown only.
#[cold]
#[inline(never)]
fn drop_after_shutdown(shared: &Arc<Shared>, task: Runnable) {
    let _executor =
        (!context::is_worker_of(shared.id())).then(|| context::enter_executor(shared.clone()));
    drop(task);
}

/// Spawns through the decorated path (module docs).
pub(crate) fn spawn_decorated<F>(
    shared: &Arc<Shared>,
    future: F,
    membership: Option<MembershipArc>,
    worker: Option<&Worker>,
    options: &Options,
    id: Option<TaskId>,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (task, handle, stamp) = decorate(shared, future, membership, worker, options, id);
    enqueue(
        shared,
        options.priority,
        stamp.as_deref(),
        task,
        worker,
        None,
    );
    JoinHandle::new(handle)
}

/// Builds a decorated task without queueing it (see
/// [`Shared::build`](crate::executor::Shared::build)).
pub(crate) fn build_decorated<F>(
    shared: &Arc<Shared>,
    future: F,
    membership: Option<MembershipArc>,
    worker: Option<&Worker>,
    options: &Options,
    id: Option<TaskId>,
) -> (Runnable, RawTask<F::Output>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (task, handle, _) = decorate(shared, future, membership, worker, options, id);
    (task, handle.fallible())
}

/// The decorated task of `future`, counted as spawned, with its latency
/// stamp if the executor keeps a histogram.
fn decorate<F>(
    shared: &Arc<Shared>,
    future: F,
    membership: Option<MembershipArc>,
    worker: Option<&Worker>,
    options: &Options,
    id: Option<TaskId>,
) -> (Runnable, RawHandle<F::Output>, Option<Arc<Stamp>>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let ext = &shared.ext;
    let meta = (options.name.is_some() || ext.hooks.on_tasks())
        .then(|| TaskMeta::new(id.unwrap_or_else(TaskId::next), options.name.clone()));
    let span = meta.as_ref().and_then(|meta| {
        let name = meta.name()?;
        Some(tracing::info_span!("task", name, id = meta.id().get()))
    });
    if let Some(meta) = &meta {
        ext.hooks.task_spawned(meta);
    }
    let finish = ext.hooks.task_finish.clone().and_then(|hook| {
        Some(FinishGuard {
            meta: meta.clone()?,
            hook,
        })
    });
    let stamp = ext
        .latency
        .as_ref()
        .map(|r| Arc::new(Stamp::new(r.clone())));
    let future = TaskFuture::new(
        Decorated {
            future,
            span,
            stamp: stamp.clone(),
            _finish: finish,
        },
        membership,
    );
    let priority = options.priority;
    let (target, first_stamp) = (shared.clone(), stamp.clone());
    let schedule = WithInfo(move |task: Runnable, info: ScheduleInfo| {
        let woke_itself = Some(info.woken_while_running);
        enqueue(&target, priority, stamp.as_deref(), task, None, woke_itself)
    });
    let (task, handle) = async_task::Builder::new().spawn(move |()| future, schedule);
    ext.counters.count_spawn(worker);
    (task, handle, first_stamp)
}

pin_project_lite::pin_project! {
    /// The user's future plus the per-task extras (module docs).
    struct Decorated<F> {
        #[pin]
        future: F,
        span: Option<tracing::Span>,
        stamp: Option<Arc<Stamp>>,
        // Dropped with the future: runs the finish hook.
        _finish: Option<FinishGuard>,
    }
}

impl<F: Future> Future for Decorated<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        if let Some(stamp) = this.stamp {
            stamp.polled();
        }
        let _entered = this.span.as_ref().map(tracing::Span::enter);
        this.future.poll(cx)
    }
}
