//! Task priorities: two extra queues the workers consult around the normal
//! search order.
//!
//! # Protocol
//!
//! A task spawned with [`Priority::High`] or [`Priority::Low`] is queued,
//! when spawned and every time it is woken, in the executor-wide queue of
//! its priority (FIFO, `concurrent-queue`), never in a worker's ring or
//! LIFO slot; then one parked worker is notified, as for the injector.
//! Normal tasks take the usual paths and never touch these queues.
//!
//! * **High**: every time a worker looks for its next task it first checks
//!   a counter of queued high tasks (one `Relaxed` load of a line that only
//!   priority spawns write) and, if it is not zero, pops the high queue
//!   before its LIFO slot and its ring.
//! * **Low**: a worker pops the low queue only after its ring, the injector
//!   and a steal attempt all came back empty, i.e. when it sees no normal
//!   work. The same fallback also pops the high queue without looking at the
//!   counter, so a stale counter can delay a high task but never strand it.
//! * **Parking**: [`PriorityQueues::has_work`] is part of the last
//!   searcher's final look at every queue before it parks (the idle
//!   protocol in `idle.rs`), so a task pushed here while workers go to sleep
//!   wakes one, exactly as a push to the injector does.
//!
//! Best effort, by design: no preemption (a running low task runs its poll
//! to the end), no global order across workers (another worker may be in
//! the middle of its ring while a high task waits for the next worker that
//! looks), and the `Relaxed` counter may be read stale for a moment.

use concurrent_queue::{ConcurrentQueue, PushError};

use crate::metrics::CachePadded;
use crate::sync::{AtomicUsize, Ordering::Relaxed};
use crate::task::Runnable;

/// How urgently a task should run, honoured best-effort by the workers.
///
/// Set with [`task::Builder::priority`](crate::task::Builder::priority); a
/// task keeps its priority every time it is woken.
///
/// * **High** tasks wait in an executor-wide FIFO queue that every worker
///   checks first whenever it looks for its next task, so a high task is
///   taken before normal work by the next worker that looks.
/// * **Normal** tasks (every plain [`spawn`](crate::spawn)) take the usual
///   work-stealing paths and pay nothing for priorities but one load of a
///   counter per task run.
/// * **Low** tasks wait in another executor-wide FIFO queue that a worker
///   looks at only when it sees no normal work: its own queue, the global
///   injector and one attempt at stealing all came back empty.
///
/// Best effort means: no preemption (a running task finishes its poll
/// whatever is queued), no strict global order (each worker decides on its
/// own, so on a busy multi-worker executor a normal task may start on one
/// worker while a high one waits for another worker to look), and a high
/// task queued an instant ago may be missed by a worker's fast check and
/// taken at its next one. There is no aging at this level: a steady stream
/// of high tasks holds normal ones back, and low ones wait as long as normal
/// work is visible. The simple scheduler ([`Scheduler::Simple`](crate::Scheduler))
/// honours priorities strictly: it always draws from the highest non-empty
/// priority.
///
/// ```
/// use fastexec::{task, Priority};
///
/// let answer = fastexec::block_on(async {
///     task::Builder::new().priority(Priority::High).spawn(async { 42 }).await
/// });
/// assert_eq!(answer.unwrap(), 42);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// Runs only when a worker sees no normal work (its ring, the
    /// injector and one steal attempt were empty).
    Low,
    /// The default: the usual work-stealing order.
    #[default]
    Normal,
    /// Taken before normal work by the next worker that looks for a task.
    High,
}

/// The executor-wide queues of high and low tasks.
pub(crate) struct PriorityQueues {
    /// High tasks pushed and not yet popped; a hint read on every
    /// `next_task`, so it sits alone on its cache line.
    high_queued: CachePadded<AtomicUsize>,
    high: ConcurrentQueue<Runnable>,
    low: ConcurrentQueue<Runnable>,
}

impl PriorityQueues {
    pub(crate) fn new() -> Self {
        PriorityQueues {
            high_queued: CachePadded(AtomicUsize::new(0)),
            high: ConcurrentQueue::unbounded(),
            low: ConcurrentQueue::unbounded(),
        }
    }

