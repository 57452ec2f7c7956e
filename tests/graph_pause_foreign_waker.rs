//! A task's pause switch (`PauseControl`) whose waiters are polled under
//! wakers the executor did not make. It wakes them with no lock held, so a
//! waker may poll its wait again from inside `wake` (before, the switch's
//! `event_listener::Event` called wakers under its own lock, and such a
//! waker deadlocked). A waker whose `wake` panics leaves the phase changed
//! and the other waiters woken; the panic reaches a user's call, but not
//! out of a graph run's transition, which the run makes under its lock.
//! A graph run wakes them after its lock, too: a waker may call back into
//! the run from `wake` (before, the run's resume and cancel woke them
//! under its lock, and such a waker deadlocked).

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::Waker;
use std::time::Duration;

use fastexec::graph::{Graph, PauseControl, Report, RunHandle, Task, TaskState};
use support::{
    panicking_waker, poll_shared, poll_with, quiet_panics, repolled_on_wake, within, CallbackWaker,
    CountingWake, Gate,
};

/// A control that lives as long as the test process, for futures that
/// borrow it and must be `'static`.
fn leaked_control() -> &'static PauseControl {
    Box::leak(Box::new(PauseControl::new()))
}

#[test]
fn a_checkpoints_waker_may_poll_it_again_when_resumed() {
    within(10, || {
        let control = leaked_control();
        control.request_pause();
        let (wait, waker) = repolled_on_wake(async {
            control.checkpoint().await.unwrap();
        });
        assert!(poll_shared(&wait, &waker), "paused at the checkpoint");
        assert!(control.is_paused());
        assert!(control.resume());
        assert!(
            wait.lock().unwrap().is_none(),
            "the checkpoint returned in its wake"
        );
    })
}

#[test]
fn an_acknowledgements_waker_may_poll_it_again_when_the_body_pauses() {
    within(10, || {
        let control = leaked_control();
        control.request_pause();
        let (wait, waker) = repolled_on_wake(async {
            control.acknowledged(Duration::from_secs(60)).await.unwrap();
        });
        assert!(poll_shared(&wait, &waker), "no checkpoint yet");
        let mut checkpoint = pin!(control.checkpoint());
        let noop = futures::task::noop_waker();
        assert!(poll_with(&mut checkpoint, &noop).is_pending());
        assert!(
            wait.lock().unwrap().is_none(),
            "the acknowledgement came in its wake"
        );
    })
}

/// What the wakers of the tests below panic with.
const WAKE_PANIC: &str = "pause waker panics";

#[test]
fn a_panicking_waker_leaves_the_switch_resumed_and_the_other_waiters_woken() {
    quiet_panics(WAKE_PANIC);
    within(10, || {
        let control = PauseControl::new();
        control.request_pause();
        let (woken, panicking) = panicking_waker(WAKE_PANIC);
        let other = Arc::new(CountingWake::default());
        let other_waker = Waker::from(other.clone());
        let mut first = pin!(control.checkpoint());
        let mut second = pin!(control.checkpoint());
        assert!(poll_with(&mut first, &panicking).is_pending());
        assert!(poll_with(&mut second, &other_waker).is_pending());
        let resumed = catch_unwind(AssertUnwindSafe(|| control.resume()));
        assert!(resumed.is_err(), "the waker's panic reaches the caller");
        assert_eq!(support::get(&woken), 1);
        assert_eq!(other.count(), 1, "the other waiter was woken");
        assert!(!control.is_paused() && !control.is_cancelled());
        let noop = futures::task::noop_waker();
        assert!(poll_with(&mut second, &noop).is_ready());
    })
}

/// Makes the waker a body registers at its checkpoint, from its run.
type MakeWaker = Arc<dyn Fn(&RunHandle<u32>) -> Waker + Send + Sync>;

/// Runs a graph of one task, `w`, that waits at its checkpoint twice once
/// paused: first under the waker `make_waker` gives (kept registered),
/// then under its own. While `w` is paused, `act`s on the run. Returns the
/// report.
fn act_on_a_checkpoint_waited_on_under(
    make_waker: MakeWaker,
    act: fn(&RunHandle<u32>),
) -> Report<u32> {
    let (started, proceed) = (Gate::new(), Gate::new());
    let mut g = Graph::<u32>::new();
    let (s, p) = (started.clone(), proceed.clone());
    g.add(Task::new("w", move |inputs| {
        let (s, p, make_waker) = (s.clone(), p.clone(), make_waker.clone());
        async move {
            s.open();
            p.wait().await;
            let foreign_waker = make_waker(inputs.run());
            let mut foreign = pin!(inputs.checkpoint());
            assert!(poll_with(&mut foreign, &foreign_waker).is_pending());
            inputs.checkpoint().await?;
            Ok(1)
        }
    }))
    .unwrap();
    within(30, move || {
        let executor = fastexec::Executor::builder().threads(2).build().unwrap();
        executor.block_on(async move {
            let run = g.start();
            started.wait().await;
            let pause = async {
                run.pause("w").await.unwrap();
            };
            let go = async {
                proceed.open();
            };
            fastexec::join!(pause, go);
            assert_eq!(run.state("w"), Some(TaskState::Paused));
            act(&run);
            run.wait_all().await
        })
    })
}

#[test]
fn a_panicking_checkpoint_waker_does_not_unwind_out_of_a_runs_resume() {
    quiet_panics(WAKE_PANIC);
    let report =
        act_on_a_checkpoint_waited_on_under(Arc::new(|_| panicking_waker(WAKE_PANIC).1), |run| {
            let resumed = catch_unwind(AssertUnwindSafe(|| run.resume("w")));
            assert!(
                matches!(resumed, Ok(Ok(()))),
                "the waker's panic stays out of the run's resume"
            );
        });
    assert!(report.is_success(), "{report}");
    assert_eq!(report.output("w"), Some(&1));
}

/// A waker that asks the run for `w`'s state from inside `wake`, and the
/// states it saw.
fn a_waker_asking_the_run() -> (MakeWaker, Arc<Mutex<Vec<Option<TaskState>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let saw = seen.clone();
    let make: MakeWaker = Arc::new(move |run| {
        let (run, saw) = (run.clone(), saw.clone());
        CallbackWaker::on_wake(move || saw.lock().unwrap().push(run.state("w")))
    });
    (make, seen)
}

#[test]
fn a_checkpoints_waker_may_call_the_run_when_the_run_resumes_the_task() {
    let (asking, seen) = a_waker_asking_the_run();
    let report = act_on_a_checkpoint_waited_on_under(asking, |run| {
        run.resume("w").unwrap();
    });
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [Some(TaskState::Running)],
        "woken once, after the resume"
    );
    assert!(report.is_success(), "{report}");
    assert_eq!(report.output("w"), Some(&1));
}

#[test]
fn a_checkpoints_waker_may_call_the_run_when_the_run_cancels_the_task() {
    let (asking, seen) = a_waker_asking_the_run();
    let report = act_on_a_checkpoint_waited_on_under(asking, |run| {
        run.cancel("w").unwrap();
    });
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [Some(TaskState::Cancelled)],
        "woken once, after the cancel"
    );
    assert_eq!(report.task("w").unwrap().state, TaskState::Cancelled);
}
