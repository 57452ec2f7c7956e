//! A blocking job inside `fastexec::block_on(sleep(..))` when its executor
//! is dropped finishes its sleep: the drop waits for the blocking jobs, and
//! such a `block_on` is not a task's (the crate docs say `block_on` panics
//! at shutdown only when called from inside a task). Under the simple
//! scheduler it used to panic ("the executor shut down while a task was
//! blocked in block_on"); the work-stealing one is the control
//! (`time_blocking_job_sleep_at_shutdown.rs`).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use fastexec::time::sleep;

mod support;
use support::{panic_text, with_timeout};

const SLEEP: Duration = Duration::from_millis(300);

fn run(executor: fastexec::Executor) -> Result<Duration, String> {
    let (registered_tx, registered_rx) = mpsc::channel();
    let job = executor.spawn_blocking(move || {
        let started = Instant::now();
        fastexec::block_on(async move {
            let sleep = sleep(SLEEP);
            registered_tx.send(()).unwrap();
            sleep.await
        });
        started.elapsed()
    });
    registered_rx.recv().unwrap();
    drop(executor);
    match futures::executor::block_on(job) {
        Ok(slept) => Ok(slept),
        Err(e) if e.is_panic() => Err(panic_text(&*e.into_panic())),
        Err(e) => Err(format!("{e:?}")),
    }
}

#[test]
fn work_stealing_control() {
    with_timeout(|| {
        let slept = run(support::executor(1)).expect("the job finishes its sleep");
        assert!(slept >= SLEEP, "{slept:?}");
    });
}

#[test]
fn simple_scheduler_blocking_job_block_on_survives_shutdown() {
    with_timeout(|| {
        let slept = run(support::simple_executor(7))
            .expect("a blocking job's block_on must not panic at executor drop");
        assert!(slept >= SLEEP, "{slept:?}");
    });
}
