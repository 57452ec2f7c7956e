//! Which worker thread ran an attempt, as a small stable number, with the
//! thread's name kept aside for reports and traces.

use std::sync::{Arc, Mutex};
use std::thread;

/// Names of the threads that ran graph tasks, by lane number.
static NAMES: Mutex<Vec<Arc<str>>> = Mutex::new(Vec::new());

/// The lane of the calling thread. The graph uses only the executor's public
/// API, so it identifies workers by OS thread, numbered in the order they
/// first call this: a runner calls it each time it looks for ready tasks
/// (before it knows whether it will find one), a hand-off as it starts,
/// a driver before it takes a retry. So a thread that looked for a task
/// and found none has a number too, and numbers follow the first look,
/// not the first task run. After the first call on a thread this is one
/// thread-local read: it runs once per batch of attempts, not per attempt.
pub(crate) fn current() -> u32 {
    thread_local! {
        static LANE: u32 = register();
    }
    LANE.with(|lane| *lane)
}

/// The name of lane `index` (a thread that ran a graph task).
pub(crate) fn name(index: u32) -> Arc<str> {
    let names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    names
        .get(index as usize)
        .cloned()
        .unwrap_or_else(|| format!("thread-{index}").into())
}

fn register() -> u32 {
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let index = u32::try_from(names.len()).expect("more than u32::MAX threads");
    let name = match thread::current().name() {
        Some(n) => n.into(),
        None => format!("thread-{index}").into(),
    };
    names.push(name);
    index
}
