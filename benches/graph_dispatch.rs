//! Dispatch cost of the graph's ready set (`fastexec::graph::ReadySet`)
//! against seed 002's O(n) scan.
//!
//! * `graph_dispatch/one_level`: 100,000 tasks at the default priority,
//!   each ready after the previous one; insert all, then pop all. Per element:
//!   one insert plus one pop, the default path of a graph run. `warm` reuses
//!   one set (its memory stays allocated and mapped), `fresh` starts each
//!   iteration from a new set sized with `reserve_nodes` (as a new run
//!   would be: its first touch of the memory is measured).
//! * `graph_dispatch/random_aging`: 100,000 tasks with random priorities in
//!   -50..50, ready 10 µs apart, aging +1 per 10 ms; insert all, then pop all
//!   while the clock advances 10 µs per pop. Per element: insert plus pop.
//! * `graph_dispatch/steady_100k/{ready_set,naive_scan}`: 100,000 ready
//!   tasks with random priorities and ready times; one iteration dispatches
//!   one (the exact aging rule) and inserts a new one. The naive scan is the
//!   reference's algorithm; popping all 100,000 with it would take about
//!   100,000 / 2 times its per-dispatch figure, so only the steady state is
//!   measured.
//!
//! Run: `cargo bench --bench graph_dispatch -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use fastexec::graph::{ReadySet, TaskId};

const N: u32 = 100_000;
const INTERVAL: Duration = Duration::from_millis(10);
const BOOST: u32 = 1;

/// xorshift64: reproducible priorities without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn priority(&mut self) -> i32 {
        (self.next() % 100) as i32 - 50
    }
}

fn ids(n: u32) -> Vec<TaskId> {
    (0..n)
        .map(|i| TaskId::from(format!("task-{i:06}")))
        .collect()
}

fn one_level(c: &mut Criterion) {
    let ids = ids(N);
    let t0 = Instant::now();
    let times: Vec<Instant> = (0..N)
        .map(|i| t0 + Duration::from_nanos(u64::from(i)))
        .collect();
    let insert_pop_all = |set: &mut ReadySet| {
        for i in 0..N {
            set.insert(i, ids[i as usize].clone(), 0, times[i as usize]);
        }
        let now = times[N as usize - 1];
        while let Some(node) = set.pop_best(now, |_| true) {
            black_box(node);
        }
    };
    let mut group = c.benchmark_group("graph_dispatch/one_level");
    group.throughput(Throughput::Elements(u64::from(N)));
    let mut warm = ReadySet::new(INTERVAL, BOOST);
    group.bench_function("warm", |b| b.iter(|| insert_pop_all(&mut warm)));
    group.bench_function("fresh", |b| {
        b.iter_batched_ref(
            || {
                let mut set = ReadySet::new(INTERVAL, BOOST);
                set.reserve_nodes(N as usize);
                set
            },
            insert_pop_all,
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn random_aging(c: &mut Criterion) {
    let ids = ids(N);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let priorities: Vec<i32> = (0..N).map(|_| rng.priority()).collect();
    let t0 = Instant::now();
    let step = Duration::from_micros(10);
    let mut group = c.benchmark_group("graph_dispatch");
    group.throughput(Throughput::Elements(u64::from(N)));
    group.bench_function("random_aging", |b| {
        b.iter_batched_ref(
            || ReadySet::new(INTERVAL, BOOST),
            |set| {
                for i in 0..N {
                    let at = t0 + step * i;
                    set.insert(i, ids[i as usize].clone(), priorities[i as usize], at);
                }
                let mut now = t0 + step * N;
                while let Some(node) = set.pop_best(now, |_| true) {
                    black_box(node);
                    now += step;
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// Seed 002's dispatch: scan every ready task with the exact formula.
struct NaiveScan {
    tasks: Vec<(u32, TaskId, i32, Instant)>,
}

impl NaiveScan {
    fn effective(base: i32, ready_since: Instant, now: Instant) -> i64 {
        let waited = now.saturating_duration_since(ready_since).as_nanos() / INTERVAL.as_nanos();
        i64::from(base) + waited as i64 * i64::from(BOOST)
    }

    fn pop_best(&mut self, now: Instant) -> Option<u32> {
        let mut best: Option<usize> = None;
        for (i, (_, id, base, rs)) in self.tasks.iter().enumerate() {
            let better = match best {
                None => true,
                Some(b) => {
                    let (_, bid, bbase, brs) = &self.tasks[b];
                    let (f, bf) = (
                        Self::effective(*base, *rs, now),
                        Self::effective(*bbase, *brs, now),
                    );
                    (f, std::cmp::Reverse(rs), std::cmp::Reverse(id))
                        > (bf, std::cmp::Reverse(brs), std::cmp::Reverse(bid))
                }
            };
            if better {
                best = Some(i);
            }
        }
        best.map(|i| self.tasks.swap_remove(i).0)
    }
}

fn steady(c: &mut Criterion) {
    let ids = ids(2 * N);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let t0 = Instant::now();
    let start: Vec<(i32, Instant)> = (0..N)
        .map(|_| {
            (
                rng.priority(),
                t0 + Duration::from_micros(rng.next() % 1_000_000),
            )
        })
        .collect();
    let mut group = c.benchmark_group("graph_dispatch/steady_100k");
    group.throughput(Throughput::Elements(1));

    let mut set = ReadySet::new(INTERVAL, BOOST);
    for (i, (p, at)) in start.iter().enumerate() {
        set.insert(i as u32, ids[i].clone(), *p, *at);
    }
    let mut now = t0 + Duration::from_secs(1);
    group.bench_function("ready_set", |b| {
        b.iter(|| {
            now += Duration::from_micros(10);
            let node = set.pop_best(now, |_| true).unwrap();
            set.insert(node, ids[node as usize].clone(), rng.priority(), now);
        })
    });

    let mut naive = NaiveScan {
        tasks: start
            .iter()
            .enumerate()
            .map(|(i, (p, at))| (i as u32, ids[i].clone(), *p, *at))
            .collect(),
    };
    let mut now = t0 + Duration::from_secs(1);
    group.bench_function("naive_scan", |b| {
        b.iter(|| {
            now += Duration::from_micros(10);
            let node = naive.pop_best(now).unwrap();
            naive
                .tasks
                .push((node, ids[node as usize].clone(), rng.priority(), now));
        })
    });
    group.finish();
}

criterion_group!(benches, one_level, random_aging, steady);
criterion_main!(benches);
