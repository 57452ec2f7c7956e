//! `spawn_blocking` runs on the executor's own pool, never on a worker.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use fastexec::Executor;

#[test]
fn blocking_job_does_not_occupy_the_only_worker() {
    let executor = Executor::builder().threads(1).build().unwrap();
    let (tx, rx) = mpsc::channel::<u32>();
    let got = executor.block_on(async move {
        // Blocks until a task on the single worker sends: it would deadlock
        // if the job ran on that worker.
        let job = fastexec::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(30)));
        fastexec::spawn(async move { tx.send(7).unwrap() }).detach();
        job.await.unwrap()
    });
    assert_eq!(got, Ok(7));
}

#[test]
fn panicking_job_reports_a_panic() {
    let executor = Executor::builder().threads(1).build().unwrap();
    let err = executor
        .block_on(executor.spawn_blocking(|| -> u8 { panic!("boom") }))
        .unwrap_err();
    assert!(err.is_panic());
    assert_eq!(err.to_string(), "task panicked: boom");
}

#[test]
fn dropping_the_executor_runs_queued_jobs_and_joins() {
    let ran = Arc::new(AtomicUsize::new(0));
    let executor = Executor::builder()
        .threads(1)
        .max_blocking_threads(1)
        .build()
        .unwrap();
    for _ in 0..8 {
        let ran = ran.clone();
        executor
            .spawn_blocking(move || ran.fetch_add(1, Ordering::SeqCst))
            .detach();
    }
    drop(executor);
    assert_eq!(ran.load(Ordering::SeqCst), 8);
}
