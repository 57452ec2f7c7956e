//! Helpers shared by the integration tests.
//!
//! Nothing here sleeps to synchronise: waits are on channels, condition
//! variables or barriers, each bounded by [`TIMEOUT`] so that a hang in the
//! executor shows up as a failed test instead of a stuck test run.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod full_ring;
pub mod pause;

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use fastexec::Executor;

/// How much longer a hang guard waits under Miri (`scripts/miri`), which
/// runs a test a thousand or more times slower than a native build, and
/// whose clock is the real one there (it runs with isolation disabled).
const MIRI_SLOWDOWN: u64 = if cfg!(miri) { 40 } else { 1 };

/// How long any single test body may take before it counts as hung.
pub const TIMEOUT: Duration = Duration::from_secs(30 * MIRI_SLOWDOWN);

/// Runs `body` on a fresh thread and returns its result, re-raising its
/// panic; fails the test if `body` has not finished within [`TIMEOUT`].
///
/// On a timeout the body's thread is leaked (it may be stuck forever); the
/// test still fails promptly. Otherwise the thread is joined, which takes
/// no time (it has sent its result): a thread still exiting when the test
/// binary ends is an error under Miri.
pub fn with_timeout<T, F>(body: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let thread = thread::Builder::new()
        .name("test-body".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
            let _ = tx.send(result);
        })
        .expect("spawn test body thread");
    let result = rx.recv_timeout(TIMEOUT);
    if result.is_ok() {
        thread.join().expect("the body's panic was caught");
    }
    match result {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("test body did not finish within {TIMEOUT:?}: executor hang"),
    }
}

/// An executor with `threads` workers.
pub fn executor(threads: usize) -> Executor {
    Executor::builder()
        .threads(threads)
        .build()
        .expect("start executor")
}

/// An executor of the simple scheduler (one thread at a time, in the
/// pseudo-random order `seed` picks), started fresh.
pub fn simple_executor(seed: u64) -> Executor {
    simple_builder(seed).build().expect("start executor")
}

/// [`simple_executor`] built with `threads(threads)`, which the simple
/// scheduler ignores (it always has one thread).
pub fn simple_executor_with_threads(seed: u64, threads: usize) -> Executor {
    simple_builder(seed)
        .threads(threads)
        .build()
        .expect("start executor")
}

fn simple_builder(seed: u64) -> fastexec::Builder {
    Executor::builder()
        .scheduler(fastexec::Scheduler::Simple)
        .seed(seed)
}

/// An executor with `threads` workers (1, 2 or 3; a larger count gets the
/// 3-worker one), started on first use and kept for the test binary's
/// life: property tests run hundreds of cases, which should not each start
/// and join worker threads.
pub fn shared_executor(threads: usize) -> &'static Executor {
    static ONE: OnceLock<Executor> = OnceLock::new();
    static TWO: OnceLock<Executor> = OnceLock::new();
    static THREE: OnceLock<Executor> = OnceLock::new();
    let cell = match threads {
        1 => &ONE,
        2 => &TWO,
        _ => &THREE,
    };
    cell.get_or_init(|| executor(threads.min(3)))
}

/// Spawns on `ex` a task that holds `held` and never finishes, and returns
/// its handle once the task has been polled (so `held` lives in a parked
/// task, not in one still queued).
pub fn spawn_parked<H: Send + 'static>(ex: &Executor, held: H) -> fastexec::JoinHandle<()> {
    let (started_tx, started_rx) = mpsc::channel();
    let handle = ex.spawn(async move {
        let _held = held;
        started_tx.send(()).unwrap();
        std::future::pending::<()>().await;
    });
    started_rx.recv_timeout(TIMEOUT).expect("task started");
    handle
}

/// The text of a panic payload (`&str` or `String`), or a placeholder.
pub fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    }
}

/// A value that spawns a task when dropped, as a future's destructor may:
/// the task holds a guard of `drops` (so its own drop is counted) and
/// counts its polls in `polls`, then parks for good. Tests of an
/// executor's drop put one in a task to check that such a spawn dies with
/// the executor being dropped.
pub struct SpawnOnDrop {
    pub drops: DropCounter,
    pub polls: Arc<AtomicUsize>,
}

impl Drop for SpawnOnDrop {
    fn drop(&mut self) {
        let (guard, polls) = (self.drops.guard(), self.polls.clone());
        fastexec::spawn(async move {
            let _guard = guard;
            polls.fetch_add(1, Ordering::SeqCst);
            std::future::pending::<()>().await;
        })
        .detach();
    }
}

