//! `Completion::named` on a task that has already failed: a dependent
//! spawned after the naming reports an upstream failure whose dependency
//! carries the new name, since that error is created after the naming.
//! (It used to show the label frozen in the dependency's stored error,
//! without the name.)

mod support;

use std::sync::Arc;

use support::{executor, with_timeout};

#[test]
fn a_dependent_spawned_after_naming_a_failed_task_shows_the_name() {
    with_timeout(|| {
        let ex = executor(1);
        let failed = ex.spawn_completion(async { panic!("boom") });
        assert!(ex.block_on(failed.clone()).is_err());
        let failed = failed.named("fetch");
        assert_eq!(failed.label().name(), Some("fetch"));
        // This error is created now, after the naming.
        let after = ex.spawn_after(&failed, |_: Arc<()>| async {});
        let err = ex.block_on(after).unwrap_err();
        assert_eq!(
            err.failed_dependency().and_then(|d| d.name()),
            Some("fetch"),
            "error created after `named` lacks the name: {err}"
        );
        // The task's own error was created before the naming.
        let own = ex.block_on(failed).unwrap_err();
        assert_eq!(own.task().name(), None, "{own}");
    })
}
