use super::{wait_unique, Joined, Rt};
use fastexec::Executor;
use std::future::Future;
use std::sync::Arc;

/// A fastexec `Executor` with `threads` workers.
#[derive(Clone)]
pub struct Fastexec(Arc<Executor>);

impl Fastexec {
    /// The executor itself, for benches of fastexec-only APIs.
    pub fn executor(&self) -> &Executor {
        &self.0
    }
}

impl Rt for Fastexec {
    const NAME: &'static str = "fastexec";
    type Handle<T: Send + 'static> = Joined<fastexec::JoinHandle<T>>;

    fn start(threads: usize) -> Self {
        let ex = Executor::builder()
            .threads(threads)
            .thread_name("fastexec-bench")
            .build()
            .expect("cannot start fastexec");
        Fastexec(Arc::new(ex))
    }

    fn threads(&self) -> usize {
        self.0.threads()
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
        Joined(fastexec::spawn(fut))
    }

    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        self.0.block_on(fut)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        fastexec::yield_now()
    }

    fn shutdown(self) {
        drop(wait_unique(self.0));
    }
}
