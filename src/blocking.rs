//! An elastic pool of threads for blocking work, so that executor workers
//! never block.
//!
//! [`BlockingPool`] starts a thread when a job arrives and no thread is
//! idle, up to `max_threads`; a thread that finds no work for `keep_alive`
//! exits. Jobs run in submission order. A job's panic is caught and becomes
//! its result, so it never kills a pool thread.
//!
//! [`BlockingPool::shutdown`] (also run on drop) **runs the jobs already
//! queued**, then joins every thread; jobs submitted after it are cancelled
//! (dropped unrun: a panic in the destructor of what such a job captured is
//! caught, and reported only by the panic hook).
//! Blocking jobs usually have side effects (a file written, a row
//! committed), and silently dropping them would be the worse surprise.
//!
//! # Shutdown protocol
//!
//! Under the lock, the first call sets `shutdown` (from then on `submit`
//! cancels new jobs and no thread starts), wakes the idle threads and takes
//! every join handle; it joins them outside the lock. A thread leaves its
//! loop only with an empty queue, so once every thread has left, every job
//! queued before the flag was set has run. A later or concurrent call finds
//! no handle to join, so it waits on `exited` until no thread is live and
//! no call is still joining (`joining`), which both change under the lock
//! with a `notify_all` after. A call made on one of the pool's own threads
//! (from inside a job) waits for nothing beyond the handles it took: its
//! own thread cannot leave while it waits, and two such calls on two pool
//! threads would each wait for the other.
//!
//! The pool uses `std`'s locks directly, not `crate::sync`: it needs timed
//! waits, which loom does not model, and no loom model runs it.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{ready, Context, Poll};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use async_task::{FallibleTask, Runnable, Task};

use crate::task::TaskOutput;

/// The payload of a panic, as `std::panic::catch_unwind` returns it.
pub type PanicPayload = Box<dyn Any + Send + 'static>;

/// Why a [`BlockingTask`] produced no value.
#[derive(Debug, thiserror::Error)]
pub enum BlockingError {
    /// The job panicked; the payload is the panic's.
    #[error("the blocking job panicked")]
    Panicked(PanicPayload),
    /// The pool shut down before the job started.
    #[error("the blocking pool shut down before the job ran")]
    Cancelled,
}

/// A pool of at most `max_threads` threads that run blocking closures.
///
/// ```
/// use std::time::Duration;
/// use fastexec::blocking::BlockingPool;
///
/// let pool = BlockingPool::new(4, Duration::from_secs(10), "blocking");
/// let job = pool.spawn(|| std::fs::metadata(".").is_ok());
/// assert!(fastexec::block_on(job).unwrap());
/// pool.shutdown();
/// assert_eq!(pool.live_threads(), 0);
/// ```
pub struct BlockingPool {
    shared: Arc<Shared>,
}

/// What the pool handle, its threads and its tasks' schedule functions share.
struct Shared {
    state: Mutex<State>,
    /// Signalled when work arrives or the pool shuts down.
    work_ready: Condvar,
    /// Signalled when a thread leaves its loop or a shutdown call has
    /// joined its handles.
    exited: Condvar,
    max_threads: usize,
    keep_alive: Duration,
    name_prefix: String,
}

struct State {
    queue: VecDeque<Runnable>,
    /// Threads started and not yet exited.
    live: usize,
    /// Shutdown calls joining the handles they took.
    joining: usize,
    /// Threads waiting for work.
    idle: usize,
    /// Wake-ups sent to idle threads and not yet taken: a push wakes an
    /// idle thread only if one is not already on its way.
    wakeups: usize,
    shutdown: bool,
    /// Join handles of the live threads, by thread number.
    threads: HashMap<usize, JoinHandle<()>>,
    /// The handle of the last thread that exited on its own; the next one
    /// to exit (or `shutdown`) joins it, so exited threads do not pile up.
    last_exited: Option<JoinHandle<()>>,
    next_thread_number: usize,
}