/// Counts drops of the guards it hands out, and lets a thread wait for a
/// given count.
#[derive(Clone, Default)]
pub struct DropCounter {
    inner: Arc<(Mutex<usize>, Condvar)>,
}

/// Increments its [`DropCounter`] when dropped.
pub struct DropGuard {
    counter: DropCounter,
}

impl DropCounter {
    pub fn new() -> Self {
        Self::default()
    }

    /// A guard to move into a future; its drop is counted.
    pub fn guard(&self) -> DropGuard {
        DropGuard {
            counter: self.clone(),
        }
    }

    /// Guards dropped so far.
    pub fn count(&self) -> usize {
        *self.inner.0.lock().unwrap()
    }

    /// Waits until at least `n` guards have been dropped; returns the count
    /// reached (less than `n` only after [`TIMEOUT`]).
    pub fn wait_for(&self, n: usize) -> usize {
        self.wait_for_within(n, TIMEOUT)
    }

    /// Like [`wait_for`](Self::wait_for) with a shorter bound, for checks
    /// that must fail (not time out the whole test) when the drop never
    /// comes.
    pub fn wait_for_within(&self, n: usize, timeout: Duration) -> usize {
        let (lock, cvar) = &*self.inner;
        let guard = lock.lock().unwrap();
        let (guard, _) = cvar
            .wait_timeout_while(guard, timeout, |count| *count < n)
            .unwrap();
        *guard
    }
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        let (lock, cvar) = &*self.counter.inner;
        *lock.lock().unwrap() += 1;
        cvar.notify_all();
    }
}

/// A barrier for `n` parties whose wait gives up after [`TIMEOUT`], so that
/// a test can assert that all parties met instead of hanging when they
/// cannot (e.g. because they were all queued on one worker).
#[derive(Clone)]
pub struct Rendezvous {
    inner: Arc<(Mutex<usize>, Condvar)>,
    parties: usize,
}

impl Rendezvous {
    pub fn new(parties: usize) -> Self {
        Rendezvous {
            inner: Arc::new((Mutex::new(0), Condvar::new())),
            parties,
        }
    }

    /// Arrives and blocks the thread until all parties have arrived.
    /// Returns whether they all did before the timeout.
    pub fn wait(&self) -> bool {
        let (lock, cvar) = &*self.inner;
        let mut arrived = lock.lock().unwrap();
        *arrived += 1;
        cvar.notify_all();
        let (arrived, _) = cvar
            .wait_timeout_while(arrived, TIMEOUT, |a| *a < self.parties)
            .unwrap();
        *arrived >= self.parties
    }
}

/// Waits, without sleeping, until `condition` holds, yielding the thread
/// in between; returns whether it held before [`TIMEOUT`]. For states that
/// have no notification (such as `JoinHandle::is_finished`).
pub fn spin_until(mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + TIMEOUT;
    while !condition() {
        if Instant::now() > deadline {
            return false;
        }
        thread::yield_now();
    }
    true
}

/// A counter for tasks to bump.
pub fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

/// Reads a counter.
pub fn get(counter: &AtomicUsize) -> usize {
    counter.load(Ordering::SeqCst)
}

/// Only guards against a hang; no test relies on it for timing.
pub const HANG_GUARD: Duration = Duration::from_secs(30 * MIRI_SLOWDOWN);

/// Drives `future` to completion on a plain thread (no fastexec executor
/// involved), failing instead of hanging past [`HANG_GUARD`].
pub fn block_on_guarded<F>(future: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (sender, receiver) = mpsc::channel();
    let thread = thread::spawn(move || {
        let _ = sender.send(futures::executor::block_on(future));
    });
    let output = receiver
        .recv_timeout(HANG_GUARD)
        .expect("the future hung or panicked");
    // It has sent: joining takes no time, and leaves no thread behind for
    // Miri to report (see `with_timeout`).
    thread.join().expect("the thread has sent its output");
    output
}

// Helpers first written for the graph tests.

/// Runs `f` on its own thread and returns its result, failing the test if it
/// takes longer than `secs`. Only a guard against hangs, never a way to wait.
pub fn within<R: Send + 'static>(secs: u64, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    let worker = thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs * MIRI_SLOWDOWN)) {
        Ok(r) => {
            // It has sent: see `with_timeout`.
            worker.join().expect("the worker has sent its result");
            r
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hung for more than {secs} s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the worker always sends before finishing"),
        },
    }
}

