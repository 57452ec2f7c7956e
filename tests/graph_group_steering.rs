//! A run steered from a task of a `TaskGroup` (here `resume`) wakes runners
//! that carry on its tasks. They are spawned into the scope the run was
//! started in (`fastexec::Scope`), not into the steering task's group, so
//! cancelling that group must not end them and strand a task they took.

mod support;

use fastexec::graph::Graph;
use fastexec::TaskGroup;
use support::{within, Gate};

#[test]
fn a_run_resumed_from_a_group_task_survives_the_groups_cancel() {
    within(10, || {
        let mut g = Graph::<u32>::new();
        let (first_started, go) = (Gate::new(), Gate::new());
        g.add(support::gated_task("first", &first_started, &go))
            .unwrap();
        let (started, release) = (Gate::new(), Gate::new());
        g.add(support::gated_task("a", &started, &release).after(["first"]))
            .unwrap();
        fastexec::block_on(async {
            let run = g.start();
            run.pause("a").await.unwrap(); // pending: paused at once
            go.open();
            run.wait("first").await.unwrap();
            let group = TaskGroup::new();
            let r = run.clone();
            // The runner this resume wakes is spawned into `group`, and
            // takes "a" (its attempt goes on in a task spawned from there).
            group
                .spawn(async move { r.resume("a") })
                .await
                .unwrap()
                .unwrap();
            started.wait().await;
            group.cancel();
            group.wait().await;
            release.open();
            assert!(run.wait_all().await.is_success());
        });
    });
}
