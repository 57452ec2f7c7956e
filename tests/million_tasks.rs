//! A million tiny tasks: every one runs, and `block_on` waits for all.

mod support;

use std::sync::atomic::Ordering::Relaxed;

use fastexec::spawn;
use support::{counter, executor, get, with_timeout};

const TASKS: usize = 1_000_000;

/// Spawned from the `block_on` root, on the caller's thread (the injector
/// path).
#[test]
fn million_tasks_from_block_on_root() {
    with_timeout(|| {
        let ex = executor(2);
        let count = counter();
        let c = count.clone();
        ex.block_on(async move {
            for _ in 0..TASKS {
                let c = c.clone();
                spawn(async move {
                    c.fetch_add(1, Relaxed);
                })
                .detach();
            }
        });
        assert_eq!(get(&count), TASKS);
    })
}

/// Spawned from inside a task, a thousand per parent (the local queue and
/// its overflow path, with stealing by the other worker).
#[test]
fn million_tasks_from_tasks() {
    with_timeout(|| {
        let ex = executor(2);
        let count = counter();
        let c = count.clone();
        ex.block_on(async move {
            for _ in 0..TASKS / 1000 {
                let c = c.clone();
                spawn(async move {
                    for _ in 0..1000 {
                        let c = c.clone();
                        spawn(async move {
                            c.fetch_add(1, Relaxed);
                        })
                        .detach();
                    }
                })
                .detach();
            }
        });
        assert_eq!(get(&count), TASKS);
    })
}
