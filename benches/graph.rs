//! The graph layer (`fastexec::graph`) against hand-written counter-release DAGs on fastexec's
//! executor, tokio (multi-thread runtime), async-executor and rayon, in the same run, at 1 and 2
//! worker threads: a million-node chain, a fan-out/fan-in (1 -> 10,000 -> 1) and the 100×100
//! lattice. Criterion reports time per node (`Throughput::Elements`). The graph runs with both
//! body kinds: async (`Task::new`, row `fastexec-graph`) and sync (`Task::sync`, row
//! `fastexec-graph-sync`), each counting itself in an atomic on a cache line of its own
//! ([`Tally`]).
//!
//! Before the timed benches it prints the peak heap bytes per node of one run of each shape
//! (graph built and run, report taken), from the counting allocator in `common/alloc.rs`.
//!
//!     cargo bench --bench graph -- [FILTER] [--warm-up-time 1 --measurement-time 3]
//!
//! At 1 thread two `floor` rows run each shape in a plain single-threaded loop, with no lock,
//! no executor and no state machine (`common/floor.rs`). Row `floor` does per node what a
//! graph's report needs, all on one thread (one `Instant::now`, the body called through its
//! box, the task's record, its dependents' counters; the bodies dropped at the end). A graph
//! run can come in under it: its worker reads the time-stamp counter instead of the clock and
//! its waiting thread drops the bodies. Row `floor-bare` keeps only what no worker can skip
//! (the body's call, its outcome, the counters; no clock, bodies dropped untimed): no graph
//! layer's span from first task to last can be shorter on the machine at hand.
//!
//! `GRAPH_PROFILE=shape/threads/runs[/sync|/floor|/floor-bare]` (shape: `lattice`, `fan` or
//! `chain`; `/sync` for sync bodies, async ones otherwise; `/floor` and `/floor-bare` for the
//! floor loops, threads ignored) instead runs the shape's graph `runs` times outside
//! criterion, each built untimed on the main thread, and prints the min and median ns per
//! node of the runs, then the same for the span from the first task's start to the last one's
//! end (the wall time without the run's set-up, the worker's wake-up and the waiter's, read
//! from the report); under `valgrind --tool=callgrind --separate-threads=yes` the worker
//! thread's total divided by `runs * nodes` is the instructions per node that BENCHMARKS.md
//! quotes:
//!
//!     GRAPH_PROFILE=lattice/1/10 cargo bench --bench graph

mod common;

use common::alloc::{peak_bytes, start_counting, stop_counting, Counting};
use common::dag::{run_counter_dag, run_counter_dag_rayon, Chain, DagShape, FanOutIn, Lattice};
use common::floor::Floor;
use common::{AsyncEx, Fastexec, Rt, Tokio};
use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use crossbeam_utils::CachePadded;
use fastexec::graph::{Graph, Report, Task, TaskId};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const THREADS: [usize; 2] = [1, 2];

/// A shape to run through the graph layer: its name and whether an iteration is long.
trait GraphShape: DagShape {
    const NAME: &'static str;
    const LONG: bool = false;
}

impl GraphShape for Chain {
    const NAME: &'static str = "graph_chain_1m";
    const LONG: bool = true;
}

impl GraphShape for FanOutIn {
    const NAME: &'static str = "graph_fan_out_in_10k";
}

impl GraphShape for Lattice {
    const NAME: &'static str = "graph_lattice_100x100";
}

/// Which kind of body the bench's tasks have.
#[derive(Clone, Copy)]
enum Kind {
    Async,
    Sync,
}

impl Kind {
    const ALL: [Kind; 2] = [Kind::Async, Kind::Sync];

    /// The criterion row (and `GRAPH_PROFILE` label) of graphs of this kind.
    fn row(self) -> &'static str {
        match self {
            Kind::Async => "fastexec-graph",
            Kind::Sync => "fastexec-graph-sync",
        }
    }

    /// Task `id`, whose body counts itself in `ran`.
    fn task(self, id: &TaskId, ran: Arc<Tally>) -> Task<()> {
        match self {
            Kind::Async => Task::new(id, move |_| {
                ran.fetch_add(1, Relaxed);
                std::future::ready(Ok(()))
            }),
            Kind::Sync => Task::sync(id, move |_| {
                ran.fetch_add(1, Relaxed);
                Ok(())
            }),
        }
    }
}

