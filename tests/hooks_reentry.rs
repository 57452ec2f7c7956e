//! Task hooks are user code the executor calls in the middle of a spawn:
//! a hook may spawn, or run a `block_on`, on the thread that spawns.

mod support;

use fastexec::Executor;
use support::within;

/// A spawn hook that runs a `block_on` of the global executor, called for
/// a task spawned from the root future of a `block_on` on a plain thread.
#[test]
fn a_spawn_hook_may_block_on_while_a_block_on_spawns() {
    let got = within(10, || {
        let ex = Executor::builder()
            .threads(1)
            .on_task_spawn(|_| fastexec::block_on(async {}))
            .build()
            .unwrap();
        ex.block_on(async { fastexec::spawn(async { 1 }).await.unwrap() })
    });
    assert_eq!(got, 1);
}
