//! `JoinError`'s text and predicates, and the auto traits the API promises
//! (checked at compile time).

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use fastexec::{Executor, JoinError, JoinHandle, TaskGroup};
use support::{executor, panic_text, with_timeout};

fn assert_error<T: std::error::Error + Send + Sync + 'static>() {}
fn assert_send<T: Send>() {}
fn assert_send_sync<T: Send + Sync>() {}
fn assert_unpin<T: Unpin>() {}

#[test]
fn auto_traits() {
    assert_error::<JoinError>();
    assert_send::<JoinHandle<u32>>();
    assert_send::<JoinHandle<String>>();
    assert_unpin::<JoinHandle<std::marker::PhantomPinned>>();
    assert_send_sync::<Executor>();
    assert_send_sync::<TaskGroup>();
    assert_send::<fastexec::YieldNow>();
}

/// `JoinError` boxes into the usual error type.
#[test]
fn join_error_converts_to_boxed_error() {
    with_timeout(|| {
        let ex = executor(1);
        let err = futures::executor::block_on(ex.spawn(async { panic!("boxed") })).unwrap_err();
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
        assert!(boxed.to_string().contains("boxed"));
    })
}

#[test]
fn panic_error_display_and_predicates() {
    with_timeout(|| {
        let ex = executor(1);
        let err = futures::executor::block_on(ex.spawn(async { panic!("kaboom 17") })).unwrap_err();
        assert!(err.is_panic());
        assert!(!err.is_cancelled());
        let text = err.to_string();
        assert!(text.contains("panic"), "display: {text:?}");
        assert!(text.contains("kaboom 17"), "display: {text:?}");
        assert!(!format!("{err:?}").is_empty());
    })
}

/// A non-string payload still gives a sensible message.
#[test]
fn panic_error_display_without_string_payload() {
    with_timeout(|| {
        let ex = executor(1);
        let handle = ex.spawn(async { std::panic::panic_any(5_i32) });
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.to_string().contains("panic"), "display: {err}");
        assert_eq!(err.into_panic().downcast_ref::<i32>(), Some(&5));
    })
}

#[test]
fn cancelled_error_display_and_predicates() {
    with_timeout(|| {
        let ex = executor(1);
        let mut handle = ex.spawn(std::future::pending::<()>());
        handle.abort();
        let err = futures::executor::block_on(handle).unwrap_err();
        assert!(err.is_cancelled());
        assert!(!err.is_panic());
        let text = err.to_string();
        assert!(text.contains("cancelled"), "display: {text:?}");
        assert!(!format!("{err:?}").is_empty());
    })
}

/// `into_panic` on a cancellation is documented to panic.
#[test]
fn into_panic_on_cancelled_error_panics() {
    with_timeout(|| {
        let ex = executor(1);
        let mut handle = ex.spawn(std::future::pending::<()>());
        handle.abort();
        let err = futures::executor::block_on(handle).unwrap_err();
        let caught = catch_unwind(AssertUnwindSafe(|| err.into_panic()));
        let payload = caught.expect_err("into_panic must panic on a cancelled error");
        assert!(panic_text(&*payload).contains("cancel"));
    })
}