/// The count a graph's bodies bump, on a cache line of its own (`CachePadded` aligns to 128 on
/// x86-64, whose prefetcher fetches lines in pairs). In an `Arc` the reference counts sit just
/// before the value, and a run's waiting thread decrements them (dropping bodies, each holding
/// a clone) while the worker's bodies bump the count: on one line, the bench's own bookkeeping
/// made the line move between the two cores. Padded, the sync lattice's wall time at 1 thread
/// went down by 4 ns per node (10 interleaved rounds, means of per-run minima; BENCHMARKS.md).
type Tally = CachePadded<AtomicUsize>;

/// The shape as a graph: node `i` is task `"i"`, after its predecessors; each body counts
/// itself in `ran`. Tasks are added one at a time in index order (a topological order).
fn build<S: DagShape>(ran: &Arc<Tally>, kind: Kind) -> Graph<()> {
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); S::NODES];
    for idx in 0..S::NODES {
        S::successors(idx, |next| preds[next].push(idx as u32));
    }
    let ids: Vec<TaskId> = (0..S::NODES).map(|i| TaskId::from(i.to_string())).collect();
    let mut g = Graph::new();
    for (idx, deps) in preds.iter().enumerate() {
        let task = kind.task(&ids[idx], ran.clone());
        g.add(task.after(deps.iter().map(|&d| &ids[d as usize])))
            .expect("a valid DAG");
    }
    g
}

/// Runs a built graph on `rt`, checks that every node ran once and returns the report, for the
/// caller to drop untimed (criterion's `iter_batched` drops what a routine returns after its
/// measurement).
fn run_graph<S: DagShape>(rt: &Fastexec, (g, ran): (Graph<()>, Arc<Tally>)) -> Report<()> {
    let report = rt.block_on(g.run());
    assert_eq!(ran.load(Relaxed), S::NODES, "not every node ran");
    report
}

