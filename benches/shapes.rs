//! Benchmark shapes run side by side on fastexec and its peers (tokio, async-executor's
//! `Executor` and `StaticExecutor`, and rayon where the shape has no futures), at 1 and 2
//! worker threads. Criterion reports time per task (`Throughput::Elements`).
//!
//! Run everything and print fastexec ÷ peer ratios (see benches/README.md):
//!     scripts/bench-table [--quick] [FILTER]
//! or one shape directly:
//!     cargo bench --bench shapes -- dag_lattice --warm-up-time 1 --measurement-time 2

mod common;

use common::dag::{run_counter_dag, run_counter_dag_rayon, DagShape, Lattice, SIDE};
use common::{tiny_work, AsyncEx, CountDown, DetachAll, Fastexec, Rt, StaticEx, Tokio};
use criterion::criterion_group;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use fastexec::Completion;
use futures::channel::oneshot;
use futures::future::{FutureExt, Shared};
use rayon::{Scope, ThreadPool};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

/// Worker-thread counts every shape runs at (the bench machines have 2 cores).
const THREADS: [usize; 2] = [1, 2];

/// One benchmark shape. `run` does one complete iteration, waits for all of its tasks and
/// asserts they all ran, so a broken executor fails the bench instead of looking fast.
trait Shape {
    const NAME: &'static str;
    /// Tasks (or yields, or round trips) per iteration: criterion divides by it.
    const ELEMENTS: usize;
    /// Iterations long enough (tens of ms and up) that flat sampling keeps runs short.
    const LONG: bool = false;
    /// The same work as closures on a rayon pool, for shapes without futures in them.
    const RAYON: Option<fn(&ThreadPool)> = None;
    /// The same work built from fastexec's completion handles (`spawn_after`), benchmarked as
    /// `fastexec_spawn_after` next to the peers, for shapes that have such a variant.
    const COMPLETIONS: Option<fn(&Fastexec)> = None;
    /// The same work written with fastexec's structured API: spawned from inside
    /// `Executor::block_on`, done when `block_on` returns (its group counts every task),
    /// benchmarked as `fastexec_scoped`, for shapes that have such a variant.
    const SCOPED: Option<fn(&Fastexec)> = None;
    /// The same work spawned with fastexec's batch API (`spawn_many`, `detach_many`),
    /// benchmarked as `fastexec_spawn_many`, for shapes that have such a variant.
    const SPAWN_MANY: Option<fn(&Fastexec)> = None;
    /// The same work spawned with async-executor's `Executor::spawn_many`, benchmarked as
    /// `async-executor_spawn_many` (the peer's own batch API, for a like-for-like ratio).
    const ASYNC_EX_SPAWN_MANY: Option<fn(&AsyncEx)> = None;

    fn run<R: Rt>(rt: &R);
}

fn bench_shape<S: Shape>(c: &mut Criterion) {
    let mut group = c.benchmark_group(S::NAME);
    group.throughput(Throughput::Elements(S::ELEMENTS as u64));
    if S::LONG {
        group.sampling_mode(SamplingMode::Flat).sample_size(10);
    }
    for threads in THREADS {
        bench_rt::<S, Fastexec>(&mut group, threads);
        bench_rt::<S, Tokio>(&mut group, threads);
        bench_rt::<S, AsyncEx>(&mut group, threads);
        bench_rt::<S, StaticEx>(&mut group, threads);
        if let Some(run) = S::RAYON {
            bench_rayon(&mut group, threads, run);
        }
        if let Some(run) = S::COMPLETIONS {
            bench_variant(&mut group, "fastexec_spawn_after", threads, run);
        }
        if let Some(run) = S::SCOPED {
            bench_variant(&mut group, "fastexec_scoped", threads, run);
        }
        if let Some(run) = S::SPAWN_MANY {
            bench_variant(&mut group, "fastexec_spawn_many", threads, run);
        }
        if let Some(run) = S::ASYNC_EX_SPAWN_MANY {
            bench_variant(&mut group, "async-executor_spawn_many", threads, run);
        }
    }
    group.finish();
}