impl BlockingPool {
    /// A pool with no threads yet, which will start up to `max_threads`,
    /// each named `{name_prefix}-{n}` and exiting after `keep_alive` idle.
    ///
    /// # Panics
    ///
    /// If `max_threads` is zero, or if `name_prefix` holds a NUL (no
    /// thread can have such a name: said here, rather than by the first
    /// job's spawn).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let pool = fastexec::blocking::BlockingPool::new(2, Duration::from_millis(100), "io");
    /// assert_eq!(pool.max_threads(), 2);
    /// assert_eq!(pool.live_threads(), 0);
    /// ```
    pub fn new(max_threads: usize, keep_alive: Duration, name_prefix: impl Into<String>) -> Self {
        assert!(
            max_threads > 0,
            "fastexec: a blocking pool needs at least one thread"
        );
        let name_prefix = name_prefix.into();
        assert!(
            !name_prefix.contains('\0'),
            "fastexec: a thread name cannot hold a NUL: {name_prefix:?}"
        );
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    live: 0,
                    joining: 0,
                    idle: 0,
                    wakeups: 0,
                    shutdown: false,
                    threads: HashMap::new(),
                    last_exited: None,
                    next_thread_number: 0,
                }),
                work_ready: Condvar::new(),
                exited: Condvar::new(),
                max_threads,
                keep_alive,
                name_prefix,
            }),
        }
    }

    /// Runs `job` on a pool thread; the returned future gives its value.
    ///
    /// Dropping the [`BlockingTask`] detaches the job: it still runs.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fastexec::blocking::{BlockingError, BlockingPool};
    ///
    /// let pool = BlockingPool::new(1, Duration::from_secs(1), "demo");
    /// assert_eq!(fastexec::block_on(pool.spawn(|| 6 * 7)).unwrap(), 42);
    /// let failed = fastexec::block_on(pool.spawn(|| -> u8 { panic!("boom") }));
    /// assert!(matches!(failed, Err(BlockingError::Panicked(_))));
    /// ```
    pub fn spawn<F, T>(&self, job: F) -> BlockingTask<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        // The value and the panic in wrappers that catch a panic of their
        // destructor: a detached job's are dropped by async-task under its
        // abort-on-panic guard.
        let task = self.spawn_task(move || Ok(TaskOutput::new(job())), TaskOutput::new);
        BlockingTask {
            task: Some(task.fallible()),
        }
    }

    /// Runs `job` on a pool thread and returns the raw `async_task` handle,
    /// whose output is the job's value, the failure it returned, or its
    /// panic. Dropping the handle cancels the job if it has not started.
    /// The task is cancelled (never run) if the pool has shut down, or if
    /// no thread exists and none can be started.
    pub(crate) fn spawn_task<F, T, E>(
        &self,
        job: F,
        on_panic: fn(PanicPayload) -> E,
    ) -> Task<Result<T, E>>
    where
        F: FnOnce() -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: Send + 'static,
    {
        // Weak: a queued task must not keep the pool alive.
        let shared = Arc::downgrade(&self.shared);
        let schedule = move |runnable: Runnable| Shared::submit(&shared, runnable);
        // The job is dropped unrun if the pool has shut down: async-task
        // drops the future under an abort-on-panic guard, so the job's own
        // drop catches a panic of what it captured.
        let job = DropCaught(Some(job));
        let (runnable, task) = async_task::spawn(
            async move {
                catch_unwind(AssertUnwindSafe(move || job.run()))
                    .map_err(on_panic)
                    .and_then(|outcome| outcome)
            },
            schedule,
        );
        runnable.schedule();
        task
    }

    /// How many pool threads are running (busy or idle).
    pub fn live_threads(&self) -> usize {
        self.shared.lock().live
    }

    /// The most threads the pool runs at once.
    pub fn max_threads(&self) -> usize {
        self.shared.max_threads
    }

    /// Stops accepting jobs, lets the threads run the jobs already queued,
    /// and joins them. Idempotent: a call made while another is under way
    /// also returns only once the queued jobs have run and every thread
    /// has been joined.
    ///
    /// Called from a pool thread (inside a job), it cannot wait for its own
    /// thread: it joins every other thread, unless another shutdown call is
    /// already joining them, in which case it returns at once (the caller's
    /// thread runs what is still queued after its job returns).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let pool = fastexec::blocking::BlockingPool::new(2, Duration::from_secs(5), "demo");
    /// let done = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..10 {
    ///     let done = done.clone();
    ///     drop(pool.spawn(move || done.fetch_add(1, Ordering::Relaxed)));
    /// }
    /// pool.shutdown();
    /// assert_eq!(done.load(Ordering::Relaxed), 10, "queued jobs ran");
    /// ```
    pub fn shutdown(&self) {
        let handles: Vec<JoinHandle<()>> = {
            let mut state = self.shared.lock();
            state.shutdown = true;
            self.shared.work_ready.notify_all();
            let exited = state.last_exited.take();
            let handles: Vec<_> = state
                .threads
                .drain()
                .map(|(_, handle)| handle)
                .chain(exited)
                .collect();
            if !handles.is_empty() {
                state.joining += 1;
            }
            handles
        };
        let caller = thread::current().id();
        let joined_any = !handles.is_empty();
        for handle in handles {
            if handle.thread().id() != caller {
                // A job's panic is caught inside the job, so a pool thread
                // does not panic; nothing to report.
                let _ = handle.join();
            }
        }
        let mut state = self.shared.lock();
        if joined_any {
            state.joining -= 1;
            self.shared.exited.notify_all();
        }
        if self.shared.is_current_thread() {
            return;
        }
        while state.live > 0 || state.joining > 0 {
            state = self
                .shared
                .exited
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for BlockingPool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl fmt::Debug for BlockingPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingPool")
            .field("max_threads", &self.shared.max_threads)
            .field("keep_alive", &self.shared.keep_alive)
            .field("live_threads", &self.live_threads())
            .finish()
    }
}

