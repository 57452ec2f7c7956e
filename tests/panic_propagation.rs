//! Panics: a panicking task gives a panic `JoinError` with its payload and
//! never takes its worker down; `wait!` resumes the panic in the caller; a
//! panicking `block_on` root propagates.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::SeqCst;

use fastexec::{spawn, yield_now};
use support::{counter, executor, get, panic_text, with_timeout};

#[test]
fn panicking_task_gives_panic_error_with_str_payload() {
    with_timeout(|| {
        let ex = executor(1);
        let err = ex.block_on(async {
            spawn(async {
                yield_now().await;
                panic!("boom in task");
            })
            .await
            .unwrap_err()
        });
        assert!(err.is_panic());
        assert!(!err.is_cancelled());
        let payload = err.into_panic();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom in task"));
    })
}

#[test]
fn panicking_task_gives_panic_error_with_string_payload() {
    with_timeout(|| {
        let ex = executor(2);
        let handle = ex.spawn(async {
            let n = 7;
            if n == 7 {
                panic!("formatted boom {n}");
            }
            n
        });
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_panic());
        let payload = err.into_panic();
        assert_eq!(
            payload.downcast_ref::<String>().map(String::as_str),
            Some("formatted boom 7")
        );
    })
}

/// A non-string payload comes back as itself.
#[test]
fn panic_payload_of_any_type_is_returned() {
    with_timeout(|| {
        let ex = executor(1);
        let handle = ex.spawn(async { std::panic::panic_any(1234_u64) });
        let payload = futures::executor::block_on(handle)
            .unwrap_err()
            .into_panic();
        assert_eq!(payload.downcast_ref::<u64>(), Some(&1234));
    })
}

/// On a one-thread executor, the worker that ran panicking tasks is the
/// same thread that then runs healthy tasks.
#[test]
fn worker_survives_panics_one_thread() {
    with_timeout(|| {
        let ex = executor(1);
        let (ids, errors) = ex.block_on(async {
            let mut ids = Vec::new();
            let mut errors = 0;
            for i in 0..10 {
                let (tx, rx) = futures::channel::oneshot::channel();
                let handle = spawn(async move {
                    tx.send(std::thread::current().id()).unwrap();
                    panic!("panic number {i}");
                });
                ids.push(rx.await.unwrap());
                errors += usize::from(handle.await.unwrap_err().is_panic());
            }
            (ids, errors)
        });
        assert_eq!(errors, 10);
        let after = ex.block_on(async { spawn(async { std::thread::current().id() }).await });
        let after = after.expect("a healthy task still runs after panics");
        assert!(ids.iter().all(|id| *id == after));
    })
}

/// Detached panicking tasks do not stop the executor either.
#[test]
fn detached_panics_do_not_stop_executor() {
    with_timeout(|| {
        let ex = executor(2);
        let ran = counter();
        let r = ran.clone();
        ex.block_on(async move {
            for i in 0..100 {
                let r = r.clone();
                spawn(async move {
                    r.fetch_add(1, SeqCst);
                    if i % 2 == 0 {
                        panic!("detached panic {i}");
                    }
                })
                .detach();
            }
        });
        assert_eq!(get(&ran), 100);
        assert_eq!(ex.block_on(async { spawn(async { 3 }).await.unwrap() }), 3);
    })
}

/// `wait!` on the handle of a panicking task resumes the panic, with its
/// payload, in the caller: here in the test's own thread.
#[test]
fn wait_resumes_panic_outside_executor() {
    with_timeout(|| {
        let ex = executor(1);
        let handle = ex.spawn(async { panic!("resumed to waiter") });
        let caught = catch_unwind(AssertUnwindSafe(|| fastexec::wait!(handle)));
        let payload = caught.expect_err("wait! must panic");
        assert_eq!(panic_text(&*payload), "resumed to waiter");
    })
}

/// The same inside a task on a one-thread executor: the waiting task
/// catches the panic and carries on.
#[test]
fn wait_resumes_panic_inside_task() {
    with_timeout(|| {
        let ex = executor(1);
        let text = ex.block_on(async {
            spawn(async {
                let failing = spawn(async {
                    yield_now().await;
                    panic!("inner task panic");
                });
                let healthy = spawn(async { 1 });
                let caught = catch_unwind(AssertUnwindSafe(|| fastexec::wait!(healthy, failing)));
                panic_text(&*caught.expect_err("wait! must panic"))
            })
            .await
            .unwrap()
        });
        assert_eq!(text, "inner task panic");
    })
}

/// A panicking root future leaves `block_on` with its own payload.
#[test]
fn panicking_root_propagates_from_block_on() {
    with_timeout(|| {
        let ex = executor(1);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            ex.block_on(async {
                yield_now().await;
                panic!("root panic");
            })
        }));
        assert_eq!(panic_text(&*caught.expect_err("must panic")), "root panic");
        // The executor is still usable afterwards.
        assert_eq!(ex.block_on(async { spawn(async { 4 }).await.unwrap() }), 4);
    })
}

/// A panicking root of a `block_on` nested in a task propagates into that
/// task, which then reports the panic through its handle.
#[test]
fn panicking_nested_root_propagates_into_task() {
    with_timeout(|| {
        let ex = executor(1);
        let err = ex.block_on(async {
            spawn(async {
                fastexec::block_on(async {
                    yield_now().await;
                    panic!("nested root panic");
                })
            })
            .await
            .unwrap_err()
        });
        assert!(err.is_panic());
        assert_eq!(panic_text(&*err.into_panic()), "nested root panic");
    })
}

/// A panic does not leak to siblings: the other tasks of the same
/// `block_on` complete and return their values.
#[test]
fn siblings_of_a_panicking_task_complete() {
    with_timeout(|| {
        let ex = executor(2);
        let results = ex.block_on(async {
            let handles: Vec<_> = (0..20)
                .map(|i| {
                    spawn(async move {
                        yield_now().await;
                        if i == 10 {
                            panic!("only ten");
                        }
                        i
                    })
                })
                .collect();
            let mut results = Vec::new();
            for h in handles {
                results.push(h.await.map_err(|e| e.is_panic()));
            }
            results
        });
        for (i, r) in results.into_iter().enumerate() {
            if i == 10 {
                assert_eq!(r, Err(true));
            } else {
                assert_eq!(r, Ok(i));
            }
        }
    })
}
