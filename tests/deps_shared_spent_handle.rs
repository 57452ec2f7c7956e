//! `shared()` on a handle that already gave its output (a misuse: the
//! forwarding task's poll of the handle panics, as polling a spent handle
//! does). The completion must say that the task panicked, with the
//! message, not that it was cancelled: nothing cancelled it.

mod support;

use support::{executor, quiet_panics, within};

const SPENT: &str = "JoinHandle polled after it returned the output";

#[test]
fn the_completion_of_a_spent_handle_reports_the_panic_not_a_cancellation() {
    quiet_panics(SPENT);
    within(30, || {
        let ex = executor(1);
        let mut handle = ex.spawn(async { 7 });
        assert_eq!(ex.block_on(&mut handle).unwrap(), 7);
        let err = ex
            .block_on(async move { handle.shared().await })
            .unwrap_err();
        assert!(err.is_panic(), "the forwarder panicked, but: {err}");
        assert!(err.to_string().contains(SPENT), "{err}");
    })
}