/// The executor is built once per thread count, outside the timed loop.
fn bench_rt<S: Shape, R: Rt>(group: &mut BenchmarkGroup<WallTime>, threads: usize) {
    let rt = R::start(threads);
    let id = BenchmarkId::new(R::NAME, threads);
    group.bench_function(id, |b| b.iter(|| S::run(&rt)));
    rt.shutdown();
}

fn bench_rayon(group: &mut BenchmarkGroup<WallTime>, threads: usize, run: fn(&ThreadPool)) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("cannot start rayon");
    let id = BenchmarkId::new("rayon", threads);
    group.bench_function(id, |b| b.iter(|| run(&pool)));
}

/// A variant of a shape written with one executor's own API (`COMPLETIONS`, `SCOPED`,
/// `SPAWN_MANY`, `ASYNC_EX_SPAWN_MANY`), in the same group as the peers.
fn bench_variant<R: Rt>(
    group: &mut BenchmarkGroup<WallTime>,
    name: &str,
    threads: usize,
    run: fn(&R),
) {
    let rt = R::start(threads);
    let id = BenchmarkId::new(name, threads);
    group.bench_function(id, |b| b.iter(|| run(&rt)));
    rt.shutdown();
}

/// Spawns `count` empty detached tasks from wherever it is called, each counting `done` down.
fn spawn_counted<R: Rt>(here: &R::Here, count: usize, done: &'static CountDown) {
    for _ in 0..count {
        R::detach_here(here, async move { done.count_down() });
    }
}

/// Spawns `count` tasks each returning 1 and sums them: equals `count` only if all ran.
fn spawn_and_await<R: Rt>(rt: &R, count: usize) -> usize {
    let handles: Vec<_> = (0..count).map(|_| rt.spawn(async { 1 })).collect();
    rt.block_on(async {
        let mut ran = 0;
        for handle in handles {
            ran += handle.await;
        }
        ran
    })
}

/// Awaits every handle (of tasks each returning 1, or the like) and sums their outputs.
fn await_sum<R: Rt, H>(rt: &R, handles: Vec<H>) -> usize
where
    H: std::future::Future,
    H::Output: IntoOutput,
{
    rt.block_on(async {
        let mut sum = 0;
        for handle in handles {
            sum += handle.await.into_output();
        }
        sum
    })
}

/// A handle's output as the sum counts it: fastexec's `Result` (a failed task fails the
/// bench), async-executor's bare value.
trait IntoOutput {
    fn into_output(self) -> usize;
}

impl IntoOutput for usize {
    fn into_output(self) -> usize {
        self
    }
}

impl IntoOutput for Result<usize, fastexec::JoinError> {
    fn into_output(self) -> usize {
        self.expect("task failed")
    }
}

/// A task on the executor spawns 10,000 tiny tasks; done when all have run.
struct SpawnManyLocal;

impl Shape for SpawnManyLocal {
    const NAME: &'static str = "spawn_many_local";
    const ELEMENTS: usize = 10_000;
    const RAYON: Option<fn(&ThreadPool)> = Some(Self::rayon);
    const SCOPED: Option<fn(&Fastexec)> = Some(Self::scoped);
    const SPAWN_MANY: Option<fn(&Fastexec)> = Some(Self::spawn_many);
    const ASYNC_EX_SPAWN_MANY: Option<fn(&AsyncEx)> = Some(Self::async_ex_spawn_many);

    fn run<R: Rt>(rt: &R) {
        let done = SPAWN_MANY_LOCAL_DONE.arm(Self::ELEMENTS);
        let here = rt.here();
        rt.detach(async move { spawn_counted::<R>(&here, Self::ELEMENTS, done) });
        done.wait();
    }
}

/// `spawn_many_local`'s latch: the async executors' tasks count it down with one atomic
/// operation each and hold no reference count, as rayon's scoped closures borrow theirs.
static SPAWN_MANY_LOCAL_DONE: CountDown = CountDown::unarmed();

impl SpawnManyLocal {
    /// As a fastexec user writes it: no latch, `block_on` returns when every task spawned
    /// under it, transitively, has finished. The counter only proves that it waited.
    fn scoped(rt: &Fastexec) {
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        rt.executor().block_on(async move {
            let spawner = fastexec::spawn(async move {
                for _ in 0..Self::ELEMENTS {
                    let counter = counter.clone();
                    fastexec::spawn(async move {
                        counter.fetch_add(1, Relaxed);
                    })
                    .detach();
                }
            });
            spawner.await.expect("spawning task failed");
        });
        assert_eq!(ran.load(Relaxed), Self::ELEMENTS);
    }

