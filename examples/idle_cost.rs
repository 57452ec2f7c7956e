//! What an idle worker costs: how often the workers of a two-worker
//! executor go to sleep during one second with every worker idle, and
//! during one second in which one task keeps one worker busy while the
//! other has nothing to do.
//!
//! ```text
//! cargo run --release --example idle_cost
//! ```
//!
//! With every worker asleep nothing wakes them (no polling thread): the
//! few parks counted then are the workers settling after the `block_on`
//! before the span, and their number does not grow with the span. While
//! one worker is busy, one idle worker keeps the watch (`idle.rs`): it
//! wakes about once per watch interval (1 ms) to look for a task left alone
//! behind the busy one's poll, so its parks count those wake-ups.

use std::time::{Duration, Instant};

use fastexec::Executor;

const SPAN: Duration = Duration::from_secs(1);

fn main() {
    let ex = Executor::builder()
        .threads(2)
        .build()
        .expect("cannot start the executor");
    // Let the start-up settle: both workers run once and go to sleep.
    ex.block_on(async {});

    let before = ex.metrics().parks;
    std::thread::sleep(SPAN);
    let idle = ex.metrics().parks - before;

    let before = ex.metrics().parks;
    ex.block_on(async {
        let started = Instant::now();
        fastexec::spawn(async move {
            while started.elapsed() < SPAN {
                std::hint::spin_loop();
            }
        })
        .await
        .expect("the busy task panicked");
    });
    let busy = ex.metrics().parks - before;

    println!("parks in {SPAN:?}, 2 workers:");
    println!("  every worker idle:               {idle}");
    println!("  one worker busy, the other idle: {busy}");
}
