//! `FASTEXEC_SCHEDULER` and `FASTEXEC_SEED`: parsed through a lookup
//! closure, and read from the real environment by `Builder::from_env` and
//! the global executor.
//!
//! The environment is process-global, so the test that sets real variables
//! is the only one in this binary that touches it (the other uses a
//! closure).

mod support;

use std::thread;

use fastexec::{Builder, EnvError, Scheduler, SCHEDULER_ENV, SEED_ENV};
use support::with_timeout;

fn lookup<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        vars.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    }
}

fn assert_names(err: &EnvError, variable: &str, value: &str) {
    assert_eq!(err.variable, variable);
    assert_eq!(err.value, value);
    let text = err.to_string();
    assert!(text.contains(variable), "{text:?}");
    assert!(text.contains(value), "{text:?}");
}

#[test]
fn lookup_parses_scheduler_and_seed() {
    assert_eq!(SCHEDULER_ENV, "FASTEXEC_SCHEDULER");
    assert_eq!(SEED_ENV, "FASTEXEC_SEED");
    let ex = Builder::from_lookup(lookup(&[]))
        .unwrap()
        .threads(1)
        .build()
        .unwrap();
    assert_eq!((ex.scheduler(), ex.seed()), (Scheduler::WorkStealing, None));

    let vars = [(SCHEDULER_ENV, "work-stealing"), (SEED_ENV, "5")];
    let ex = Builder::from_lookup(lookup(&vars))
        .unwrap()
        .threads(2)
        .build()
        .unwrap();
    assert_eq!(
        (ex.scheduler(), ex.seed(), ex.threads()),
        (Scheduler::WorkStealing, None, 2)
    );

    let vars = [
        (SCHEDULER_ENV, " simple "),
        (SEED_ENV, "18446744073709551615"),
    ];
    let ex = Builder::from_lookup(lookup(&vars))
        .unwrap()
        .threads(4)
        .build()
        .unwrap();
    assert_eq!(ex.scheduler(), Scheduler::Simple);
    assert_eq!(ex.seed(), Some(u64::MAX));
    assert_eq!(ex.threads(), 1, "simple means one thread");

    // No seed given: one is drawn and kept.
    let ex = Builder::from_lookup(lookup(&[(SCHEDULER_ENV, "simple")]))
        .unwrap()
        .build()
        .unwrap();
    assert!(ex.seed().is_some());

    for bad in ["Simple", "threadpool", "", "simple,"] {
        let err = Builder::from_lookup(lookup(&[(SCHEDULER_ENV, bad)])).unwrap_err();
        assert_names(&err, SCHEDULER_ENV, bad);
    }
    for bad in ["-1", "abc", "1.5", "18446744073709551616"] {
        let vars = [(SCHEDULER_ENV, "simple"), (SEED_ENV, bad)];
        let err = Builder::from_lookup(lookup(&vars)).unwrap_err();
        assert_names(&err, SEED_ENV, bad);
    }
}

#[test]
fn real_environment_drives_from_env_and_the_global_executor() {
    std::env::set_var(SCHEDULER_ENV, "fifo");
    assert_names(&Builder::from_env().unwrap_err(), SCHEDULER_ENV, "fifo");
    std::env::set_var(SCHEDULER_ENV, "simple");
    std::env::set_var(SEED_ENV, "seven");
    assert_names(&Builder::from_env().unwrap_err(), SEED_ENV, "seven");

    std::env::set_var(SEED_ENV, "77");
    let ex = Builder::from_env().unwrap().build().unwrap();
    assert_eq!((ex.scheduler(), ex.seed()), (Scheduler::Simple, Some(77)));
    drop(ex);

    // The global executor starts from the same variables: everything a
    // block_on spawns runs on the calling thread.
    with_timeout(|| {
        let here = thread::current().id();
        let ran_on = fastexec::block_on(async {
            let a = fastexec::spawn(async { thread::current().id() });
            let b = fastexec::spawn(async { thread::current().id() });
            [a.await.unwrap(), b.await.unwrap()]
        });
        assert_eq!(ran_on, [here, here]);
        // Spawned outside any block_on: the global's one worker runs it.
        let outside =
            futures::executor::block_on(fastexec::spawn(async { thread::current().id() }));
        assert_ne!(outside.unwrap(), here);
    });
}
