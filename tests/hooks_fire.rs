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

/// An executor of `threads` workers whose task hooks record into `seen`.
fn recording_executor(threads: usize, seen: &Arc<Mutex<Seen>>) -> Executor {
    let (on_spawn, on_finish) = (seen.clone(), seen.clone());
    Executor::builder()
        .threads(threads)
        .on_task_spawn(move |meta| {
            let name = meta.name().map(String::from);
            on_spawn.lock().unwrap().spawned.push((meta.id(), name));
        })
        .on_task_finish(move |meta| on_finish.lock().unwrap().finished.push(meta.id()))
        .build()
        .unwrap()
}

#[test]
fn task_hooks_fire_once_per_task() {
    with_timeout(|| {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let ex = recording_executor(2, &seen);
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

/// Completions spawned through the builder reach the hooks with their name,
/// and every completion's `TaskMeta` id is the number its errors show.
#[test]
fn completions_reach_the_hooks_with_their_label() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let recorded = seen.clone();
    let labels = with_timeout(move || {
        let ex = recording_executor(1, &recorded);
        let named = task::Builder::new().name("fetch").on(&ex);
        let fetch = named.spawn_completion(async { 1 });
        let parse = task::Builder::new()
            .name("parse")
            .on(&ex)
            .spawn_after(&fetch, |n| async move { *n + 1 });
        let plain = ex.spawn_completion(async {});
        assert_eq!(*ex.block_on(parse.clone()).unwrap(), 2);
        ex.block_on(plain.clone()).unwrap();
        // Joins the worker: every finish hook has run.
        drop(ex);
        [fetch.label(), parse.label(), plain.label()]
    });
    let seen = seen.lock().unwrap();
    // The dependent is spawned when `fetch` finishes, maybe after `plain`.
    let mut spawned: Vec<(u64, Option<String>)> = seen
        .spawned
        .iter()
        .map(|(id, name)| (id.get(), name.clone()))
        .collect();
    spawned.sort();
    let mut expected: Vec<(u64, Option<String>)> = labels
        .iter()
        .map(|label| (label.id(), label.name().map(String::from)))
        .collect();
    expected.sort();
    assert_eq!(spawned, expected);
    let mut finished: Vec<u64> = seen.finished.iter().map(|id| id.get()).collect();
    finished.sort();
    let ids: Vec<u64> = expected.iter().map(|(id, _)| *id).collect();
    assert_eq!(finished, ids, "each finishes once");
}