/// A latch a test opens once; any number of tasks can await it, any number
/// of times (task bodies are re-runnable, so they must not consume it).
#[derive(Clone)]
pub struct Gate {
    rx: futures::future::Shared<futures::channel::oneshot::Receiver<()>>,
    tx: std::sync::Arc<std::sync::Mutex<Option<futures::channel::oneshot::Sender<()>>>>,
}

impl Gate {
    pub fn new() -> Self {
        use futures::FutureExt;
        let (tx, rx) = futures::channel::oneshot::channel();
        Gate {
            rx: rx.shared(),
            tx: std::sync::Arc::new(std::sync::Mutex::new(Some(tx))),
        }
    }

    pub fn open(&self) {
        if let Some(tx) = self.tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
    }

    pub async fn wait(&self) {
        let _ = self.rx.clone().await;
    }

    /// Blocks the calling (test) thread until the gate opens.
    pub fn wait_blocking(&self) {
        futures::executor::block_on(self.wait());
    }

    /// A guard that opens the gate when dropped: a test whose assertion
    /// fails while a worker blocks on the gate then unwinds to the
    /// executor's drop with the worker released, instead of hanging there.
    pub fn opened_on_drop(&self) -> OpenOnDrop {
        OpenOnDrop(self.clone())
    }
}

/// Opens its gate when dropped (see [`Gate::opened_on_drop`]).
pub struct OpenOnDrop(Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

/// A waker that counts how often it was woken, for futures polled by hand.
#[derive(Default)]
pub struct CountingWake(pub AtomicUsize);

impl CountingWake {
    /// Wakes so far.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl std::task::Wake for CountingWake {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker of its own for futures polled by hand, counting its wakes.
pub struct Probe {
    wake: Arc<CountingWake>,
    waker: std::task::Waker,
}

impl Probe {
    /// A probe not woken yet.
    pub fn new() -> Self {
        let wake = Arc::new(CountingWake::default());
        let waker = std::task::Waker::from(Arc::clone(&wake));
        Self { wake, waker }
    }

    /// Polls `future` once with this probe's waker.
    pub fn poll<F: std::future::Future + Unpin>(
        &self,
        future: &mut F,
    ) -> std::task::Poll<F::Output> {
        std::pin::Pin::new(future).poll(&mut std::task::Context::from_waker(&self.waker))
    }

    /// Wakes so far.
    pub fn wakes(&self) -> usize {
        self.wake.count()
    }

    /// Clones of this probe's waker held outside the probe.
    pub fn wakers_held(&self) -> usize {
        // The probe holds two references: its counter and its waker.
        Arc::strong_count(&self.wake) - 2
    }
}

impl Default for Probe {
    fn default() -> Self {
        Self::new()
    }
}

/// The id of cell (r, c) of a lattice of tasks.
pub fn cell(r: usize, c: usize) -> String {
    format!("{r},{c}")
}

/// The dependencies of lattice cell (r, c): the cells above it and to its
/// left, where there are any.
pub fn lattice_deps(r: usize, c: usize) -> impl Iterator<Item = String> {
    let above = (r > 0).then(|| cell(r - 1, c));
    let left = (c > 0).then(|| cell(r, c - 1));
    above.into_iter().chain(left)
}

/// A retry policy whose every backoff is exactly `backoff` (no jitter), for
/// tests that act on a task while it waits to retry.
pub fn fixed_backoff(attempts: u32, backoff: Duration) -> fastexec::graph::RetryPolicy {
    fastexec::graph::RetryPolicy::attempts(attempts)
        .initial_backoff(backoff)
        .max_backoff(backoff)
        .jitter(0.0)
}

/// Waits until the first attempt of task `id` has ended (its failure is
/// recorded): the task, still `Running`, is then waiting to retry.
pub fn wait_for_first_failure<T: Send + Sync + 'static>(
    run: &fastexec::graph::RunHandle<T>,
    id: &str,
) {
    assert!(spin_until(|| run
        .report()
        .attempts()
        .first()
        .is_some_and(|a| a.end.is_some())));
    assert_eq!(run.state(id), Some(fastexec::graph::TaskState::Running));
}

/// A graph task that opens `started`, then waits for `release` (without
/// reaching a checkpoint), then returns 1.
pub fn gated_task(id: &str, started: &Gate, release: &Gate) -> fastexec::graph::Task<u32> {
    let (started, release) = (started.clone(), release.clone());
    fastexec::graph::Task::new(id, move |_| {
        let (started, release) = (started.clone(), release.clone());
        async move {
            started.open();
            release.wait().await;
            Ok(1)
        }
    })
}

/// An executor of `threads` workers whose threads are named `name-N`, for
/// tests that tell executors apart by [`thread_name`].
pub fn named(threads: usize, name: &str) -> Executor {
    Executor::builder()
        .threads(threads)
        .thread_name(name)
        .build()
        .unwrap()
}

/// The name of the thread this runs on ("" if it has none).
pub fn thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_owned()
}