    /// `run`, the task spawning its 10,000 with one `fastexec::detach_many`.
    fn spawn_many(rt: &Fastexec) {
        let done = SPAWN_MANY_LOCAL_DONE.arm(Self::ELEMENTS);
        rt.detach(async move {
            fastexec::detach_many((0..Self::ELEMENTS).map(|_| async move { done.count_down() }));
        });
        done.wait();
    }

    /// `run`, the task spawning its 10,000 with one `Executor::spawn_many`.
    fn async_ex_spawn_many(rt: &AsyncEx) {
        let done = SPAWN_MANY_LOCAL_DONE.arm(Self::ELEMENTS);
        let here = rt.here();
        rt.detach(async move {
            let tasks = (0..Self::ELEMENTS).map(|_| async move { done.count_down() });
            here.executor().spawn_many(tasks, &mut DetachAll);
        });
        done.wait();
    }

    fn rayon(pool: &ThreadPool) {
        let ran = AtomicUsize::new(0);
        let counter = &ran;
        pool.scope(|s| {
            s.spawn(move |s| {
                for _ in 0..Self::ELEMENTS {
                    s.spawn(move |_| {
                        counter.fetch_add(1, Relaxed);
                    });
                }
            })
        });
        assert_eq!(ran.into_inner(), Self::ELEMENTS);
    }
}

/// 10,000 tasks spawned from outside the executor, every handle awaited.
struct SpawnManyRemoteIdle;

impl Shape for SpawnManyRemoteIdle {
    const NAME: &'static str = "spawn_many_remote_idle";
    const ELEMENTS: usize = 10_000;
    const SPAWN_MANY: Option<fn(&Fastexec)> = Some(|rt| {
        let mut handles = Vec::with_capacity(Self::ELEMENTS);
        let tasks = (0..Self::ELEMENTS).map(|_| async { 1 });
        rt.executor().spawn_many(tasks, &mut handles);
        assert_eq!(await_sum(rt, handles), Self::ELEMENTS);
    });
    const ASYNC_EX_SPAWN_MANY: Option<fn(&AsyncEx)> = Some(|rt| {
        let mut handles = Vec::with_capacity(Self::ELEMENTS);
        let tasks = (0..Self::ELEMENTS).map(|_| async { 1 });
        rt.executor().spawn_many(tasks, &mut handles);
        assert_eq!(await_sum(rt, handles), Self::ELEMENTS);
    });
    // rayon has no handles: the closures count down a latch the posting thread waits on
    // (borrowed from a static, so no reference count per closure).
    const RAYON: Option<fn(&ThreadPool)> = Some(|pool| {
        static DONE: CountDown = CountDown::unarmed();
        let done = DONE.arm(Self::ELEMENTS);
        for _ in 0..Self::ELEMENTS {
            pool.spawn(move || done.count_down());
        }
        done.wait();
    });

    fn run<R: Rt>(rt: &R) {
        assert_eq!(spawn_and_await(rt, Self::ELEMENTS), Self::ELEMENTS);
    }
}

/// As `spawn_many_remote_idle` while one self-waking yielding task per worker keeps every
/// worker busy: remote work must still get through. No rayon variant: the busy tasks are
/// futures that wake themselves.
struct SpawnManyRemoteBusy;

impl Shape for SpawnManyRemoteBusy {
    const NAME: &'static str = "spawn_many_remote_busy";
    const ELEMENTS: usize = 10_000;

    fn run<R: Rt>(rt: &R) {
        let stop = Arc::new(AtomicBool::new(false));
        let busy: Vec<_> = (0..rt.threads())
            .map(|_| rt.spawn(yield_until::<R>(stop.clone())))
            .collect();
        assert_eq!(spawn_and_await(rt, Self::ELEMENTS), Self::ELEMENTS);
        stop.store(true, Relaxed);
        rt.block_on(futures::future::join_all(busy));
    }
}

