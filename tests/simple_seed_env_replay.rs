//! A simple-scheduler executor built without a seed prints "fastexec:
//! simple scheduler seed N (set FASTEXEC_SEED=N to replay this run)". Set
//! as that line says, `FASTEXEC_SEED` must give the next run that seed
//! however the executor is built. Before, only `Builder::from_env` read it,
//! and an executor from `Executor::builder()` drew another seed.
//!
//! The only test in this binary: it sets a process-wide variable.

use fastexec::{EnvError, Executor, Scheduler, SEED_ENV};

#[test]
fn fastexec_seed_seeds_a_simple_executor_built_without_a_seed() {
    // What the user does after reading the printed line of a failed run.
    std::env::set_var(SEED_ENV, "42");
    let simple = || Executor::builder().scheduler(Scheduler::Simple);
    assert_eq!(simple().build().unwrap().seed(), Some(42));
    // A seed given to the builder wins; work stealing has none.
    assert_eq!(simple().seed(7).build().unwrap().seed(), Some(7));
    assert_eq!(Executor::builder().threads(1).build().unwrap().seed(), None);

    // A bad value is an error naming the variable, not a drawn seed.
    std::env::set_var(SEED_ENV, "forty-two");
    let error = simple().build().expect_err("a bad FASTEXEC_SEED");
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    let text = error.to_string();
    assert!(
        text.contains(SEED_ENV) && text.contains("forty-two"),
        "{text}"
    );
    let wrapped = error.get_ref().and_then(|e| e.downcast_ref::<EnvError>());
    assert_eq!(wrapped.map(|e| e.variable), Some(SEED_ENV));
    // Work stealing does not read it.
    assert!(Executor::builder().threads(1).build().is_ok());
    std::env::remove_var(SEED_ENV);
}
