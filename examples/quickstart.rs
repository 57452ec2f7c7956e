//! A tour of fastexec on a real job: count the primes below 2,000,000 by
//! splitting the range into chunks, each chunk a task that spawns a task per
//! sub-range, and check the answer against a sequential count.
//!
//! Run: `cargo run --release --example quickstart`

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

const LIMIT: u64 = 2_000_000;
const CHUNK: u64 = 100_000;
const SUB: u64 = 10_000;

fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    (2..).take_while(|d| d * d <= n).all(|d| n % d != 0)
}

fn count_primes(range: std::ops::Range<u64>) -> u64 {
    range.filter(|&n| is_prime(n)).count() as u64
}

fn main() {
    let executor = fastexec::Executor::builder()
        .build()
        .expect("start workers");
    println!(
        "fastexec quickstart on {} worker threads",
        executor.threads()
    );

    // 1. Structured concurrency: block_on waits for every task spawned
    //    under it, grandchildren included, even detached ones.
    let total = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let sum = total.clone();
    executor.block_on(async move {
        for chunk in (0..LIMIT).step_by(CHUNK as usize) {
            let sum = sum.clone();
            fastexec::spawn(async move {
                for sub in (chunk..chunk + CHUNK).step_by(SUB as usize) {
                    let sum = sum.clone();
                    fastexec::spawn(async move {
                        sum.fetch_add(count_primes(sub..sub + SUB), Ordering::Relaxed);
                    })
                    .detach();
                }
            })
            .detach();
        }
    });
    let parallel = started.elapsed();
    let primes = total.load(Ordering::Relaxed);
    println!(
        "primes below {LIMIT}: {primes} ({} tasks, {:.1} ms)",
        LIMIT / CHUNK + LIMIT / SUB,
        parallel.as_secs_f64() * 1e3
    );

    // 2. Join handles and join!: results come back typed, as a tuple.
    let low = executor.spawn(async { count_primes(0..LIMIT / 2) });
    let high = executor.spawn(async { count_primes(LIMIT / 2..LIMIT) });
    let (low, high) = executor.block_on(async { fastexec::join!(low, high) });
    let (low, high) = (low.unwrap(), high.unwrap());
    println!("halves: {low} + {high} = {}", low + high);

    // 3. A task group: wait for a set of tasks and their descendants.
    let group = fastexec::TaskGroup::new();
    let twins = Arc::new(AtomicU64::new(0));
    for start in (0..LIMIT).step_by(CHUNK as usize) {
        let twins = twins.clone();
        group
            .spawn(async move {
                let found = (start..start + CHUNK)
                    .filter(|&n| is_prime(n) && is_prime(n + 2))
                    .count() as u64;
                twins.fetch_add(found, Ordering::Relaxed);
            })
            .detach();
    }
    executor.block_on(group.wait());
    println!(
        "twin-prime pairs below {LIMIT}: {}",
        twins.load(Ordering::Relaxed)
    );

    // Check against one thread.
    let started = Instant::now();
    let sequential = count_primes(0..LIMIT);
    let single = started.elapsed();
    assert_eq!(primes, sequential, "parallel and sequential counts differ");
    assert_eq!(low + high, sequential);
    println!(
        "sequential check: {sequential} in {:.1} ms (speed-up {:.2}x)",
        single.as_secs_f64() * 1e3,
        single.as_secs_f64() / parallel.as_secs_f64()
    );
}
