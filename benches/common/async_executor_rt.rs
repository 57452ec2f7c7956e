//! async-executor's `Executor` and `StaticExecutor`, each run by `threads` threads blocking on
//! `ex.run(shutdown)` as the crate's docs show.

use super::{wait_unique, Rt};
use async_executor::{Executor, StaticExecutor, Task};
use futures::channel::oneshot;
use futures_lite::future;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// An executor plus the threads that run it.
struct Pool<E> {
    ex: E,
    threads: usize,
    workers: Mutex<Option<Workers>>,
}

impl<E> Pool<E> {
    fn new(ex: E, threads: usize) -> Self {
        let workers = Mutex::new(None);
        Pool {
            ex,
            threads,
            workers,
        }
    }

    /// Starts the threads; `run` blocks one thread on the executor until its receiver fires.
    fn run_with(&self, run: impl Fn(oneshot::Receiver<()>) + Clone + Send + 'static) {
        let (stop, joins) = (0..self.threads)
            .map(|_| {
                let (tx, rx) = oneshot::channel();
                let run = run.clone();
                (tx, std::thread::spawn(move || run(rx)))
            })
            .unzip();
        *self.workers.lock().unwrap() = Some(Workers { stop, joins });
    }

    fn stop(&self) {
        let workers = self.workers.lock().unwrap().take();
        let Workers { stop, joins } = workers.expect("pool stopped twice");
        // Dropping the senders completes every thread's `run` future.
        drop(stop);
        for join in joins {
            join.join().expect("executor thread panicked");
        }
    }
}

struct Workers {
    stop: Vec<oneshot::Sender<()>>,
    joins: Vec<JoinHandle<()>>,
}

/// The [`Rt::Here`] items of an executor with no spawn function of its own for code running on
/// it: its tasks carry the handle itself (for both executors here, as their docs show).
macro_rules! tasks_carry_the_handle {
    () => {
        type Here = Self;

        fn here(&self) -> Self {
            Clone::clone(self)
        }

        fn spawn_here<F>(here: &Self, fut: F) -> Task<F::Output>
        where
            F: Future + Send + 'static,
            F::Output: Send + 'static,
        {
            here.spawn(fut)
        }

        fn detach_here<F>(here: &Self, fut: F)
        where
            F: Future<Output = ()> + Send + 'static,
        {
            here.detach(fut);
        }
    };
}

/// async-executor's general `Executor`.
#[derive(Clone)]
pub struct AsyncEx(Arc<Pool<Executor<'static>>>);

/// async-executor's leaked `StaticExecutor`, which skips the registry of live tasks.
#[derive(Clone, Copy)]
pub struct StaticEx(&'static Pool<StaticExecutor>);

impl AsyncEx {
    /// The executor itself, for benches of its batch API (`Executor::spawn_many`).
    pub fn executor(&self) -> &Executor<'static> {
        &self.0.ex
    }
}

/// A collection for `Executor::spawn_many` that detaches each task as it is added: the
/// fire-and-forget batch, as async-executor's users can write it (it has no `detach_many`).
pub struct DetachAll;

impl<T> Extend<Task<T>> for DetachAll {
    fn extend<I: IntoIterator<Item = Task<T>>>(&mut self, tasks: I) {
        tasks.into_iter().for_each(Task::detach);
    }
}

impl Rt for AsyncEx {
    const NAME: &'static str = "async-executor";
    type Handle<T: Send + 'static> = Task<T>;

    fn start(threads: usize) -> Self {
        let pool = Arc::new(Pool::new(Executor::new(), threads));
        let runner = pool.clone();
        pool.run_with(move |stop| {
            // The stop channel only ever resolves as `Canceled`; either way the thread ends.
            let _ = future::block_on(runner.ex.run(stop));
        });
        AsyncEx(pool)
    }

    fn threads(&self) -> usize {
        self.0.threads
    }

    fn spawn<F>(&self, fut: F) -> Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.0.ex.spawn(fut)
    }

    fn detach<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.0.ex.spawn(fut).detach();
    }

    tasks_carry_the_handle!();

    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        future::block_on(fut)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        future::yield_now()
    }

    fn shutdown(self) {
        self.0.stop();
        drop(wait_unique(self.0));
    }
}

impl Rt for StaticEx {
    const NAME: &'static str = "static-executor";
    type Handle<T: Send + 'static> = Task<T>;

    fn start(threads: usize) -> Self {
        // Leaked on purpose: that is how a StaticExecutor is meant to be used.
        let pool: &'static Pool<_> = Box::leak(Box::new(Pool::new(StaticExecutor::new(), threads)));
        pool.run_with(move |stop| {
            let _ = future::block_on(pool.ex.run(stop));
        });
        StaticEx(pool)
    }

    fn threads(&self) -> usize {
        self.0.threads
    }

    fn spawn<F>(&self, fut: F) -> Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.0.ex.spawn(fut)
    }

    fn detach<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.0.ex.spawn(fut).detach();
    }

    tasks_carry_the_handle!();

    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        future::block_on(fut)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        future::yield_now()
    }

    fn shutdown(self) {
        self.0.stop();
    }
}
