//! A task spawned by the destructor of `block_on`'s root future, dropped
//! once it has completed, counts in the `block_on`'s group: `block_on`
//! returns only after it has finished, as for a task the root's poll
//! spawned.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};

use support::{executor, simple_executor, within};

/// A root future, ready at its first poll, whose destructor spawns a task
/// that sets `ran` (a clean-up, say).
struct SpawnsWhenDropped {
    ran: Arc<AtomicBool>,
}

impl Future for SpawnsWhenDropped {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

impl Drop for SpawnsWhenDropped {
    fn drop(&mut self) {
        let ran = self.ran.clone();
        fastexec::spawn(async move { ran.store(true, SeqCst) }).detach();
    }
}

/// `block_on` called from a task on the only worker: the task spawned by
/// the root's destructor can run only on this thread, so it has run when
/// `block_on` returns only if `block_on` waited for it (running it itself).
fn ran_before_nested_block_on_returned(ex: fastexec::Executor) -> bool {
    ex.block_on(async {
        fastexec::spawn(async {
            let ran = Arc::new(AtomicBool::new(false));
            fastexec::block_on(SpawnsWhenDropped { ran: ran.clone() });
            ran.load(SeqCst)
        })
        .await
        .unwrap()
    })
}

#[test]
fn block_on_waits_for_a_task_its_roots_destructor_spawned() {
    let ran = within(30, || ran_before_nested_block_on_returned(executor(1)));
    assert!(ran, "block_on returned before the root's clean-up task ran");
}

#[test]
fn simple_block_on_waits_for_a_task_its_roots_destructor_spawned() {
    let ran = within(30, || {
        ran_before_nested_block_on_returned(simple_executor(3))
    });
    assert!(ran, "block_on returned before the root's clean-up task ran");
}
