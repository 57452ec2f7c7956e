//! A blocking job inside `fastexec::block_on(sleep(..))` when its executor
//! is dropped finishes its sleep: the drop waits for the blocking jobs, and
//! such a `block_on` is not a task's (the crate docs say `block_on` panics
//! at shutdown only when called from inside a task). So does one nested in
//! that `block_on`'s root. Under the simple scheduler the first used to
//! panic ("the executor shut down while a task was blocked in block_on"),
//! and then the nested one, which it took for a task's (its thread already
//! owned the scheduler). The work-stealing scheduler is the control
//! (`time_blocking_job_sleep_at_shutdown.rs`).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use fastexec::time::sleep;

mod support;
use support::{panic_text, with_timeout};

const SLEEP: Duration = Duration::from_millis(300);

/// Runs a blocking job that sleeps in a `block_on` (`nested`: in a
/// `block_on` in the root of another), drops the executor once the sleep
/// is registered, and gives how long the job slept, or its panic.
fn run(executor: fastexec::Executor, nested: bool) -> Result<Duration, String> {
    let (registered_tx, registered_rx) = mpsc::channel();
    let job = executor.spawn_blocking(move || {
        let started = Instant::now();
        let sleeper = async move {
            let sleep = sleep(SLEEP);
            registered_tx.send(()).unwrap();
            sleep.await
        };
        if nested {
            fastexec::block_on(async move { fastexec::block_on(sleeper) });
        } else {
            fastexec::block_on(sleeper);
        }
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

fn finishes_its_sleep(executor: impl Fn() -> fastexec::Executor + Send + 'static) {
    with_timeout(move || {
        for nested in [false, true] {
            let slept = run(executor(), nested)
                .unwrap_or_else(|panic| panic!("nested: {nested}: the job panicked: {panic}"));
            assert!(slept >= SLEEP, "nested: {nested}: {slept:?}");
        }
    });
}

#[test]
fn work_stealing_control() {
    finishes_its_sleep(|| support::executor(1));
}

#[test]
fn simple_scheduler_blocking_job_block_on_survives_shutdown() {
    finishes_its_sleep(|| support::simple_executor(7));
}
