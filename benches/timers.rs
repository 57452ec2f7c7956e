//! Timer costs and lateness, through the public `fastexec::time` API.
//!
//! * `timers/insert_cancel`: a sleep registered by its first poll, then
//!   dropped (which cancels it), with 1,000,000 other timers pending.
//! * `timers/insert_fire`: 10,000 tasks each sleeping until one common
//!   deadline 1 ms ahead, fired together by the executor. The time includes
//!   that 1 ms and each task's spawn and join, so per element it is an
//!   upper bound on insert + fire.
//! * Lateness: 10,000 concurrent sleeps of 1–50 ms on a 2-thread executor;
//!   how long after its deadline each one resumed, p50 and p99 (printed, not
//!   a criterion figure: lateness is a distribution, not a cost).
//!
//! Run: `cargo bench --bench timers`

use std::future::Future;
use std::pin::Pin;
use std::task::Context;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use fastexec::time::{sleep, sleep_until, Sleep};
use fastexec::Executor;
use futures::task::noop_waker_ref;

/// Registers `sleep` in the current executor's timer queue.
fn register(sleep: &mut Sleep) {
    let mut cx = Context::from_waker(noop_waker_ref());
    assert!(Pin::new(sleep).poll(&mut cx).is_pending());
}

fn insert_cancel(c: &mut Criterion) {
    let executor = Executor::builder().threads(1).build().unwrap();
    let mut group = c.benchmark_group("timers");
    group.throughput(Throughput::Elements(1));
    executor.block_on(async {
        // A million pending timers around the measured one.
        let mut background: Vec<Sleep> = (0..1_000_000u64)
            .map(|i| sleep(Duration::from_secs(60) + Duration::from_micros(i)))
            .collect();
        background.iter_mut().for_each(register);
        group.bench_function("insert_cancel", |b| {
            b.iter_batched(
                || sleep(Duration::from_secs(30)),
                |mut one| {
                    register(&mut one);
                    drop(one);
                },
                BatchSize::SmallInput,
            )
        });
    });
    group.finish();
}

fn insert_fire(c: &mut Criterion) {
    const N: u64 = 10_000;
    let executor = Executor::builder().threads(1).build().unwrap();
    let mut group = c.benchmark_group("timers");
    group.throughput(Throughput::Elements(N));
    group.bench_function("insert_fire", |b| {
        b.iter(|| {
            executor.block_on(async {
                let deadline = Instant::now() + Duration::from_millis(1);
                let handles: Vec<_> = (0..N)
                    .map(|_| fastexec::spawn(sleep_until(deadline)))
                    .collect();
                for handle in handles {
                    handle.await.unwrap();
                }
            })
        })
    });
    group.finish();
}

fn lateness() {
    const N: usize = 10_000;
    let executor = Executor::builder().threads(2).build().unwrap();
    let mut late: Vec<Duration> = executor.block_on(async {
        let handles: Vec<_> = (0..N)
            .map(|i| {
                let deadline =
                    Instant::now() + Duration::from_micros(1_000 + (i as u64 * 4_900) % 49_000);
                fastexec::spawn(async move {
                    sleep_until(deadline).await;
                    Instant::now() - deadline
                })
            })
            .collect();
        let mut late = Vec::with_capacity(N);
        for handle in handles {
            late.push(handle.await.unwrap());
        }
        late
    });
    late.sort_unstable();
    let p = |q: f64| late[((N as f64 - 1.0) * q) as usize];
    println!(
        "timers/lateness: {N} concurrent sleeps of 1-50 ms, 2 workers: p50 {:?}, p99 {:?}, max {:?}",
        p(0.50),
        p(0.99),
        late[N - 1]
    );
}

fn benches(c: &mut Criterion) {
    lateness();
    insert_cancel(c);
    insert_fire(c);
}

criterion_group!(timer_benches, benches);
criterion_main!(timer_benches);
