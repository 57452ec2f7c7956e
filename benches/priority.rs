//! What priorities and the other spawn options cost, per task, against the
//! default spawn path.
//!
//! `priority/spawn/<variant>`: one task spawns 10,000 empty tasks onto a
//! one-worker executor, done when all have run; criterion reports time per
//! task. Variants:
//!
//! * `default`: `fastexec::spawn`, the path every other bench measures;
//! * `builder_plain`: `task::Builder::new().spawn`, no options (should match
//!   `default`: it takes the same path);
//! * `high`, `low`: with a priority (the executor-wide priority queues);
//! * `named`: with a name (a task id and a `tracing` span, no subscriber);
//! * `latency_histogram`: default spawns on an executor with the latency
//!   histogram on (two clock reads and a stamp per task);
//! * `task_hooks`: default spawns on an executor with spawn and finish
//!   hooks that count.
//!
//! One worker, so that the figures compare paths rather than how two
//! threads happened to share the work; the 2 cores of the bench machines
//! are shared, so compare ratios from the same run.
//!
//! Run: `cargo bench --bench priority`

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fastexec::{task, Executor, Priority};

const TASKS: usize = 10_000;

/// How a variant spawns one task.
type Spawn = fn(&Arc<AtomicUsize>);

fn counted(ran: &Arc<AtomicUsize>) -> impl std::future::Future<Output = ()> + Send + 'static {
    let ran = ran.clone();
    async move {
        ran.fetch_add(1, Relaxed);
    }
}

fn with_default(ran: &Arc<AtomicUsize>) {
    fastexec::spawn(counted(ran)).detach();
}

fn with_plain_builder(ran: &Arc<AtomicUsize>) {
    task::Builder::new().spawn(counted(ran)).detach();
}

fn with_high(ran: &Arc<AtomicUsize>) {
    task::Builder::new()
        .priority(Priority::High)
        .spawn(counted(ran))
        .detach();
}

fn with_low(ran: &Arc<AtomicUsize>) {
    task::Builder::new()
        .priority(Priority::Low)
        .spawn(counted(ran))
        .detach();
}

fn with_name(ran: &Arc<AtomicUsize>) {
    task::Builder::new()
        .name("bench")
        .spawn(counted(ran))
        .detach();
}

/// One iteration: a task spawns `TASKS` tasks with `spawn`; block_on waits
/// for all of them.
fn spawn_all(executor: &Executor, spawn: Spawn) {
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    executor.block_on(async move {
        fastexec::spawn(async move {
            for _ in 0..TASKS {
                spawn(&counter);
            }
        })
        .detach();
    });
    assert_eq!(ran.load(Relaxed), TASKS);
}

fn one_worker() -> fastexec::Builder {
    Executor::builder().threads(1)
}

fn spawn_costs(c: &mut Criterion) {
    let plain = one_worker().build().unwrap();
    let timed = one_worker().latency_histogram(true).build().unwrap();
    let hooked = {
        let (spawned, finished) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        one_worker()
            .on_task_spawn(move |_| {
                spawned.fetch_add(1, Relaxed);
            })
            .on_task_finish(move |_| {
                finished.fetch_add(1, Relaxed);
            })
            .build()
            .unwrap()
    };
    let variants: [(&str, &Executor, Spawn); 7] = [
        ("default", &plain, with_default),
        ("builder_plain", &plain, with_plain_builder),
        ("high", &plain, with_high),
        ("low", &plain, with_low),
        ("named", &plain, with_name),
        ("latency_histogram", &timed, with_default),
        ("task_hooks", &hooked, with_default),
    ];
    let mut group = c.benchmark_group("priority/spawn");
    group.throughput(Throughput::Elements(TASKS as u64));
    for (name, executor, spawn) in variants {
        group.bench_function(name, |b| b.iter(|| spawn_all(executor, spawn)));
    }
    group.finish();
}

criterion_group!(benches, spawn_costs);
criterion_main!(benches);
