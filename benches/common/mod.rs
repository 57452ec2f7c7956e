//! Pieces shared by the bench binaries: the [`Rt`] trait that puts every async executor under
//! test behind one interface, so each benchmark shape is written once, plus small helpers.

// Each bench binary includes this module and uses a different subset of it.
#![allow(dead_code)]

pub mod alloc;
mod async_executor_rt;
pub mod dag;
mod fastexec_rt;
pub mod floor;
mod tokio_rt;

// Each bench binary uses a different subset of the executors.
#[allow(unused_imports)]
pub use async_executor_rt::{AsyncEx, DetachAll, StaticEx};
pub use fastexec_rt::Fastexec;
pub use tokio_rt::Tokio;

use std::fmt::Debug;
use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// An async executor with a fixed number of worker threads.
///
/// A task that spawns more tasks carries the executor's [`Here`](Rt::Here), not a clone of the
/// `Rt`: each executor spawns from inside its own tasks the way its users write it.
pub trait Rt: Clone + Send + Sync + 'static {
    /// Name of the executor in benchmark ids and reports.
    const NAME: &'static str;

    /// Awaits a spawned task's output; a failed task panics the awaiting bench.
    type Handle<T: Send + 'static>: Future<Output = T> + Send + 'static;

    /// Builds the executor with `threads` workers; done once per benchmark, never timed.
    fn start(threads: usize) -> Self;

    fn threads(&self) -> usize;

    fn spawn<F>(&self, fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;

    /// Fire-and-forget spawn. Dropping the handle detaches it on most executors; those whose
    /// handle cancels on drop override this.
    fn detach<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        drop(self.spawn(fut));
    }

    /// What one of this executor's tasks carries to spawn more tasks on it, as the executor's
    /// users write it: nothing where the executor offers a spawn for code running on it
    /// (`tokio::spawn`, `fastexec::spawn`), a handle where it does not (async-executor: an
    /// `Arc` clone for `Executor`, a copied reference for the leaked `StaticExecutor`).
    type Here: Clone + Send + Sync + 'static;

    /// The [`Here`](Rt::Here) to move into a task that will spawn.
    fn here(&self) -> Self::Here;

    /// Spawns from inside one of this executor's tasks (only there: an executor whose `Here`
    /// is empty finds itself through the running task).
    fn spawn_here<F>(here: &Self::Here, fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;

    /// Fire-and-forget [`spawn_here`](Rt::spawn_here).
    fn detach_here<F>(here: &Self::Here, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        drop(Self::spawn_here(here, fut));
    }

    /// Runs `fut` to completion on the calling thread.
    fn block_on<F: Future>(&self, fut: F) -> F::Output;

    /// The executor's own way to yield, as its users would write it.
    fn yield_now() -> impl Future<Output = ()> + Send;

    /// Stops the workers. Tasks still holding clones must have finished.
    fn shutdown(self);
}

/// Turns a `JoinHandle` whose output is a `Result` into one that yields the task's value, so
/// tokio's and fastexec's handles fit [`Rt::Handle`] at no cost (a `Map` would store a fn
/// pointer in every handle and skew the memory bench).
pub struct Joined<H>(pub H);

impl<H, T, E> Future for Joined<H>
where
    H: Future<Output = Result<T, E>> + Unpin,
    E: Debug,
{
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|res| res.expect("benchmark task failed"))
    }
}

/// Takes back the last reference to a runtime so it is dropped on the calling thread: a
/// runtime's drop joins its workers, which must not happen on one of those workers, and a
/// worker may still be dropping a finished task that held a clone.
pub fn wait_unique<T>(mut arc: Arc<T>) -> T {
    let deadline = Instant::now() + STUCK;
    loop {
        match Arc::try_unwrap(arc) {
            Ok(inner) => return inner,
            Err(shared) => arc = shared,
        }
        assert!(
            Instant::now() < deadline,
            "runtime still referenced by a task"
        );
        std::thread::yield_now();
    }
}

/// How long a bench iteration may wait before it is declared broken instead of hanging.
pub const STUCK: Duration = Duration::from_secs(60);

/// Completion signal for detached tasks: the task that counts down to zero wakes the waiter.
/// A blocking latch works the same for every executor and for rayon.
pub struct CountDown {
    left: AtomicUsize,
    done: Mutex<bool>,
    wake: Condvar,
}

impl CountDown {
    pub fn new(count: usize) -> Arc<Self> {
        Arc::new(CountDown {
            left: AtomicUsize::new(count),
            done: Mutex::new(count == 0),
            wake: Condvar::new(),
        })
    }

    /// A latch for a `static`, counted down by tasks that borrow it: no reference count per
    /// task, so each task pays one atomic operation to signal, as a borrowing rayon closure
    /// does, and no two more on the same cache line (a clone and a drop of an `Arc`). Arm it
    /// with [`arm`](Self::arm) before each run.
    pub const fn unarmed() -> Self {
        CountDown {
            left: AtomicUsize::new(0),
            done: Mutex::new(true),
            wake: Condvar::new(),
        }
    }

    /// Sets a `static` latch to `count` for a new run and returns it. Runs that share one latch
    /// must not overlap: each waits for its latch before the next arms it. (The last task of
    /// the previous run may still be notifying the condition variable; a spurious wake-up is
    /// harmless, as [`wait`](Self::wait) re-checks its flag.)
    pub fn arm(&'static self, count: usize) -> &'static Self {
        // Relaxed: the tasks that count down are spawned after this, and spawning publishes
        // the store to the thread that runs them.
        self.left.store(count, Ordering::Relaxed);
        *self.done.lock().unwrap() = count == 0;
        self
    }

    pub fn count_down(&self) {
        let before = self.left.fetch_sub(1, Ordering::AcqRel);
        assert!(before > 0, "counted down more times than tasks were posted");
        if before == 1 {
            *self.done.lock().unwrap() = true;
            self.wake.notify_all();
        }
    }

    /// Blocks until the count reaches zero; panics after [`STUCK`] so a lost task fails the
    /// bench instead of hanging it.
    pub fn wait(&self) {
        let done = self.done.lock().unwrap();
        let (done, timeout) = self.wake.wait_timeout_while(done, STUCK, |d| !*d).unwrap();
        assert!(*done && !timeout.timed_out(), "tasks did not all run");
    }
}

/// About 20 ns of work the optimiser cannot remove: the body of a "tiny" task. Sixteen rounds
/// of xor-shift-multiply take ~23 ns as a dependent chain on the 2-core bench machines (~11 ns
/// when calls overlap). A plain multiply-add would not do: LLVM folds repeated affine steps
/// into one.
pub fn tiny_work(seed: u64) -> u64 {
    let mut x = black_box(seed);
    for _ in 0..16 {
        x = (x ^ (x >> 31)).wrapping_mul(0x5851_F42D_4C95_7F2D);
    }
    black_box(x)
}