async fn yield_until<R: Rt>(stop: Arc<AtomicBool>) {
    while !stop.load(Relaxed) {
        R::yield_now().await;
    }
}

/// 200 tasks each yielding 1,000 times; criterion reports time per yield.
struct YieldMany;

impl YieldMany {
    const TASKS: usize = 200;
    const YIELDS: usize = 1_000;
}

impl Shape for YieldMany {
    const NAME: &'static str = "yield_many";
    const ELEMENTS: usize = Self::TASKS * Self::YIELDS;

    fn run<R: Rt>(rt: &R) {
        let yields = (0..Self::TASKS).map(|_| {
            rt.spawn(async {
                for _ in 0..Self::YIELDS {
                    R::yield_now().await;
                }
                Self::YIELDS
            })
        });
        let handles: Vec<_> = yields.collect();
        let total: usize = rt.block_on(futures::future::join_all(handles)).iter().sum();
        assert_eq!(total, Self::ELEMENTS);
    }
}

/// 1,000 concurrent round trips through oneshot channels, each ping spawning its pong.
struct PingPong;

impl Shape for PingPong {
    const NAME: &'static str = "ping_pong";
    const ELEMENTS: usize = 1_000;

    fn run<R: Rt>(rt: &R) {
        let here = rt.here();
        let root = rt.spawn(async move {
            let pings = (0..Self::ELEMENTS).map(|_| R::spawn_here(&here, ping::<R>(here.clone())));
            let pings: Vec<_> = pings.collect();
            let mut trips = 0;
            for ping in pings {
                trips += ping.await;
            }
            trips
        });
        assert_eq!(rt.block_on(root), Self::ELEMENTS);
    }
}

async fn ping<R: Rt>(here: R::Here) -> usize {
    let (ping_tx, ping_rx) = oneshot::channel();
    let (pong_tx, pong_rx) = oneshot::channel();
    R::detach_here(&here, async move {
        ping_rx.await.expect("ping lost");
        pong_tx.send(()).expect("ping gone");
    });
    ping_tx.send(()).expect("pong gone");
    pong_rx.await.expect("pong lost");
    1
}

/// A chain of 1,000 tasks, each spawning the next.
struct ChainedSpawn;

impl Shape for ChainedSpawn {
    const NAME: &'static str = "chained_spawn";
    const ELEMENTS: usize = 1_000;
    const RAYON: Option<fn(&ThreadPool)> = Some(|pool| {
        let ran = AtomicUsize::new(0);
        pool.scope(|s| rayon_chain(s, Self::ELEMENTS, &ran));
        assert_eq!(ran.into_inner(), Self::ELEMENTS);
    });

    fn run<R: Rt>(rt: &R) {
        // Counting down once per link proves the whole chain ran.
        let done = CountDown::new(Self::ELEMENTS);
        let (here, all) = (rt.here(), done.clone());
        rt.detach(async move {
            all.count_down();
            chain::<R>(here, Self::ELEMENTS - 1, all);
        });
        done.wait();
    }
}

/// Spawns the next `left` links from inside the current one.
fn chain<R: Rt>(here: R::Here, left: usize, done: Arc<CountDown>) {
    if left > 0 {
        let next = here.clone();
        R::detach_here(&here, async move {
            done.count_down();
            chain::<R>(next, left - 1, done);
        });
    }
}

fn rayon_chain<'s>(s: &Scope<'s>, left: usize, ran: &'s AtomicUsize) {
    if left > 0 {
        s.spawn(move |s| {
            ran.fetch_add(1, Relaxed);
            rayon_chain(s, left - 1, ran);
        });
    }
}

/// One task spawns 100,000 tasks, awaits every handle and sums the results.
struct FanOutFanIn;

impl Shape for FanOutFanIn {
    const NAME: &'static str = "fan_out_fan_in";
    const ELEMENTS: usize = 100_000;
    const LONG: bool = true;
    const RAYON: Option<fn(&ThreadPool)> = Some(Self::rayon);

