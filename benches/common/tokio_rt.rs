use super::{wait_unique, Joined, Rt};
use std::future::Future;
use std::sync::Arc;
use tokio::runtime::{Builder, Runtime};

/// tokio's multi-thread runtime with `threads` workers.
///
/// No I/O or time driver: the shapes need neither, and without them idle workers park on a
/// condvar, which is tokio's cheapest configuration.
#[derive(Clone)]
pub struct Tokio(Arc<Runtime>);

impl Rt for Tokio {
    const NAME: &'static str = "tokio";
    type Handle<T: Send + 'static> = Joined<tokio::task::JoinHandle<T>>;

    fn start(threads: usize) -> Self {
        let rt = Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("tokio-bench")
            .build()
            .expect("cannot start tokio");
        Tokio(Arc::new(rt))
    }

    fn threads(&self) -> usize {
        self.0.metrics().num_workers()
    }

    fn spawn<F>(&self, fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Joined(self.0.spawn(fut))
    }

    type Here = ();

    fn here(&self) -> Self::Here {}

    fn spawn_here<F>(_: &(), fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Joined(tokio::spawn(fut))
    }

    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        self.0.block_on(fut)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }

    fn shutdown(self) {
        drop(wait_unique(self.0));
    }
}