thread_local! {
    /// On a pool thread, the [`Shared::id`] of its pool; 0 elsewhere.
    static POOL_OF_THIS_THREAD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Shared {
    /// Tells this pool apart from others while it lives (its address).
    fn id(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Whether the calling thread is one of this pool's threads.
    fn is_current_thread(&self) -> bool {
        POOL_OF_THIS_THREAD.with(|pool| pool.get() == self.id())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Jobs run outside the lock and never panic inside it: the state is
        // consistent even if a lock holder panicked.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The schedule function of every pool task: queue it, and wake or
    /// start a thread for it. Cancels it if the pool is gone or shut down.
    fn submit(shared: &Weak<Shared>, runnable: Runnable) {
        let Some(shared) = shared.upgrade() else {
            return drop(runnable);
        };
        let mut state = shared.lock();
        if state.shutdown {
            drop(state);
            return drop(runnable);
        }
        state.queue.push_back(runnable);
        if state.idle > state.wakeups {
            state.wakeups += 1;
            shared.work_ready.notify_one();
        } else if state.live < shared.max_threads {
            if let Err(unstarted) = Shared::start_thread(&shared, &mut state) {
                drop(state);
                drop(unstarted);
            }
        }
        // Otherwise every thread is busy; one takes the job when it is done.
    }

    /// Starts a pool thread. If that fails and no thread is left to run
    /// the queue, gives back the job just queued so the caller can cancel it.
    fn start_thread(shared: &Arc<Shared>, state: &mut State) -> Result<(), Option<Runnable>> {
        let number = state.next_thread_number;
        let worker = Arc::clone(shared);
        let started = thread::Builder::new()
            .name(format!("{}-{number}", shared.name_prefix))
            .spawn(move || worker.run_thread(number));
        match started {
            Ok(handle) => {
                state.next_thread_number += 1;
                state.live += 1;
                state.threads.insert(number, handle);
                Ok(())
            }
            Err(_) if state.live == 0 => Err(state.queue.pop_back()),
            Err(_) => Ok(()),
        }
    }

    /// The body of a pool thread: run jobs until shutdown, or until idle for
    /// `keep_alive`.
    fn run_thread(&self, number: usize) {
        POOL_OF_THIS_THREAD.with(|pool| pool.set(self.id()));
        let mut state = self.lock();
        loop {
            if let Some(runnable) = state.queue.pop_front() {
                drop(state);
                runnable.run();
                // The value is stored: a `spawn_blocking` job's groups may
                // now count it as finished (`executor.rs`). The release
                // wakes the groups' waiters, whose panics it discards.
                if let Err(panic) = catch_unwind(crate::context::release_finished) {
                    crate::task::drop_panic(panic);
                }
                // Its value dropped too, if detached: a `spawn_blocking`
                // job's executor, kept entered for that, is left.
                if let Err(panic) = catch_unwind(crate::context::release_job_executor) {
                    crate::task::drop_panic(panic);
                }
                state = self.lock();
                continue;
            }
            if state.shutdown {
                break;
            }
            let timed_out;
            (state, timed_out) = self.wait_for_work(state);
            if timed_out && state.queue.is_empty() {
                break;
            }
        }
        state.live -= 1;
        self.exited.notify_all();
        let own_handle = state.threads.remove(&number);
        let previous = std::mem::replace(&mut state.last_exited, own_handle);
        drop(state);
        if let Some(previous) = previous {
            let _ = previous.join();
        }
    }

    /// Waits as an idle thread until woken for work, shutdown, or the end of
    /// the keep-alive; returns whether the keep-alive ran out.
    fn wait_for_work<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
    ) -> (MutexGuard<'a, State>, bool) {
        let give_up_at = Instant::now() + self.keep_alive;
        state.idle += 1;
        let timed_out = loop {
            let remaining = give_up_at.saturating_duration_since(Instant::now());
            state = self
                .work_ready
                .wait_timeout(state, remaining)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            if state.wakeups > 0 {
                state.wakeups -= 1;
                break false;
            }
            if state.shutdown {
                break false;
            }
            if Instant::now() >= give_up_at {
                break true;
            }
        };
        state.idle -= 1;
        (state, timed_out)
    }
}

/// A job, dropped (if it never runs) under `catch_unwind`: a panic from
/// a destructor of what it captured is reported by the panic hook and
/// otherwise discarded, as for a task's future.
struct DropCaught<F>(Option<F>);

impl<F: FnOnce() -> T, T> DropCaught<F> {
    /// Runs the job; what it captured drops inside the call.
    fn run(mut self) -> T {
        let job = self.0.take().expect("a job runs once");
        job()
    }
}

impl<F> Drop for DropCaught<F> {
    fn drop(&mut self) {
        if let Some(job) = self.0.take() {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(move || drop(job))) {
                crate::task::drop_panic(panic);
            }
        }
    }
}

/// The value of a job started by [`BlockingPool::spawn`]: a future of
/// `Result<T, BlockingError>`. Dropping it detaches the job.
#[must_use = "dropping a BlockingTask detaches the job; await it for the value"]
pub struct BlockingTask<T> {
    /// Always `Some` until dropped.
    task: Option<FallibleTask<Result<TaskOutput<T>, TaskOutput<PanicPayload>>>>,
}

impl<T> Future for BlockingTask<T> {
    type Output = Result<T, BlockingError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let task = self
            .task
            .as_mut()
            .expect("a BlockingTask holds its task until dropped");
        Poll::Ready(match ready!(Pin::new(task).poll(cx)) {
            Some(Ok(value)) => Ok(value.into_inner()),
            Some(Err(payload)) => Err(BlockingError::Panicked(payload.into_inner())),
            None => Err(BlockingError::Cancelled),
        })
    }
}

impl<T> Drop for BlockingTask<T> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.detach();
        }
    }
}

impl<T> fmt::Debug for BlockingTask<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingTask").finish_non_exhaustive()
    }
}