    fn run<R: Rt>(rt: &R) {
        let here = rt.here();
        let root = rt.spawn(async move {
            let handles: Vec<_> = (0..Self::ELEMENTS)
                .map(|i| R::spawn_here(&here, async move { i }))
                .collect();
            let mut sum = 0;
            for handle in handles {
                sum += handle.await;
            }
            sum
        });
        assert_eq!(rt.block_on(root), Self::SUM);
    }
}

impl FanOutFanIn {
    const SUM: usize = Self::ELEMENTS * (Self::ELEMENTS - 1) / 2;

    /// rayon closures return nothing: each writes its result to its own slot, the stand-in for
    /// a join handle, and the caller sums the slots.
    fn rayon(pool: &ThreadPool) {
        let slots: Vec<AtomicUsize> = (0..Self::ELEMENTS).map(|_| AtomicUsize::new(0)).collect();
        let results = &slots;
        pool.scope(|s| {
            s.spawn(move |s| {
                for (i, slot) in results.iter().enumerate() {
                    s.spawn(move |_| slot.store(i, Relaxed));
                }
            })
        });
        let sum: usize = slots.iter().map(|slot| slot.load(Relaxed)).sum();
        assert_eq!(sum, Self::SUM);
    }
}

/// The lattice with one shared future per node: each node awaits its two predecessors.
struct DagShared;

type SharedNode<R> = Shared<<R as Rt>::Handle<()>>;

impl Shape for DagShared {
    const NAME: &'static str = "dag_lattice_shared";
    const ELEMENTS: usize = Lattice::NODES;

    fn run<R: Rt>(rt: &R) {
        let ran = Arc::new(AtomicUsize::new(0));
        let (here, counter) = (rt.here(), ran.clone());
        rt.block_on(rt.spawn(async move { shared_lattice::<R>(&here, &counter).await }));
        assert_eq!(ran.load(Relaxed), Self::ELEMENTS);
    }
}

/// Spawns the lattice row by row, keeping only the previous row's nodes; returns the last node.
fn shared_lattice<R: Rt>(here: &R::Here, ran: &Arc<AtomicUsize>) -> SharedNode<R> {
    let mut above: Vec<Option<SharedNode<R>>> = vec![None; SIDE];
    let mut left = None;
    for _row in 0..SIDE {
        for slot in above.iter_mut() {
            let node = shared_node::<R>(here, slot.take(), left.take(), ran.clone());
            *slot = Some(node.clone());
            left = Some(node);
        }
        left = None;
    }
    above.pop().flatten().expect("lattice has a last node")
}

fn shared_node<R: Rt>(
    here: &R::Here,
    up: Option<SharedNode<R>>,
    left: Option<SharedNode<R>>,
    ran: Arc<AtomicUsize>,
) -> SharedNode<R> {
    let node = R::spawn_here(here, async move {
        if let Some(up) = up {
            up.await;
        }
        if let Some(left) = left {
            left.await;
        }
        ran.fetch_add(1, Relaxed);
    });
    node.shared()
}

/// The lattice with a pending-predecessor counter per node: the task that finishes a node's
/// last predecessor spawns it (`common/dag.rs`).
struct DagCounter;

impl Shape for DagCounter {
    const NAME: &'static str = "dag_lattice_counter";
    const ELEMENTS: usize = Lattice::NODES;
    const RAYON: Option<fn(&ThreadPool)> = Some(run_counter_dag_rayon::<Lattice>);

    const COMPLETIONS: Option<fn(&Fastexec)> = Some(|rt| {
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        let ex = rt.executor();
        let built = ex.spawn(async move { completion_lattice(&counter).await });
        ex.block_on(built)
            .expect("lattice builder failed")
            .expect("lattice node failed");
        assert_eq!(ran.load(Relaxed), Self::ELEMENTS);
    });

    fn run<R: Rt>(rt: &R) {
        run_counter_dag::<Lattice, R>(rt);
    }
}

