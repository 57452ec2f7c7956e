//! `fastexec::current_threads`: the worker count of the executor `spawn`
//! would use, from a task, from a `block_on`, and from a plain thread.

mod support;

use support::{executor, with_timeout};

#[test]
fn inside_a_block_on_it_is_that_executors_count() {
    with_timeout(|| {
        for n in [1, 2, 3] {
            let ex = executor(n);
            assert_eq!(ex.block_on(async { fastexec::current_threads() }), Some(n));
        }
    })
}

#[test]
fn inside_a_task_it_is_the_count_of_the_executor_running_it() {
    with_timeout(|| {
        let ex = executor(3);
        let seen = ex.spawn(async { fastexec::current_threads() });
        assert_eq!(ex.block_on(seen).unwrap(), Some(3));
    })
}

/// A thread on no executor sees the global executor once it has started,
/// and asking does not start it. The only test of this file that touches
/// the global executor, so nothing else starts it first.
#[test]
fn elsewhere_it_is_the_global_executors_count_once_started() {
    with_timeout(|| {
        let before = std::thread::spawn(fastexec::current_threads)
            .join()
            .unwrap();
        assert_eq!(before, None);
        let global = fastexec::block_on(async { fastexec::current_threads() });
        let global = global.expect("block_on runs on the global executor");
        let expected = match std::env::var(fastexec::WORKERS_ENV) {
            Ok(n) => n.parse().expect("a valid FASTEXEC_WORKERS"),
            Err(_) => std::thread::available_parallelism().unwrap().get(),
        };
        assert_eq!(global, expected);
        let after = std::thread::spawn(fastexec::current_threads)
            .join()
            .unwrap();
        assert_eq!(after, Some(global));
    })
}
