//! Spawning with options (a name, a priority), and the decorated spawn path
//! that every task takes when its executor has task hooks, the latency
//! histogram or the simple scheduler.
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
use crate::hooks::{FinishGuard, TaskMeta};
use crate::metrics::Stamp;
use crate::task::{JoinHandle, Runnable, TaskFuture};
use crate::task_group::Membership;
use crate::worker::Worker;
use crate::Priority;

/// Options for one spawn: a name and a priority.
///
/// A **name** gives the task a [`TaskId`](crate::task::TaskId), shows in
/// the [`TaskMeta`] the executor's hooks receive, and makes every poll of
/// the task run inside a `tracing` span named `task` with fields `name` and
/// `id` (at level INFO). A **priority** is honoured best-effort by the
/// workers (see [`Priority`]); the simple scheduler runs higher priorities
/// first too. Unnamed normal-priority tasks spawned through a builder cost
/// the same as [`spawn`](crate::spawn).
///
/// ```
/// use fastexec::{task, Priority};
///
/// let executor = fastexec::Executor::builder().threads(2).build().unwrap();
/// let handle = task::Builder::new()
///     .name("fetch")
///     .priority(Priority::High)
///     .spawn_on(&executor, async { "page" });
/// assert_eq!(executor.block_on(handle).unwrap(), "page");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Builder {
    name: Option<Arc<str>>,
    priority: Priority,
}

impl Builder {
    /// No name, normal priority.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Names the task (see the type's docs).
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Builder {
        self.name = Some(name.into());
        self
    }

    /// The task's priority (default [`Priority::Normal`]); it keeps it
    /// every time it is woken.
    pub fn priority(mut self, priority: Priority) -> Builder {
        self.priority = priority;
        self
    }

    /// Whether these options need the decorated path at all.
    fn is_plain(&self) -> bool {
        self.name.is_none() && self.priority == Priority::Normal
    }

    /// Spawns `future` as [`spawn`](crate::spawn) does (onto the current
    /// executor, joining the current task groups), with these options.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let membership = context::membership();
        context::with_executor(|shared, worker| match shared {
            Some(shared) => self.spawn_onto(shared, future, membership, worker),
            None => self.spawn_onto(executor::global().shared(), future, membership, None),
        })
    }

    /// Spawns `future` onto `executor`, as [`Executor::spawn`] does, with
    /// these options.
    pub fn spawn_on<F>(&self, executor: &Executor, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_onto(executor.shared(), future, context::membership(), None)
    }

    fn spawn_onto<F>(
        &self,
        shared: &Arc<Shared>,
        future: F,
        membership: Option<Arc<Membership>>,
        worker: Option<&Worker>,
    ) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        if self.is_plain() {
            // The default path, which decorates itself when the executor
            // needs it.
            return shared.spawn(future, membership, worker);
        }
        spawn_decorated(shared, future, membership, worker, self)
    }
}

/// Where a decorated task goes when it is spawned (`woke_itself` is
/// `None`; `worker` is the spawner's, if known) or woken.
fn enqueue(
    shared: &Shared,
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
        return simple.push(task, priority);
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

/// Spawns through the decorated path (module docs).
pub(crate) fn spawn_decorated<F>(
    shared: &Arc<Shared>,
    future: F,
    membership: Option<Arc<Membership>>,
    worker: Option<&Worker>,
    options: &Builder,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let ext = &shared.ext;
    let meta = (options.name.is_some() || ext.hooks.on_tasks())
        .then(|| TaskMeta::new(options.name.clone()));
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
    enqueue(shared, priority, first_stamp.as_deref(), task, worker, None);
    JoinHandle::new(handle)
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