/// The lattice as completions: each node is `spawn_after` its predecessors, released by their
/// counters. Built row by row from a task, keeping only the previous row; returns the last node.
fn completion_lattice(ran: &Arc<AtomicUsize>) -> Completion<()> {
    let mut above: Vec<Option<Completion<()>>> = vec![None; SIDE];
    let mut left: Option<Completion<()>> = None;
    for _row in 0..SIDE {
        for slot in above.iter_mut() {
            let ran = ran.clone();
            let body = move || async move {
                ran.fetch_add(1, Relaxed);
            };
            let node = match (slot.take(), left.take()) {
                (None, None) => fastexec::spawn_completion(body()),
                (Some(dep), None) | (None, Some(dep)) => {
                    fastexec::spawn_after(dep, move |_| body())
                }
                (Some(up), Some(l)) => fastexec::spawn_after((up, l), move |_| body()),
            };
            *slot = Some(node.clone());
            left = Some(node);
        }
        left = None;
    }
    above.pop().flatten().expect("lattice has a last node")
}

/// `tiny_task_throughput`'s latch, counted down by every variant's tasks, rayon's too: one
/// atomic operation a task and no reference count. Cloning an `Arc` per task, as this shape
/// did before, added two more operations on the latch's cache line, written by the poster and
/// by both workers, to every task of every executor.
static TINY_DONE: CountDown = CountDown::unarmed();

/// One outside thread posts 1,000,000 fire-and-forget tasks of ~20 ns work each.
struct TinyTasks;

impl Shape for TinyTasks {
    const NAME: &'static str = "tiny_task_throughput";
    const ELEMENTS: usize = 1_000_000;
    const LONG: bool = true;
    const SPAWN_MANY: Option<fn(&Fastexec)> = Some(|rt| {
        let done = TINY_DONE.arm(Self::ELEMENTS);
        rt.executor()
            .detach_many((0..Self::ELEMENTS).map(|i| async move {
                tiny_work(i as u64);
                done.count_down();
            }));
        done.wait();
    });
    const ASYNC_EX_SPAWN_MANY: Option<fn(&AsyncEx)> = Some(|rt| {
        let done = TINY_DONE.arm(Self::ELEMENTS);
        let tasks = (0..Self::ELEMENTS).map(|i| async move {
            tiny_work(i as u64);
            done.count_down();
        });
        rt.executor().spawn_many(tasks, &mut DetachAll);
        done.wait();
    });
    const RAYON: Option<fn(&ThreadPool)> = Some(|pool| {
        let done = TINY_DONE.arm(Self::ELEMENTS);
        for i in 0..Self::ELEMENTS {
            pool.spawn(move || {
                tiny_work(i as u64);
                done.count_down();
            });
        }
        done.wait();
    });

    fn run<R: Rt>(rt: &R) {
        let done = TINY_DONE.arm(Self::ELEMENTS);
        for i in 0..Self::ELEMENTS {
            rt.detach(async move {
                tiny_work(i as u64);
                done.count_down();
            });
        }
        done.wait();
    }
}

criterion_group!(
    shapes,
    bench_shape::<SpawnManyLocal>,
    bench_shape::<SpawnManyRemoteIdle>,
    bench_shape::<SpawnManyRemoteBusy>,
    bench_shape::<YieldMany>,
    bench_shape::<PingPong>,
    bench_shape::<ChainedSpawn>,
    bench_shape::<FanOutFanIn>,
    bench_shape::<DagShared>,
    bench_shape::<DagCounter>,
    bench_shape::<TinyTasks>,
);

