//! `FASTEXEC_WORKERS`: `Builder::from_env` and the global executor.
//!
//! The environment is process-global, so this binary holds a single test
//! that sets, checks and restores the variable in sequence.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use fastexec::{Builder, EnvError, WORKERS_ENV};
use support::{panic_text, with_timeout, Rendezvous};

#[test]
fn fastexec_workers_env() {
    assert_eq!(WORKERS_ENV, "FASTEXEC_WORKERS");
    let saved = std::env::var_os(WORKERS_ENV);

    // Bad values are rejected, naming the variable and the value.
    for bad in ["abc", "0", "-3", "1.5", "", "99999999"] {
        std::env::set_var(WORKERS_ENV, bad);
        let err: EnvError = Builder::from_env().expect_err(bad);
        assert_eq!(err.variable, "FASTEXEC_WORKERS");
        assert_eq!(err.value, bad);
        let text = err.to_string();
        assert!(text.contains("FASTEXEC_WORKERS"), "{text:?}");
        assert!(
            text.contains(&format!("{bad:?}")) || text.contains(bad),
            "{text:?}"
        );
        let _: &dyn std::error::Error = &err;
    }

    // A value that is not Unicode is bad too, not taken as unset.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::env::set_var(WORKERS_ENV, std::ffi::OsStr::from_bytes(b"4\xff"));
        let err: EnvError = Builder::from_env().expect_err("not Unicode");
        assert_eq!(err.variable, "FASTEXEC_WORKERS");
        assert_eq!(err.value, "4\u{fffd}");
    }

    // A good value sets the thread count.
    std::env::set_var(WORKERS_ENV, "3");
    let ex = Builder::from_env().unwrap().build().unwrap();
    assert_eq!(ex.threads(), 3);
    drop(ex);

    // Unset: the default, at least one thread.
    std::env::remove_var(WORKERS_ENV);
    let ex = Builder::from_env().unwrap().build().unwrap();
    assert!(ex.threads() >= 1);
    drop(ex);

    // The global executor refuses to start on a bad value, with a message
    // naming the variable, and starts later once the value is fixed.
    std::env::set_var(WORKERS_ENV, "many");
    let caught = catch_unwind(AssertUnwindSafe(|| drop(fastexec::spawn(async {}))));
    let text = panic_text(&*caught.expect_err("bad FASTEXEC_WORKERS must panic"));
    assert!(text.contains("FASTEXEC_WORKERS"), "{text:?}");
    assert!(text.contains("many"), "{text:?}");

    // One more worker than cores: proven by that many tasks meeting at once.
    let n = std::thread::available_parallelism().map_or(1, |n| n.get()) + 1;
    std::env::set_var(WORKERS_ENV, n.to_string());
    let met = with_timeout(move || {
        let barrier = Rendezvous::new(n);
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let barrier = barrier.clone();
                fastexec::spawn(async move { barrier.wait() })
            })
            .collect();
        handles
            .into_iter()
            .all(|h| futures::executor::block_on(h).unwrap())
    });
    assert!(met, "the global executor should run {n} tasks at once");

    match saved {
        Some(value) => std::env::set_var(WORKERS_ENV, value),
        None => std::env::remove_var(WORKERS_ENV),
    }
}
