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
//! happen to interleave. The second argument, `high`, spawns every task with
//! [`Priority::High`](fastexec::Priority) instead of through the default path.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

const SPAWNS: usize = 100_000;
const TASKS: usize = 200;
const YIELDS: usize = 500;

fn main() {
    let shape = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "spawn_many_local".into());
    let ex = fastexec::Executor::builder().threads(1).build().unwrap();
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
                        fastexec::spawn(async move {
                            seen.fetch_add(1, Relaxed);
                        })
                        .detach();
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
