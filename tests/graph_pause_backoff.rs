//! Pausing a task while it waits out the backoff before a retry: no body
//! runs then, so it pauses at once (it used to wait for a checkpoint that
//! could not come, and was cancelled when the pause timeout passed), and
//! its next attempt waits for the resume. So does a pause requested during
//! an attempt that then fails without reaching a checkpoint.

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fastexec::graph::{Blocked, Graph, PausedFrom, SchedulerConfig, Task, TaskState};
use support::{fixed_backoff, wait_for_first_failure, within};

/// A graph of one task, `flaky`, failing its first attempt and then
/// succeeding, with `backoff` before its retry; `attempts` counts calls.
fn flaky(backoff: Duration, pause_timeout: Duration) -> (Graph<u32>, Arc<AtomicU32>) {
    let attempts = Arc::new(AtomicU32::new(0));
    let calls = Arc::clone(&attempts);
    let config = SchedulerConfig::new().with_pause_timeout(pause_timeout);
    let mut g = Graph::<u32>::with_config(config);
    let retry = fixed_backoff(2, backoff);
    g.add(
        Task::new("flaky", move |inp| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                match inp.attempt() {
                    1 => Err("first attempt fails".into()),
                    n => Ok(n),
                }
            }
        })
        .retry(retry),
    )
    .unwrap();
    (g, attempts)
}

#[test]
fn pausing_a_task_waiting_to_retry_pauses_it_at_once() {
    within(30, || {
        // A pause timeout far shorter than the backoff: the pause must not
        // depend on a checkpoint.
        let (g, attempts) = flaky(Duration::from_secs(3600), Duration::from_millis(1));
        let run = g.start();
        wait_for_first_failure(&run, "flaky");
        fastexec::block_on(run.pause("flaky")).unwrap();
        assert_eq!(run.state("flaky"), Some(TaskState::Paused));
        let paused = Blocked::Paused {
            from: PausedFrom::Running,
        };
        assert_eq!(run.why("flaky").unwrap(), Some(paused));
        run.resume("flaky").unwrap();
        assert_eq!(run.state("flaky"), Some(TaskState::Running));
        run.stop();
        let report = fastexec::block_on(run.wait_all());
        assert_eq!(report.task("flaky").unwrap().state, TaskState::Cancelled);
        assert_eq!(attempts.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_retry_due_while_paused_waits_for_the_resume() {
    within(30, || {
        let backoff = Duration::from_millis(500);
        let (g, attempts) = flaky(backoff, Duration::from_secs(10));
        let run = g.start();
        wait_for_first_failure(&run, "flaky");
        fastexec::block_on(async {
            run.pause("flaky").await.unwrap();
            assert_eq!(run.state("flaky"), Some(TaskState::Paused));
            // Past the backoff: the retry is due, and must not start.
            // (The test passes whatever the timer's precision; a retry
            // started while paused would be seen here.)
            fastexec::time::sleep(backoff + Duration::from_millis(100)).await;
            assert_eq!(attempts.load(Ordering::SeqCst), 1);
            assert_eq!(run.state("flaky"), Some(TaskState::Paused));
            run.resume("flaky").unwrap();
            assert_eq!(*run.wait("flaky").await.unwrap(), 2);
        });
        assert_eq!(attempts.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn a_pause_requested_during_a_failing_attempt_takes_effect_in_the_backoff() {
    within(30, || {
        let an_hour = Duration::from_secs(3600);
        // Shorter than the backoff: the pause must not wait for the next
        // attempt's checkpoint.
        let config = SchedulerConfig::new().with_pause_timeout(Duration::from_secs(2));
        let mut g = Graph::<u32>::with_config(config);
        let (started, go) = (support::Gate::new(), support::Gate::new());
        let (on_start, gate) = (started.clone(), go.clone());
        let retry = fixed_backoff(2, an_hour);
        g.add(
            Task::new("flaky", move |_| {
                let (on_start, gate) = (on_start.clone(), gate.clone());
                async move {
                    on_start.open();
                    gate.wait().await;
                    // No checkpoint: the attempt fails with the pause pending.
                    Err("fails".into())
                }
            })
            .retry(retry),
        )
        .unwrap();
        let run = g.start();
        fastexec::block_on(async {
            started.wait().await;
            // Requested at the pause's first poll, while the attempt waits.
            let (paused, ()) = fastexec::join!(run.pause("flaky"), async { go.open() });
            paused.unwrap();
            assert_eq!(run.state("flaky"), Some(TaskState::Paused));
            let from_running = Blocked::Paused {
                from: PausedFrom::Running,
            };
            assert_eq!(run.why("flaky").unwrap(), Some(from_running));
            run.cancel("flaky").unwrap();
            let report = run.wait_all().await;
            assert_eq!(report.task("flaky").unwrap().attempts, 1);
        });
    });
}
