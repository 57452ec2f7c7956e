//! A fixed amount of work for instruction counting: run it under
//! `valgrind --tool=callgrind` and divide the total by the task count.
//!
//! ```text
//! cargo build --release --example per_task_cost
//! valgrind --tool=callgrind target/release/examples/per_task_cost spawn_many_local
//! valgrind --tool=callgrind target/release/examples/per_task_cost yield_many
//! ```
//!
//! One worker thread, so the count does not depend on how two threads
//! happen to interleave. An optional second argument picks another spawn
//! path for `spawn_many_local`: `high` or `low` (a priority), `named`, or an
//! executor with `latency` (the histogram) or `hooks` (spawn and finish
//! hooks) turned on.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use fastexec::{task, Priority};

const SPAWNS: usize = 100_000;
const TASKS: usize = 200;
const YIELDS: usize = 500;

fn main() {
    let shape = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "spawn_many_local".into());
    let variant = std::env::args().nth(2).unwrap_or_default();
    let builder = fastexec::Executor::builder().threads(1);
    let ex = match variant.as_str() {
        "latency" => builder.latency_histogram(true),
        "hooks" => builder.on_task_spawn(|_| {}).on_task_finish(|_| {}),
        _ => builder,
    }
    .build()
    .unwrap();
    let options = match variant.as_str() {
        "high" => task::Builder::new().priority(Priority::High),
        "low" => task::Builder::new().priority(Priority::Low),
        "named" => task::Builder::new().name("task"),
        _ => task::Builder::new(),
    };
    match shape.as_str() {
        "spawn_many_local" => {
            let ran = Arc::new(AtomicUsize::new(0));
            let seen = ran.clone();
            // As in benches/shapes.rs: one task spawns them all, so they go
            // through the worker's own ring.
            ex.block_on(async move {
                fastexec::spawn(async move {
                    for _ in 0..SPAWNS {
                        let seen = seen.clone();
                        let body = async move {
                            seen.fetch_add(1, Relaxed);
                        };
                        if variant.is_empty() {
                            fastexec::spawn(body).detach();
                        } else {
                            options.spawn(body).detach();
                        }
                    }
                })
                .detach();
            });
            assert_eq!(ran.load(Relaxed), SPAWNS);
            println!("{SPAWNS} tasks");
        }
        "yield_many" => {
            ex.block_on(async {
                for _ in 0..TASKS {
                    fastexec::spawn(async {
                        for _ in 0..YIELDS {
                            fastexec::yield_now().await;
                        }
                    })
                    .detach();
                }
            });
            println!("{} polls", TASKS * (YIELDS + 1));
        }
        other => panic!("unknown shape {other:?}: spawn_many_local or yield_many"),
    }
}
