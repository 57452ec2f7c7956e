//! A completion's task that panics with a payload (`std::panic::panic_any`)
//! whose own destructor panics. The producer keeps the panic's message in
//! its node; before the fix it dropped the payload before it finished the
//! node, so the destructor's panic left the node unfinished for good: every
//! awaiter of the completion and every dependent waited forever. Now the
//! node is finished first (panicked, as any panicking task's), and the
//! destructor's panic is caught (the panic hook reports it).

mod support;

use std::panic::panic_any;
use std::sync::Arc;

use fastexec::deps::CompletionError;
use fastexec::{spawn_after, spawn_completion};
use support::{executor, within, DropCounter, PanicOnDrop};

fn is_panicked(error: &CompletionError) -> bool {
    matches!(error, CompletionError::Panicked { .. })
}

#[test]
fn a_completion_panicking_with_such_a_payload_fails_its_awaiters_and_dependents() {
    let drops = DropCounter::new();
    let guard = drops.guard();
    let (own, dependent, after) = within(10, move || {
        let ex = executor(1);
        ex.block_on(async move {
            let bad = spawn_completion(async move {
                fastexec::yield_now().await;
                panic_any(PanicOnDrop::new(guard))
            });
            let dependent = spawn_after(&bad, |_: Arc<()>| async {});
            let own = bad.await.unwrap_err();
            let dependent = dependent.await.unwrap_err();
            // The worker is alive and the executor goes on.
            let after = spawn_completion(async { 7 }).await.unwrap();
            (own, dependent, *after)
        })
    });
    assert!(is_panicked(&own), "{own}");
    assert!(
        matches!(&dependent, CompletionError::UpstreamFailed { cause, .. } if is_panicked(cause)),
        "{dependent}"
    );
    assert_eq!(after, 7);
    assert_eq!(drops.count(), 1, "the payload was dropped, once");
}

#[test]
fn a_dependent_panicking_with_such_a_payload_fails_its_own_dependents() {
    let drops = DropCounter::new();
    let guard = drops.guard();
    let (own, dependent) = within(10, move || {
        let ex = executor(1);
        ex.block_on(async move {
            let first = spawn_completion(async { 1 });
            let bad = spawn_after(&first, move |_: Arc<i32>| async move {
                panic_any(PanicOnDrop::new(guard))
            });
            let dependent = spawn_after(&bad, |_: Arc<()>| async {});
            (bad.await.unwrap_err(), dependent.await.unwrap_err())
        })
    });
    assert!(is_panicked(&own), "{own}");
    assert!(
        matches!(&dependent, CompletionError::UpstreamFailed { .. }),
        "{dependent}"
    );
    assert_eq!(drops.count(), 1, "the payload was dropped, once");
}

/// A waker whose `wake` panics with a [`PanicOnDrop`] payload.
struct BombWake(DropCounter);

impl std::task::Wake for BombWake {
    fn wake(self: Arc<Self>) {
        panic_any(PanicOnDrop::new(self.0.guard()))
    }
}

/// Two awaiters' wakers panic with such payloads when the completion
/// releases them. The release keeps the first panic for after its loop and
/// drops the second payload; before the fix that drop's panic unwound out of
/// the loop, so the awaiter registered after them was never woken.
#[test]
fn a_second_waker_panic_with_such_a_payload_still_releases_the_awaiters_after_it() {
    use std::task::Waker;

    let drops = DropCounter::new();
    let bombs = drops.clone();
    let (woken, value) = within(20, move || {
        let ex = executor(1);
        let gate = support::Gate::new();
        let opened = gate.clone();
        let completion = ex.spawn_completion(async move {
            opened.wait().await;
            5
        });
        // Registered in this order while the gate is shut: two bombs, then
        // a waker that signals.
        let mut parked = Vec::new();
        for _ in 0..2 {
            let waker = Waker::from(Arc::new(BombWake(bombs.clone())));
            parked.push(pending_awaiter(&completion, &waker));
        }
        let (woke, woken) = std::sync::mpsc::channel();
        let third = pending_awaiter(&completion, &Waker::from(Arc::new(SignalWake(woke))));
        gate.open();
        // Dropped unwoken, the waker disconnects the channel; the timeout
        // only guards against a hang.
        let woken = woken.recv_timeout(support::TIMEOUT).is_ok();
        let value = futures::executor::block_on(third).map(|v| *v);
        drop(ex);
        (woken, value)
    });
    assert!(woken, "the awaiter after the two bombs was woken");
    assert_eq!(value.ok(), Some(5));
    assert_eq!(drops.count(), 2, "both payloads were dropped");
}

/// A waker that sends on its channel when woken.
struct SignalWake(std::sync::mpsc::Sender<()>);

impl std::task::Wake for SignalWake {
    fn wake(self: Arc<Self>) {
        let _ = self.0.send(());
    }
}

/// `completion` polled once with `waker`, which it keeps: the gate is shut.
fn pending_awaiter(
    completion: &fastexec::deps::Completion<i32>,
    waker: &std::task::Waker,
) -> std::pin::Pin<Box<fastexec::deps::Completion<i32>>> {
    use std::future::Future;
    let mut awaiter = Box::pin(completion.clone());
    let polled = awaiter
        .as_mut()
        .poll(&mut std::task::Context::from_waker(waker));
    assert!(polled.is_pending(), "the gate is shut");
    awaiter
}