fn bench_graph<S: GraphShape>(c: &mut Criterion) {
    let mut group = c.benchmark_group(S::NAME);
    group.throughput(Throughput::Elements(S::NODES as u64));
    if S::LONG {
        group.sampling_mode(SamplingMode::Flat).sample_size(10);
    }
    for threads in THREADS {
        let rt = Fastexec::start(threads);
        for kind in Kind::ALL {
            group.bench_function(BenchmarkId::new(kind.row(), threads), |b| {
                b.iter_batched(
                    || {
                        let ran = Arc::new(Tally::default());
                        (build::<S>(&ran, kind), ran)
                    },
                    |built| run_graph::<S>(&rt, built),
                    BatchSize::PerIteration,
                )
            });
        }
        bench_peer::<S, Fastexec>(&mut group, rt);
        bench_peer::<S, Tokio>(&mut group, Tokio::start(threads));
        bench_peer::<S, AsyncEx>(&mut group, AsyncEx::start(threads));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("cannot start rayon");
        let id = BenchmarkId::new("rayon-counter", threads);
        group.bench_function(id, |b| b.iter(|| run_counter_dag_rayon::<S>(&pool)));
    }
    group.bench_function(BenchmarkId::new("floor", 1), |b| {
        b.iter_batched(Floor::build::<S>, Floor::run::<S>, BatchSize::PerIteration)
    });
    group.bench_function(BenchmarkId::new("floor-bare", 1), |b| {
        b.iter_batched(
            Floor::build::<S>,
            Floor::run_bare::<S>,
            BatchSize::PerIteration,
        )
    });
    // Building the graph (ids, validation, index), single-threaded, no executor.
    group.bench_function(BenchmarkId::new("fastexec-graph-build", 1), |b| {
        let ran = Arc::new(Tally::default());
        b.iter_batched(
            || (),
            |()| build::<S>(&ran, Kind::Async),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// The hand-written counter DAG on an executor, built once per thread count.
fn bench_peer<S: DagShape, R: Rt>(group: &mut BenchmarkGroup<WallTime>, rt: R) {
    let id = BenchmarkId::new(format!("{}-counter", R::NAME), rt.threads());
    group.bench_function(id, |b| b.iter(|| run_counter_dag::<S, R>(&rt)));
    rt.shutdown();
}

/// Peak heap bytes per node of one run: the graph built, run at 1 thread and its report
/// taken, against the counter DAG on fastexec's executor and on tokio.
fn print_memory() {
    println!("peak heap bytes per node, 1 worker thread (graph: built + run + report)");
    println!(
        "{:<24} {:>10} {:>11} {:>16} {:>14}",
        "shape", "graph", "graph-sync", "fastexec-counter", "tokio-counter"
    );
    memory_row::<Chain>();
    memory_row::<FanOutIn>();
    memory_row::<Lattice>();
}

fn memory_row<S: GraphShape>() {
    let fastexec = Fastexec::start(1);
    let tokio = Tokio::start(1);
    let per_node = |bytes: isize| bytes as f64 / S::NODES as f64;
    let graph = |kind| {
        measure_peak(|| {
            let ran = Arc::new(Tally::default());
            let report = fastexec.block_on(build::<S>(&ran, kind).run());
            assert!(report.is_success());
        })
    };
    let (graph, graph_sync) = (graph(Kind::Async), graph(Kind::Sync));
    let counter = measure_peak(|| run_counter_dag::<S, Fastexec>(&fastexec));
    let tokio_counter = measure_peak(|| run_counter_dag::<S, Tokio>(&tokio));
    println!(
        "{:<24} {:>10.0} {:>11.0} {:>16.0} {:>14.0}",
        S::NAME,
        per_node(graph),
        per_node(graph_sync),
        per_node(counter),
        per_node(tokio_counter)
    );
    fastexec.shutdown();
    tokio.shutdown();
}

fn measure_peak(f: impl FnOnce()) -> isize {
    start_counting();
    f();
    stop_counting();
    peak_bytes()
}

fn main() {
    if let Ok(spec) = std::env::var("GRAPH_PROFILE") {
        return profile(&spec);
    }
    let mut c = Criterion::default().configure_from_args();
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        print_memory();
    }
    bench_graph::<Lattice>(&mut c);
    bench_graph::<FanOutIn>(&mut c);
    bench_graph::<Chain>(&mut c);
    c.final_summary();
}

/// What a `GRAPH_PROFILE` runs: the graph with one kind of body, or one of the floor loops.
#[derive(Clone, Copy)]
enum Profiled {
    Graph(Kind),
    Floor { bare: bool },
}

/// `GRAPH_PROFILE=shape/threads/runs[/sync|/floor|/floor-bare]`: see the module docs.
fn profile(spec: &str) {
    let parts: Vec<&str> = spec.split('/').collect();
    let (shape, threads, runs, what) = match parts[..] {
        [shape, threads, runs] => (shape, threads, runs, Profiled::Graph(Kind::Async)),
        [shape, threads, runs, "sync"] => (shape, threads, runs, Profiled::Graph(Kind::Sync)),
        [shape, threads, runs, "floor"] => (shape, threads, runs, Profiled::Floor { bare: false }),
        [shape, threads, runs, "floor-bare"] => {
            (shape, threads, runs, Profiled::Floor { bare: true })
        }
        _ => {
            panic!("GRAPH_PROFILE={spec:?}: expected shape/threads/runs[/sync|/floor|/floor-bare]")
        }
    };
    let threads: usize = threads
        .parse()
        .expect("GRAPH_PROFILE threads: a whole number");
    let runs: usize = runs.parse().expect("GRAPH_PROFILE runs: a whole number");
    match shape {
        "lattice" => profile_shape::<Lattice>(threads, runs, what),
        "fan" => profile_shape::<FanOutIn>(threads, runs, what),
        "chain" => profile_shape::<Chain>(threads, runs, what),
        _ => panic!("GRAPH_PROFILE: unknown shape {shape:?} (lattice, fan or chain)"),
    }
}

fn profile_shape<S: GraphShape>(threads: usize, runs: usize, what: Profiled) {
    let kind = match what {
        Profiled::Graph(kind) => kind,
        Profiled::Floor { bare } => return profile_floor::<S>(runs, bare),
    };
    let rt = Fastexec::start(threads);
    let (ns_per_node, phases): (Vec<f64>, Vec<Phases>) = (0..runs.max(1))
        .map(|_| {
            let ran = Arc::new(Tally::default());
            let built = (build::<S>(&ran, kind), ran);
            let (start, since) = (std::time::Instant::now(), std::time::SystemTime::now());
            let report = run_graph::<S>(&rt, built);
            let wall = start.elapsed();
            let phases = Phases::of(&report, since, wall);
            drop(report);
            (wall.as_nanos() as f64 / S::NODES as f64, phases)
        })
        .unzip();
    rt.shutdown();
    let what = format!("{} at {threads} thread(s)", kind.row());
    print_runs::<S>(&what, ns_per_node);
    Phases::print::<S>(phases);
}

/// Where a run's wall time went, read from its report: from its start (`Graph::start`, read
/// on the wall clock, `since` being the caller's reading) to the first task's start (the run's
/// set-up and a worker's wake-up), from there to the last task's end (the tasks themselves,
/// and the graph layer between them), and after (the waiting thread's wake-up, the rest of
/// `wait_all` and `block_on`). The middle one is the graph layer's cost per node without the
/// one-off wake-ups, which belong to the executor and the machine.
struct Phases {
    before_first: std::time::Duration,
    tasks: std::time::Duration,
    after_last: std::time::Duration,
}

impl Phases {
    fn of(report: &Report<()>, since: std::time::SystemTime, wall: std::time::Duration) -> Self {
        let first = report.tasks().iter().filter_map(|t| t.start).min();
        let last = report.tasks().iter().filter_map(|t| t.end).max();
        let (first, last) = (first.expect("tasks started"), last.expect("tasks ended"));
        // From `block_on`'s call to `Graph::start`: a few microseconds, so zero if the two
        // clocks disagree by more.
        let before_run = report
            .started_at()
            .duration_since(since)
            .unwrap_or_default();
        Phases {
            before_first: first,
            tasks: last - first,
            after_last: wall.saturating_sub(before_run + last),
        }
    }

    fn print<S: GraphShape>(mut phases: Vec<Self>) {
        let mid = phases.len() / 2;
        let per_node = |d: std::time::Duration| d.as_nanos() as f64 / S::NODES as f64;
        phases.sort_by_key(|p| p.tasks);
        let (min, median) = (per_node(phases[0].tasks), per_node(phases[mid].tasks));
        phases.sort_by_key(|p| p.before_first);
        let before = phases[mid].before_first;
        phases.sort_by_key(|p| p.after_last);
        let after = phases[mid].after_last;
        println!(
            "  first start to last end: min {min:.0} ns per node, median {median:.0}; \
             median {before:.0?} before the first start, {after:.0?} after the last end"
        );
    }
}

/// [`profile_shape`] of a floor loop (`common/floor.rs`, the bare one if `bare`), on the
/// calling thread.
fn profile_floor<S: GraphShape>(runs: usize, bare: bool) {
    let ns_per_node = (0..runs.max(1))
        .map(|_| {
            let floor = Floor::build::<S>();
            let start = std::time::Instant::now();
            let kept = if bare {
                floor.run_bare::<S>()
            } else {
                (floor.run::<S>(), Vec::new())
            };
            let ns = start.elapsed().as_nanos() as f64 / S::NODES as f64;
            drop(kept);
            ns
        })
        .collect();
    let what = if bare { "floor-bare" } else { "floor" };
    print_runs::<S>(&format!("{what}, one thread"), ns_per_node);
}

/// Prints the min and median of `ns_per_node`, one figure per run.
fn print_runs<S: GraphShape>(what: &str, mut ns_per_node: Vec<f64>) {
    ns_per_node.sort_by(f64::total_cmp);
    println!(
        "{} ({what}), {} runs: min {:.0} ns per node, median {:.0}",
        S::NAME,
        ns_per_node.len(),
        ns_per_node[0],
        ns_per_node[ns_per_node.len() / 2],
    );
}
