//! A `block_on` nested in a plain thread's `block_on` root future (a
//! blocking job's here; no task involved) finishes its root when its
//! simple-scheduler executor is dropped, as the crate docs promise to any
//! `block_on` not called from a task. It used to tell "called from a task"
//! by "this thread already owns the scheduler", which a nested call's
//! thread does too, and panicked. The work-stealing scheduler is the
//! control.

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
        // A blocking job's block_on whose root calls block_on again: no
        // task anywhere.
        fastexec::block_on(async move {
            fastexec::block_on(async move {
                let sleep = sleep(SLEEP);
                registered_tx.send(()).unwrap();
                sleep.await
            })
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
fn simple_scheduler_nested_root_block_on_survives_shutdown() {
    with_timeout(|| {
        let slept = run(support::simple_executor(7))
            .expect("a block_on nested in a plain thread's root must not panic at executor drop");
        assert!(slept >= SLEEP, "{slept:?}");
    });
}
