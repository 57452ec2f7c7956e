//! Memory per pending task: a million tasks parked on a never-ready future, on fastexec and
//! its async peers. Prints heap bytes per task (from a counting global allocator) and resident
//! bytes per task (from /proc/self/statm). Not a criterion bench: one measurement, printed.
//!
//!     cargo bench --bench pending_memory

mod common;

use common::alloc::{live_bytes, start_counting, Counting};
use common::{AsyncEx, Fastexec, Rt, StaticEx, Tokio, STUCK};
use std::mem::size_of;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TASKS: usize = 1_000_000;
const THREADS: usize = 2;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Each executor is measured in a child process of its own: memory freed by one executor stays
/// resident in the allocator and would hide the next one's growth from RSS.
const KINDS: [(&str, fn()); 4] = [
    (Fastexec::NAME, measure::<Fastexec>),
    (Tokio::NAME, measure::<Tokio>),
    (AsyncEx::NAME, measure::<AsyncEx>),
    (StaticEx::NAME, measure::<StaticEx>),
];

fn main() {
    let child = std::env::args().find_map(|arg| arg.strip_prefix("--measure=").map(String::from));
    match child {
        Some(name) => KINDS
            .iter()
            .find(|(kind, _)| *kind == name)
            .expect("unknown kind")
            .1(),
        None => run_children(),
    }
}

fn run_children() {
    println!("{TASKS} tasks parked on a never-ready future, {THREADS} worker threads");
    println!(
        "{:<16} {:>12} {:>12} {:>12}",
        "executor", "heap B/task", "RSS B/task", "handle B"
    );
    let exe = std::env::current_exe().expect("own path");
    for (kind, _) in KINDS {
        let status = std::process::Command::new(&exe)
            .arg(format!("--measure={kind}"))
            .status()
            .expect("cannot run child");
        assert!(status.success(), "measuring {kind} failed");
    }
}

fn measure<R: Rt>() {
    start_counting();
    let rt = R::start(THREADS);
    // Allocated before the baseline so the caller's handle storage is not counted as heap;
    // the handles are kept because dropping one cancels the task on async-executor.
    let mut handles = Vec::with_capacity(TASKS);
    let (heap_before, rss_before) = (live_bytes(), rss_bytes());
    let parked = Arc::new(AtomicUsize::new(0));
    for _ in 0..TASKS {
        handles.push(rt.spawn(park(parked.clone())));
    }
    wait_for(|| parked.load(Relaxed) == TASKS);
    let heap = (live_bytes() - heap_before) as usize;
    // The handle slots get paged in while we push, so RSS counts them: take them off.
    let handle = size_of::<R::Handle<()>>();
    let rss = (rss_bytes() - rss_before) / TASKS;
    let rss = rss.saturating_sub(handle);
    println!(
        "{:<16} {:>12} {:>12} {:>12}",
        R::NAME,
        heap / TASKS,
        rss,
        handle
    );
    drop(handles);
    rt.shutdown();
}

/// Counts itself as parked once it has been polled, then never completes.
async fn park(parked: Arc<AtomicUsize>) {
    parked.fetch_add(1, Relaxed);
    std::future::pending::<()>().await;
}

fn wait_for(ready: impl Fn() -> bool) {
    let deadline = Instant::now() + STUCK;
    while !ready() {
        assert!(Instant::now() < deadline, "tasks were not all polled");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Resident set size; statm counts pages, and x86-64 Linux pages are 4 KiB.
fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("needs Linux /proc");
    let resident = statm
        .split_whitespace()
        .nth(1)
        .expect("statm has a resident field");
    resident.parse::<usize>().expect("statm is numeric") * 4096
}