/// Spawns, when dropped, a task that sends the name of the thread it ran
/// on (to a receiver that may be gone, if the task runs too late): a
/// clean-up task, to see where a destructor's spawn goes.
pub struct SpawnsWhenDropped(pub mpsc::Sender<String>);

impl Drop for SpawnsWhenDropped {
    fn drop(&mut self) {
        let ran_on = self.0.clone();
        fastexec::spawn(async move {
            let _ = ran_on.send(thread_name());
        })
        .detach();
    }
}

/// A graph task that opens `started`, then waits for `proceed`, then
/// reaches a checkpoint (where a pause requested meanwhile takes it), then
/// returns 1.
pub fn checkpointed_task(id: &str, started: &Gate, proceed: &Gate) -> fastexec::graph::Task<u32> {
    let (started, proceed) = (started.clone(), proceed.clone());
    fastexec::graph::Task::new(id, move |inp| {
        let (started, proceed) = (started.clone(), proceed.clone());
        async move {
            started.open();
            proceed.wait().await;
            inp.checkpoint().await?;
            Ok(1)
        }
    })
}

/// The message a [`PanicOnDrop`] panics with.
pub const PANIC_ON_DROP: &str = "panic in a destructor";

/// Counts its drop, then panics with [`PANIC_ON_DROP`] (unless the thread
/// is already unwinding): a future, output or panic payload whose
/// destructor panics. `value` tells instances apart.
pub struct PanicOnDrop {
    pub value: u32,
    _counted: DropGuard,
}

impl PanicOnDrop {
    pub fn new(counted: DropGuard) -> Self {
        Self::with_value(0, counted)
    }

    pub fn with_value(value: u32, counted: DropGuard) -> Self {
        PanicOnDrop {
            value,
            _counted: counted,
        }
    }
}

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        if !thread::panicking() {
            panic!("{PANIC_ON_DROP}");
        }
    }
}

/// A future ready at once with 7, holding a [`PanicOnDrop`]: its
/// destructor panics after it gave its output.
pub struct ReadyNow(pub PanicOnDrop);

impl std::future::Future for ReadyNow {
    type Output = u32;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<u32> {
        std::task::Poll::Ready(7)
    }
}

/// Keeps panics whose message starts with `prefix` (panics a test scripts
/// in its bodies, caught by the code under test) off the test's output;
/// other panics are reported as before. Installed once per test binary,
/// for the first prefix given.
pub fn quiet_panics(prefix: &'static str) {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !panic_text(info.payload()).starts_with(prefix) {
                report(info);
            }
        }));
    });
}