/// `SHAPES_PROFILE=shape/executor/threads/iterations` runs one shape outside criterion (no
/// sampling, no statistics), so `valgrind --tool=callgrind` can count its instructions:
///
///     SHAPES_PROFILE=spawn_many_local/fastexec/1/20 valgrind --tool=callgrind \
///         target/release/deps/shapes-<hash> --bench
fn main() {
    match std::env::var("SHAPES_PROFILE") {
        Ok(spec) => profile(&spec),
        Err(_) => {
            shapes();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}

fn profile(spec: &str) {
    let parts: Vec<&str> = spec.split('/').collect();
    let [shape, executor, threads, iterations] = parts[..] else {
        panic!("SHAPES_PROFILE={spec:?}: expected shape/executor/threads/iterations");
    };
    let threads: usize = threads.parse().expect("threads: a whole number");
    let iterations: usize = iterations.parse().expect("iterations: a whole number");
    match shape {
        "spawn_many_local" => profile_shape::<SpawnManyLocal>(executor, threads, iterations),
        "spawn_many_remote_idle" => {
            profile_shape::<SpawnManyRemoteIdle>(executor, threads, iterations)
        }
        "spawn_many_remote_busy" => {
            profile_shape::<SpawnManyRemoteBusy>(executor, threads, iterations)
        }
        "yield_many" => profile_shape::<YieldMany>(executor, threads, iterations),
        "ping_pong" => profile_shape::<PingPong>(executor, threads, iterations),
        "chained_spawn" => profile_shape::<ChainedSpawn>(executor, threads, iterations),
        "fan_out_fan_in" => profile_shape::<FanOutFanIn>(executor, threads, iterations),
        "dag_lattice_shared" => profile_shape::<DagShared>(executor, threads, iterations),
        "dag_lattice_counter" => profile_shape::<DagCounter>(executor, threads, iterations),
        "tiny_task_throughput" => profile_shape::<TinyTasks>(executor, threads, iterations),
        _ => panic!("SHAPES_PROFILE: unknown shape {shape:?}"),
    }
}

/// Runs one fastexec variant of a shape `iterations` times on a fresh executor; with
/// `SHAPES_PROFILE_METRICS` set, prints the executor's metrics at the end.
fn profile_fastexec<S: Shape>(threads: usize, iterations: usize, run: fn(&Fastexec)) {
    let rt = Fastexec::start(threads);
    (0..iterations).for_each(|_| timed::<S>(|| run(&rt)));
    if std::env::var_os("SHAPES_PROFILE_METRICS").is_some() {
        eprintln!("{:?}", rt.executor().metrics());
    }
    rt.shutdown();
}

fn profile_shape<S: Shape>(executor: &str, threads: usize, iterations: usize) {
    match executor {
        "fastexec" => profile_fastexec::<S>(threads, iterations, S::run::<Fastexec>),
        "fastexec_spawn_after" => profile_fastexec::<S>(
            threads,
            iterations,
            S::COMPLETIONS
                .unwrap_or_else(|| panic!("{} has no fastexec_spawn_after variant", S::NAME)),
        ),
        "fastexec_scoped" => profile_fastexec::<S>(
            threads,
            iterations,
            S::SCOPED.unwrap_or_else(|| panic!("{} has no fastexec_scoped variant", S::NAME)),
        ),
        "fastexec_spawn_many" => profile_fastexec::<S>(
            threads,
            iterations,
            S::SPAWN_MANY
                .unwrap_or_else(|| panic!("{} has no fastexec_spawn_many variant", S::NAME)),
        ),
        "async-executor_spawn_many" => {
            let run = S::ASYNC_EX_SPAWN_MANY
                .unwrap_or_else(|| panic!("{} has no async-executor_spawn_many variant", S::NAME));
            let rt = AsyncEx::start(threads);
            (0..iterations).for_each(|_| timed::<S>(|| run(&rt)));
            rt.shutdown();
        }
        "tokio" => profile_rt::<S, Tokio>(threads, iterations),
        "async-executor" => profile_rt::<S, AsyncEx>(threads, iterations),
        "static-executor" => profile_rt::<S, StaticEx>(threads, iterations),
        "rayon" => {
            let run = S::RAYON.unwrap_or_else(|| panic!("{} has no rayon variant", S::NAME));
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("cannot start rayon");
            (0..iterations).for_each(|_| timed::<S>(|| run(&pool)));
        }
        _ => panic!("SHAPES_PROFILE: unknown executor {executor:?}"),
    }
}

fn profile_rt<S: Shape, R: Rt>(threads: usize, iterations: usize) {
    let rt = R::start(threads);
    (0..iterations).for_each(|_| timed::<S>(|| S::run(&rt)));
    rt.shutdown();
}

/// Runs one iteration and, with `SHAPES_PROFILE_TIMES` set, prints its wall time per element
/// to stderr (a spread over iterations without criterion's statistics).
fn timed<S: Shape>(run: impl FnOnce()) {
    let start = std::time::Instant::now();
    run();
    if std::env::var_os("SHAPES_PROFILE_TIMES").is_some() {
        let per = start.elapsed().as_nanos() as f64 / S::ELEMENTS as f64;
        eprintln!("{} {per:.1} ns", S::NAME);
    }
}
