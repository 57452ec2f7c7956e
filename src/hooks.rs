//! Callbacks on worker-thread start and stop and on task spawn and finish,
//! and the [`TaskMeta`] they are given.
//!
//! # Cost
//!
//! The hooks are fixed when the executor is built. With no task hook, no
//! latency histogram and the work-stealing scheduler, the default spawn path
//! pays one test of a `bool` the executor computed at build time (always the
//! same, so always predicted). With a task hook, every task goes through the
//! decorated spawn path (`task/builder.rs`): it is given a [`TaskId`] (one
//! `fetch_add` on a process-wide counter), the spawn hook runs on the
//! spawning thread before the task is queued, and the finish hook runs on
//! the thread that drops the task's future: after its last poll, or when it
//! is aborted, cancelled or dropped with the executor. Each hook therefore
//! runs exactly once per task, if the task is not leaked.
//!
//! Hooks run inline on executor threads: keep them short, and do not panic
//! in them. A panic in a thread hook is caught, and the panic hook reports
//! it: the worker goes on. The finish hook runs as part of dropping the
//! task's future, so a panic in it is a panic in that future's destructor:
//! caught, and a task that had completed reports it as its panic (its
//! output is lost); an aborted or cancelled one stays cancelled.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// A task's number, unique in the process. Allocated only for tasks that
/// need one: named tasks, tasks of an executor with task hooks, and tasks
/// with a [`Completion`](crate::Completion), whose
/// [`TaskLabel`](crate::deps::TaskLabel) shows the same number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(NonZeroU64);

impl TaskId {
    /// A fresh id.
    #[inline]
    pub(crate) fn next() -> TaskId {
        // std's atomic, not the loom shim's: a process-wide static, and
        // Relaxed because uniqueness needs only the RMW's atomicity.
        static NEXT: AtomicU64 = AtomicU64::new(1);
        TaskId(NonZeroU64::new(NEXT.fetch_add(1, Relaxed)).expect("task ids exhausted"))
    }

    /// The id as a number.
    pub fn get(self) -> u64 {
        self.0.get()
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task#{}", self.0)
    }
}

/// What the task hooks and the tracing span know about a task.
#[derive(Debug, Clone)]
pub struct TaskMeta {
    id: TaskId,
    name: Option<Arc<str>>,
}

impl TaskMeta {
    pub(crate) fn new(id: TaskId, name: Option<Arc<str>>) -> TaskMeta {
        TaskMeta { id, name }
    }

    /// The task's unique id.
    pub fn id(&self) -> TaskId {
        self.id
    }

    /// The name given with [`task::Builder::name`](crate::task::Builder::name).
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// A thread hook.
pub(crate) type ThreadHook = Arc<dyn Fn() + Send + Sync>;
/// A task hook.
pub(crate) type TaskHook = Arc<dyn Fn(&TaskMeta) + Send + Sync>;

/// The hooks of one executor.
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) thread_start: Option<ThreadHook>,
    pub(crate) thread_stop: Option<ThreadHook>,
    pub(crate) task_spawn: Option<TaskHook>,
    pub(crate) task_finish: Option<TaskHook>,
}

impl Hooks {
    /// Whether tasks need a [`TaskMeta`] for a hook.
    pub(crate) fn on_tasks(&self) -> bool {
        self.task_spawn.is_some() || self.task_finish.is_some()
    }

    /// Runs the start hook, catching a panic: the panic hook has reported
    /// it, and the worker goes on. (A worker that died here would still be
    /// counted as awake, and the tasks queued for it would wait for ever.)
    pub(crate) fn thread_started(&self) {
        if let Some(hook) = &self.thread_start {
            run_caught(&**hook);
        }
    }

    /// Runs the stop hook, catching a panic as [`thread_started`](Self::thread_started) does.
    pub(crate) fn thread_stopping(&self) {
        if let Some(hook) = &self.thread_stop {
            run_caught(&**hook);
        }
    }

    pub(crate) fn task_spawned(&self, meta: &TaskMeta) {
        if let Some(hook) = &self.task_spawn {
            hook(meta);
        }
    }
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("thread_start", &self.thread_start.is_some())
            .field("thread_stop", &self.thread_stop.is_some())
            .field("task_spawn", &self.task_spawn.is_some())
            .field("task_finish", &self.task_finish.is_some())
            .finish()
    }
}

/// Runs the finish hook when the task's future is dropped.
pub(crate) struct FinishGuard {
    pub(crate) meta: TaskMeta,
    pub(crate) hook: TaskHook,
}

impl Drop for FinishGuard {
    fn drop(&mut self) {
        (self.hook)(&self.meta);
    }
}

/// Calls a thread hook; a panic from it (or from its payload's drop) stops
/// there.
fn run_caught(hook: &(dyn Fn() + Send + Sync)) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(hook)) {
        crate::task::drop_panic(payload);
    }
}