/// A waker whose `wake` and last drop run code a test gives: a foreign
/// waker that re-enters the executor (polls, drops or notifies what woke
/// it) or panics, for tests of code that wakes or drops wakers it did not
/// make.
pub struct CallbackWaker {
    on_wake: Box<dyn Fn() + Send + Sync>,
    on_drop: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl CallbackWaker {
    /// A waker running `on_wake` at each wake and `on_drop` when its last
    /// clone is dropped.
    pub fn waker(
        on_wake: impl Fn() + Send + Sync + 'static,
        on_drop: impl FnOnce() + Send + 'static,
    ) -> std::task::Waker {
        std::task::Waker::from(Arc::new(CallbackWaker {
            on_wake: Box::new(on_wake),
            on_drop: Mutex::new(Some(Box::new(on_drop))),
        }))
    }

    /// A waker running `on_wake` at each wake, nothing on drop.
    pub fn on_wake(on_wake: impl Fn() + Send + Sync + 'static) -> std::task::Waker {
        Self::waker(on_wake, || {})
    }

    /// A waker doing nothing when woken, and `on_drop` when dropped.
    pub fn on_drop(on_drop: impl FnOnce() + Send + 'static) -> std::task::Waker {
        Self::waker(|| {}, on_drop)
    }
}

impl std::task::Wake for CallbackWaker {
    fn wake(self: Arc<Self>) {
        (self.on_wake)();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        (self.on_wake)();
    }
}

impl Drop for CallbackWaker {
    fn drop(&mut self) {
        let on_drop = self
            .on_drop
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(on_drop) = on_drop {
            on_drop();
        }
    }
}

/// Polls `future` once with `waker`.
pub fn poll_with<F: std::future::Future + Unpin>(
    future: &mut F,
    waker: &std::task::Waker,
) -> std::task::Poll<F::Output> {
    std::pin::Pin::new(future).poll(&mut std::task::Context::from_waker(waker))
}

/// A future behind a lock, which a waker can poll (or drop) from inside
/// its `wake`, as an executor that polls inline on wake does.
pub type SharedFuture =
    Arc<Mutex<Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>>>;

/// Puts `future` behind a lock, and returns it with a waker that polls it
/// again inside `wake` (with a no-op waker), dropping it once it is ready.
pub fn repolled_on_wake(
    future: impl std::future::Future<Output = ()> + Send + 'static,
) -> (SharedFuture, std::task::Waker) {
    let shared: SharedFuture = Arc::new(Mutex::new(Some(Box::pin(future))));
    let slot = shared.clone();
    let waker = CallbackWaker::on_wake(move || {
        let mut slot = slot.lock().unwrap();
        let ready = slot
            .as_mut()
            .is_some_and(|f| poll_with(f, &futures::task::noop_waker()).is_ready());
        if ready {
            *slot = None;
        }
    });
    (shared, waker)
}

/// Polls the future in `shared` once with `waker`; whether it is pending.
pub fn poll_shared(shared: &SharedFuture, waker: &std::task::Waker) -> bool {
    let mut slot = shared.lock().unwrap();
    let future = slot.as_mut().expect("the future is still there");
    poll_with(future, waker).is_pending()
}

/// A waker that counts its wakes in the counter returned with it, then
/// panics with `message`: a foreign waker whose `wake` panics.
pub fn panicking_waker(message: &'static str) -> (Arc<AtomicUsize>, std::task::Waker) {
    let woken = counter();
    let wakes = woken.clone();
    let waker = CallbackWaker::on_wake(move || {
        wakes.fetch_add(1, Ordering::SeqCst);
        panic!("{message}");
    });
    (woken, waker)
}

/// Whether the machine runs two threads at once: a graph run asks for at
/// most as many runners as that (and as the executor's workers), so tests
/// that need a second runner skip (saying so) on one core.
pub fn has_two_cores() -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 {
        eprintln!("skipped: needs two cores for two graph runners, found {cores}");
    }
    cores >= 2
}

/// Gives `executor` to a blocking job of its own, whose `fastexec::block_on`
/// root drops it (the job's thread then owns a simple scheduler while the
/// drop runs); returns once the job has returned. Panics if the job fails.
pub fn drop_from_a_blocking_jobs_block_on(executor: Executor) {
    let slot = Arc::new(Mutex::new(None::<Executor>));
    let placed = Gate::new();
    let (in_job, go) = (Arc::clone(&slot), placed.clone());
    let job = executor.spawn_blocking(move || {
        fastexec::block_on(async move {
            go.wait().await;
            drop(in_job.lock().unwrap().take().expect("placed"));
        });
    });
    *slot.lock().unwrap() = Some(executor);
    placed.open();
    futures::executor::block_on(job).expect("the job dropped the executor and returned");
}

thread_local! {
    /// A runtime per thread, for [`drop_executor_at_thread_exit`].
    static RUNTIME: std::cell::RefCell<Option<Executor>> =
        const { std::cell::RefCell::new(None) };
}

/// On a new thread: registers a thread-local first, builds a one-thread
/// executor of `scheduler`, parks on it a task holding `held` (once it
/// has been polled), runs `warm_up` with the executor there (using it
/// registers fastexec's own thread-locals, after that one), and leaves the
/// executor in the thread-local: its destructor drops the executor at
/// thread exit, after fastexec's thread-locals were torn down. Returns
/// once the thread has exited.
pub fn drop_executor_at_thread_exit<H: Send + 'static>(
    scheduler: fastexec::Scheduler,
    held: H,
    warm_up: impl FnOnce(&Executor) + Send + 'static,
) {
    thread::spawn(move || {
        RUNTIME.with(|runtime| assert!(runtime.borrow().is_none()));
        let executor = Executor::builder()
            .threads(1)
            .scheduler(scheduler)
            .build()
            .expect("start executor");
        spawn_parked(&executor, held).detach();
        warm_up(&executor);
        RUNTIME.with(|runtime| *runtime.borrow_mut() = Some(executor));
    })
    .join()
    .expect("the thread exited cleanly");
}