    /// Queues `task` by `priority` (`Normal` counts as high: callers route
    /// normal tasks elsewhere). After shutdown the task is dropped.
    pub(crate) fn push(&self, task: Runnable, priority: crate::Priority) {
        if priority == crate::Priority::Low {
            push_or_drop(&self.low, task);
            return;
        }
        // Relaxed: a hint; incremented before the push so that it is never
        // below the number of visible tasks for long.
        self.high_queued.0.fetch_add(1, Relaxed);
        if !push_or_drop(&self.high, task) {
            // Relaxed: as above; the task was refused, so it never counts.
            self.high_queued.0.fetch_sub(1, Relaxed);
        }
    }

    /// The fast check on every `next_task`: a high task if the hint says
    /// there is one.
    #[inline]
    pub(crate) fn pop_high(&self) -> Option<Runnable> {
        // Relaxed: a hint; `pop_any` is the slow path that does not trust it.
        if self.high_queued.0.load(Relaxed) == 0 {
            return None;
        }
        self.pop_high_queue()
    }

    fn pop_high_queue(&self) -> Option<Runnable> {
        let task = crate::executor::pop_unless_empty(&self.high)?;
        self.high_queued.0.fetch_sub(1, Relaxed);
        Some(task)
    }

    /// The fallback when no normal work is visible: high first, then low.
    pub(crate) fn pop_any(&self) -> Option<Runnable> {
        self.pop_high_queue()
            .or_else(|| crate::executor::pop_unless_empty(&self.low))
    }

    /// Whether either queue holds a task (for the last searcher's look).
    pub(crate) fn has_work(&self) -> bool {
        !self.high.is_empty() || !self.low.is_empty()
    }

    /// Queued tasks: (high, low).
    pub(crate) fn depths(&self) -> (usize, usize) {
        (self.high.len(), self.low.len())
    }

    /// The hint's value (for tests).
    #[cfg(test)]
    fn high_queued(&self) -> usize {
        self.high_queued.0.load(Relaxed)
    }

    /// Drops every queued task, leaving the queues open (executor
    /// shutdown, while wakes from other threads may still arrive).
    pub(crate) fn drain(&self) {
        for queue in [&self.high, &self.low] {
            while self.pop_from(queue).is_some() {}
        }
    }

    /// Drops every queued task and refuses new ones (executor shutdown).
    /// Dropping a task may wake another into either queue: each queue is
    /// drained, closed (later pushes drop their task), and drained again.
    pub(crate) fn close_and_drain(&self) {
        for queue in [&self.high, &self.low] {
            while self.pop_from(queue).is_some() {}
            queue.close();
            while self.pop_from(queue).is_some() {}
        }
    }

    /// Pops `queue` (one of ours), keeping the high hint in step.
    fn pop_from(&self, queue: &ConcurrentQueue<Runnable>) -> Option<Runnable> {
        if std::ptr::eq(queue, &self.high) {
            self.pop_high_queue()
        } else {
            queue.pop().ok()
        }
    }
}

/// Pushes `task`; if `queue` refuses it (closed at shutdown), drops it and
/// returns `false`.
fn push_or_drop(queue: &ConcurrentQueue<Runnable>, task: Runnable) -> bool {
    match queue.push(task) {
        Ok(()) => true,
        Err(PushError::Closed(task) | PushError::Full(task)) => {
            drop(task);
            false
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::Priority;

    fn task() -> Runnable {
        let (runnable, handle) = async_task::spawn(async {}, |_| {});
        handle.detach();
        runnable
    }

    /// A high task refused after shutdown is not counted as queued.
    #[test]
    fn refused_high_task_is_not_counted() {
        let queues = PriorityQueues::new();
        queues.push(task(), Priority::High);
        assert_eq!(queues.high_queued(), 1);
        queues.close_and_drain();
        assert_eq!(queues.high_queued(), 0);
        queues.push(task(), Priority::High);
        assert_eq!(queues.high_queued(), 0);
        assert!(queues.pop_high().is_none());
    }
}
