//! Executor hooks: thread start and stop once per worker thread, task spawn
//! and finish once per task, with the task's id and name.

mod support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use fastexec::task::{self, TaskId};
use fastexec::Executor;
use support::{with_timeout, Gate};

#[test]
fn thread_hooks_fire_once_per_worker() {
    with_timeout(|| {
        let started = Arc::new(AtomicUsize::new(0));
        let stopped = Arc::new(AtomicUsize::new(0));
        let (s, t) = (started.clone(), stopped.clone());
        let ex = Executor::builder()
            .threads(3)
            .on_thread_start(move || {
                assert!(std::thread::current()
                    .name()
                    .unwrap()
                    .starts_with("fastexec"));
                s.fetch_add(1, SeqCst);
            })
            .on_thread_stop(move || {
                t.fetch_add(1, SeqCst);
            })
            .build()
            .unwrap();
        ex.block_on(async { fastexec::spawn(async {}).await.unwrap() });
        drop(ex);
        assert_eq!(started.load(SeqCst), 3);
        assert_eq!(stopped.load(SeqCst), 3);
    })
}

#[derive(Default)]
struct Seen {
    spawned: Vec<(TaskId, Option<String>)>,
    finished: Vec<TaskId>,
}

#[test]
fn task_hooks_fire_once_per_task() {
    with_timeout(|| {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (on_spawn, on_finish) = (seen.clone(), seen.clone());
        let ex = Executor::builder()
            .threads(2)
            .on_task_spawn(move |meta| {
                let name = meta.name().map(String::from);
                on_spawn.lock().unwrap().spawned.push((meta.id(), name));
            })
            .on_task_finish(move |meta| on_finish.lock().unwrap().finished.push(meta.id()))
            .build()
            .unwrap();
        let gate = Gate::new();
        let waiting = gate.clone();
        ex.block_on(async move {
            for _ in 0..10 {
                fastexec::spawn(async {}).detach();
            }
            task::Builder::new().name("named").spawn(async {}).detach();
            // Aborted while parked: its future is dropped, which finishes it.
            let mut parked = fastexec::spawn(async move { waiting.wait().await });
            fastexec::yield_now().await;
            parked.abort();
            // Children of tasks count too.
            fastexec::spawn(async {
                fastexec::spawn(async {}).detach();
            })
            .detach();
        });
        gate.open();
        drop(ex);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.spawned.len(), 14);
        let ids: HashSet<TaskId> = seen.spawned.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.len(), 14, "ids are unique");
        let finished: HashSet<TaskId> = seen.finished.iter().copied().collect();
        assert_eq!(seen.finished.len(), 14, "each finishes once");
        assert_eq!(finished, ids);
        let names: Vec<_> = seen.spawned.iter().filter_map(|(_, n)| n.clone()).collect();
        assert_eq!(names, ["named"]);
    })
}

/// Ids are non-zero and distinct.
#[test]
fn named_tasks_get_distinct_nonzero_ids() {
    let ids = Arc::new(Mutex::new(Vec::new()));
    let record = ids.clone();
    let ex = Executor::builder()
        .on_task_spawn(move |meta| record.lock().unwrap().push(meta.id().get()))
        .build()
        .unwrap();
    ex.block_on(async {
        task::Builder::new().name("a").spawn(async {}).detach();
        task::Builder::new().name("b").spawn(async {}).detach();
    });
    let ids = ids.lock().unwrap();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    assert!(ids.iter().all(|&id| id > 0));
}
