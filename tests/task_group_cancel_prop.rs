//! Property test of `TaskGroup::cancel` over random task trees.
//!
//! A `block_on` root spawns a random tree of tasks into a `TaskGroup` (the
//! members spawn their children as `block_on_prop.rs` does: one by one, in
//! batches, as completions, as dependents of a task outside the group that
//! ends only after the group's `wait`, from a blocking job, under a nested
//! group) and
//! a few sibling tasks outside it, and the group is cancelled at a random
//! point: by the root, by a sibling, or by one of its own members in the
//! middle of that member's poll, after a random pause. Some members wait
//! forever once they have spawned their children, so only the cancel ends
//! them. What `TaskGroup::cancel`'s docs promise, checked on every tree:
//!
//! * `group.wait()` resolves (the hang guard fails the test otherwise);
//! * once it has, every member that was spawned is gone (its future
//!   dropped, no poll in progress), and none is polled again, checked right
//!   after `wait` and again after the enclosing `block_on`;
//! * a member spawned after its spawner saw the group cancelled never
//!   starts ("tasks spawned into the group afterwards end at once");
//! * with one worker and a member cancelling, no other poll can overlap the
//!   cancel, so "each ends at its next poll" is exact: a member that had not
//!   started when `cancel` returned never starts. (With more workers, or
//!   the root cancelling from its own thread, a member whose poll began
//!   just before the cancel may still run that poll, as the docs allow.)
//! * every awaited `JoinHandle` of a member gives `Ok(output)` if its body
//!   finished and a cancelled `JoinError` if not (never a panic), and every
//!   completion likewise `Ok` or `CompletionError::Cancelled`;
//! * a nested group's `wait` inside the tree, which the cancel reaches
//!   through its members' chain, still returns only once its members are
//!   gone;
//! * the siblings outside the group are not touched: each finishes once and
//!   their handles give their outputs.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use fastexec::cancel::CancellationToken;
use fastexec::{Completion, Executor, JoinHandle, TaskGroup};
use proptest::prelude::*;
use support::pause::{pause, wait_out, Pause};

/// How a parent spawns a child and what it does with the child's handle.
#[derive(Debug, Clone, Copy)]
enum Spawned {
    /// `spawn` (or `TaskGroup::spawn` at the top), the handle awaited.
    Awaited,
    /// `spawn`, the handle dropped at once.
    Dropped,
    /// `spawn_many` with the parent's other such children, handles dropped.
    Batch,
    /// `detach_many` with the parent's other such children.
    DetachedBatch,
    /// `spawn_completion`, the completion kept by the test.
    Completion,
    /// `spawn_after` a completion outside the group that finishes only
    /// once the group's `wait` has returned (so the cancel must end the
    /// dependent before it could start), the completion kept by the test.
    After,
}

/// Where a task spawns its children from.
#[derive(Debug, Clone, Copy)]
enum Spawner {
    /// The task itself.
    Task,
    /// A `spawn_blocking` job the task starts and does not wait for
    /// (`Awaited` children's handles are then dropped).
    Blocking,
    /// A member of a nested `TaskGroup`; the task waits for that group.
    Group,
}

/// Who cancels the group, and when.
#[derive(Debug, Clone, Copy)]
enum Canceller {
    /// The `block_on`'s root future, after this pause.
    Root(Pause),
    /// A task outside the group, after this pause.
    Sibling(Pause),
    /// This member (an index, modulo the number of members that can run
    /// before the cancel: not dependents of the `After` kind nor below one),
    /// after its pause, before it spawns its children: in the middle of its
    /// own poll.
    Member(usize),
}

/// One generated task: its parent (an earlier task of the same forest, or
/// none: spawned by the root), and how it is spawned, waits and spawns; the
/// last flag makes it wait forever after its children (group tasks only).
type Generated = (Option<usize>, Spawned, Pause, Spawner, bool);

#[derive(Debug, Clone)]
struct Case {
    /// The group's tasks, then the siblings'; parents index this vector.
    tasks: Vec<Generated>,
    /// How many of `tasks` are the group's.
    members: usize,
    canceller: Canceller,
}

fn spawned() -> impl Strategy<Value = Spawned> {
    prop_oneof![
        2 => Just(Spawned::Awaited),
        1 => Just(Spawned::Dropped),
        1 => Just(Spawned::Batch),
        1 => Just(Spawned::DetachedBatch),
        1 => Just(Spawned::Completion),
        1 => Just(Spawned::After),
    ]
}

fn spawner() -> impl Strategy<Value = Spawner> {
    prop_oneof![
        6 => Just(Spawner::Task),
        1 => Just(Spawner::Blocking),
        1 => Just(Spawner::Group),
    ]
}

fn canceller() -> impl Strategy<Value = Canceller> {
    prop_oneof![
        1 => pause().prop_map(Canceller::Root),
        1 => pause().prop_map(Canceller::Sibling),
        2 => any::<usize>().prop_map(Canceller::Member),
    ]
}

/// A forest of `n` tasks whose indices start at `base`: each task's parent
/// is an earlier one (any, or one of the three before it when `deep`), or
/// the root (a top-level task).
fn forest(base: usize, n: usize, deep: bool, hold: bool) -> impl Strategy<Value = Vec<Generated>> {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let lowest = if deep { i.saturating_sub(3) } else { 0 };
            // `i` itself stands for the root.
            let parent = (lowest..=i).prop_map(move |p| (p < i).then_some(base + p));
            let holds = if hold {
                prop_oneof![7 => Just(false), 1 => Just(true)].boxed()
            } else {
                Just(false).boxed()
            };
            (parent, spawned(), pause(), spawner(), holds)
        })
        .collect();
    tasks
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..60, 0usize..6, any::<bool>()).prop_flat_map(|(members, siblings, deep)| {
        (
            forest(0, members, deep, true),
            forest(members, siblings, deep, false),
            canceller(),
        )
            .prop_map(move |(mut tasks, others, canceller)| {
                tasks.extend(others);
                Case {
                    tasks,
                    members,
                    canceller,
                }
            })
    })
}

/// What one task records.
#[derive(Default)]
struct Slot {
    /// Its parent (or the root) spawned it.
    spawned: AtomicBool,
    /// Its spawner saw the group cancelled before spawning it.
    spawned_after_cancel: AtomicBool,
    /// Polls begun.
    polls: AtomicU32,
    /// A poll is in progress.
    in_poll: AtomicBool,
    /// Its body ran to the end (how many times).
    finished: AtomicU32,
    /// Its future was dropped (completed or cancelled).
    dropped: AtomicBool,
    /// Its output, once finished.
    output: AtomicUsize,
    /// What the handle gave, for a task whose handle was awaited:
    /// `Ok(output)`, or `Err(whether the error says cancelled)`.
    joined: Mutex<Option<Result<usize, bool>>>,
}

struct Ctx {
    tasks: Vec<Generated>,
    members: usize,
    children: Vec<Vec<usize>>,
    canceller: Canceller,
    /// The members that can run before the cancel (see `Canceller::Member`).
    can_cancel: Vec<usize>,
    /// Whether the executor has one worker.
    one_worker: bool,
    group: TaskGroup,
    slots: Vec<Slot>,
    /// Taken by a task's first poll, and by the cancel; the cancel leaves
    /// here which tasks had started.
    gate: Mutex<Option<Vec<bool>>>,
    completions: Mutex<Vec<(usize, Completion<usize>)>>,
    /// What `Spawned::After` tasks depend on: a task outside the group
    /// that ends when `dependency_open` is cancelled, after the group's wait.
    dependency: Mutex<Option<Completion<()>>>,
    dependency_open: CancellationToken,
    /// Violations seen inside the tasks.
    errors: Mutex<Vec<String>>,
}

impl Ctx {
    fn in_group(&self, index: usize) -> bool {
        index < self.members
    }

    /// Cancels the group, noting which tasks had started by then.
    fn cancel(&self) {
        let mut gate = self.gate.lock().unwrap();
        self.group.cancel();
        if gate.is_none() {
            *gate = Some(
                self.slots
                    .iter()
                    .map(|s| s.polls.load(SeqCst) > 0)
                    .collect(),
            );
        }
    }

    fn error(&self, message: String) {
        self.errors.lock().unwrap().push(message);
    }

    /// `index` and every task below it.
    fn subtree(&self, index: usize, out: &mut Vec<usize>) {
        out.push(index);
        for &child in &self.children[index] {
            self.subtree(child, out);
        }
    }

    fn joined(&self, index: usize, result: &Result<usize, fastexec::JoinError>) {
        *self.slots[index].joined.lock().unwrap() =
            Some(result.as_ref().map(|&v| v).map_err(|e| e.is_cancelled()));
    }
}

type Task = Pin<Box<dyn Future<Output = usize> + Send>>;

/// A task's future wrapped to record its polls and its drop.
struct Probe {
    ctx: Arc<Ctx>,
    index: usize,
    body: Task,
}

impl Future for Probe {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let this = &mut *self;
        let slot = &this.ctx.slots[this.index];
        if slot.polls.load(SeqCst) == 0 {
            let _gate = this.ctx.gate.lock().unwrap();
            slot.polls.fetch_add(1, SeqCst);
        } else {
            slot.polls.fetch_add(1, SeqCst);
        }
        slot.in_poll.store(true, SeqCst);
        let polled = this.body.as_mut().poll(cx);
        slot.in_poll.store(false, SeqCst);
        polled
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.ctx.slots[self.index].dropped.store(true, SeqCst);
    }
}

fn probe(ctx: &Arc<Ctx>, index: usize) -> Probe {
    Probe {
        ctx: ctx.clone(),
        index,
        body: body(ctx.clone(), index),
    }
}

/// Spawns `children` from the current task or blocking job, each as its
/// `Spawned` says, and returns the handles to await.
fn spawn_children(ctx: &Arc<Ctx>, children: &[usize]) -> Vec<(usize, JoinHandle<usize>)> {
    let after_cancel = ctx.group.is_cancelled();
    let mut awaited = Vec::new();
    let mut batch = Vec::new();
    let mut detached_batch = Vec::new();
    for &child in children {
        let slot = &ctx.slots[child];
        slot.spawned.store(true, SeqCst);
        slot.spawned_after_cancel.store(after_cancel, SeqCst);
        let task = probe(ctx, child);
        match ctx.tasks[child].1 {
            Spawned::Awaited => awaited.push((child, fastexec::spawn(task))),
            Spawned::Dropped => drop(fastexec::spawn(task)),
            Spawned::Batch => batch.push(task),
            Spawned::DetachedBatch => detached_batch.push(task),
            Spawned::Completion => {
                let completion = fastexec::spawn_completion(task);
                ctx.completions.lock().unwrap().push((child, completion));
            }
            Spawned::After => {
                let gate = ctx
                    .dependency
                    .lock()
                    .unwrap()
                    .clone()
                    .expect("the root made the dependency");
                let completion = fastexec::spawn_after(gate, move |_| task);
                ctx.completions.lock().unwrap().push((child, completion));
            }
        }
    }
    let mut dropped = Vec::new();
    fastexec::spawn_many(batch, &mut dropped);
    drop(dropped);
    fastexec::detach_many(detached_batch);
    awaited
}

/// Awaits each handle, records what it gave, and sums the outputs.
async fn join_all(ctx: &Arc<Ctx>, handles: Vec<(usize, JoinHandle<usize>)>) -> usize {
    let mut sum = 0;
    for (child, handle) in handles {
        let result = handle.await;
        ctx.joined(child, &result);
        sum += result.unwrap_or(0);
    }
    sum
}

fn body(ctx: Arc<Ctx>, index: usize) -> Task {
    Box::pin(async move {
        let (_, _, wait, spawner, hold) = ctx.tasks[index];
        wait_out(wait).await;
        if let Canceller::Member(k) = ctx.canceller {
            if ctx.can_cancel[k % ctx.can_cancel.len()] == index {
                ctx.cancel();
            }
        }
        let mut output = 1;
        match spawner {
            Spawner::Task => {
                let handles = spawn_children(&ctx, &ctx.children[index]);
                output += join_all(&ctx, handles).await;
            }
            Spawner::Blocking => {
                let job_ctx = ctx.clone();
                drop(fastexec::spawn_blocking(move || {
                    drop(spawn_children(&job_ctx, &job_ctx.children[index]));
                }));
            }
            Spawner::Group => {
                let group = TaskGroup::new();
                let member_ctx = ctx.clone();
                let member = group.spawn(async move {
                    let handles = spawn_children(&member_ctx, &member_ctx.children[index]);
                    join_all(&member_ctx, handles).await
                });
                group.wait().await;
                let mut below = Vec::new();
                ctx.subtree(index, &mut below);
                for task in below.into_iter().skip(1) {
                    let slot = &ctx.slots[task];
                    if slot.spawned.load(SeqCst)
                        && (!slot.dropped.load(SeqCst) || slot.in_poll.load(SeqCst))
                    {
                        ctx.error(format!(
                            "task {index}'s nested group's wait returned with task {task} alive"
                        ));
                    }
                }
                output += member.await.unwrap_or(0);
            }
        }
        if hold {
            std::future::pending::<()>().await;
        }
        let slot = &ctx.slots[index];
        slot.output.store(output, SeqCst);
        slot.finished.fetch_add(1, SeqCst);
        output
    })
}

/// Per task, right after the group's `wait` returned: polls begun, and
/// whether it was spawned and is still alive (future not dropped, or a poll
/// in progress).
type AfterWait = Vec<(u32, bool)>;

/// The root future: spawns the top-level tasks, cancels if it is the
/// canceller, waits for the group and checks, then awaits its handles.
async fn root(ctx: Arc<Ctx>) -> AfterWait {
    let top: Vec<usize> = (0..ctx.tasks.len())
        .filter(|&i| ctx.tasks[i].0.is_none())
        .collect();
    let open = ctx.dependency_open.clone();
    let dependency = fastexec::spawn_completion(async move { open.cancelled().await });
    *ctx.dependency.lock().unwrap() = Some(dependency);
    let mut members = Vec::new();
    let mut siblings = Vec::new();
    for &i in &top {
        let slot = &ctx.slots[i];
        slot.spawned.store(true, SeqCst);
        if ctx.in_group(i) {
            slot.spawned_after_cancel
                .store(ctx.group.is_cancelled(), SeqCst);
            let handle = ctx.group.spawn(probe(&ctx, i));
            match ctx.tasks[i].1 {
                Spawned::Awaited => members.push((i, handle)),
                _ => drop(handle),
            }
        } else {
            siblings.push((i, fastexec::spawn(probe(&ctx, i))));
        }
    }
    match ctx.canceller {
        Canceller::Root(wait) => {
            wait_out(wait).await;
            ctx.cancel();
        }
        Canceller::Sibling(wait) => {
            let sibling = ctx.clone();
            fastexec::spawn(async move {
                wait_out(wait).await;
                sibling.cancel();
            })
            .detach();
        }
        Canceller::Member(_) => {}
    }
    ctx.group.wait().await;
    // Read at once: a member still running would show here.
    let after: AfterWait = ctx
        .slots
        .iter()
        .map(|s| {
            let alive =
                s.spawned.load(SeqCst) && (!s.dropped.load(SeqCst) || s.in_poll.load(SeqCst));
            (s.polls.load(SeqCst), alive)
        })
        .collect();
    if ctx.group.active() != 0 {
        ctx.error(format!("active() is {} after wait", ctx.group.active()));
    }
    ctx.dependency_open.cancel();
    join_all(&ctx, members).await;
    join_all(&ctx, siblings).await;
    after
}

fn check(case: &Case, executor: &'static Executor, one_worker: bool) -> Result<(), TestCaseError> {
    let n = case.tasks.len();
    let mut children = vec![Vec::new(); n];
    for (i, task) in case.tasks.iter().enumerate() {
        if let Some(parent) = task.0 {
            children[parent].push(i);
        }
    }
    // Parents come first: a member is blocked if it is an `After`
    // dependent (spawned by its parent; the root spawns none) or below one.
    let mut blocked = vec![false; case.members];
    for i in 0..case.members {
        let (parent, spawned, ..) = case.tasks[i];
        blocked[i] = parent.is_some_and(|p| blocked[p] || matches!(spawned, Spawned::After));
    }
    let can_cancel = (0..case.members).filter(|&i| !blocked[i]).collect();
    let ctx = Arc::new(Ctx {
        tasks: case.tasks.clone(),
        members: case.members,
        children,
        canceller: case.canceller,
        can_cancel,
        one_worker,
        group: TaskGroup::new(),
        slots: (0..n).map(|_| Slot::default()).collect(),
        gate: Mutex::new(None),
        completions: Mutex::new(Vec::new()),
        dependency: Mutex::new(None),
        dependency_open: CancellationToken::new(),
        errors: Mutex::new(Vec::new()),
    });
    let body_ctx = ctx.clone();
    let after = support::with_timeout(move || executor.block_on(root(body_ctx)));

    let errors = ctx.errors.lock().unwrap().clone();
    prop_assert!(errors.is_empty(), "{errors:?}");
    prop_assert!(ctx.group.is_cancelled());
    let started_at_cancel = ctx
        .gate
        .lock()
        .unwrap()
        .clone()
        .expect("the group was cancelled");
    for i in 0..n {
        let slot = &ctx.slots[i];
        let (polls, finished) = (slot.polls.load(SeqCst), slot.finished.load(SeqCst));
        prop_assert!(finished <= 1, "task {i} finished {finished} times");
        if !ctx.in_group(i) {
            prop_assert_eq!(finished, 1, "sibling {} did not finish", i);
            continue;
        }
        prop_assert!(
            !after[i].1,
            "member {i} alive when the group's wait returned"
        );
        prop_assert_eq!(
            after[i].0,
            polls,
            "member {} polled after the group's wait returned",
            i
        );
        if slot.spawned.load(SeqCst) {
            prop_assert!(
                slot.dropped.load(SeqCst),
                "member {i}'s future never dropped"
            );
        } else {
            prop_assert_eq!(polls, 0, "member {} ran unspawned", i);
        }
        if slot.spawned_after_cancel.load(SeqCst) {
            prop_assert_eq!(polls, 0, "member {} spawned after the cancel started", i);
        }
        if ctx.one_worker && matches!(ctx.canceller, Canceller::Member(_)) && !started_at_cancel[i]
        {
            prop_assert_eq!(
                polls,
                0,
                "member {} had not started at the cancel, then did",
                i
            );
        }
    }
    for i in 0..n {
        let slot = &ctx.slots[i];
        let finished = slot.finished.load(SeqCst) == 1;
        match *slot.joined.lock().unwrap() {
            None => {}
            Some(Ok(v)) => {
                prop_assert!(
                    finished,
                    "task {i}'s handle gave Ok but its body did not finish"
                );
                prop_assert_eq!(
                    v,
                    slot.output.load(SeqCst),
                    "task {}'s handle gave a wrong output",
                    i
                );
            }
            Some(Err(cancelled)) => {
                prop_assert!(cancelled, "task {i}'s handle gave a panic");
                prop_assert!(ctx.in_group(i), "sibling {i}'s handle gave an error");
                prop_assert!(
                    !finished,
                    "task {i}'s body finished but its handle says cancelled"
                );
            }
        }
    }
    for (i, completion) in ctx.completions.lock().unwrap().iter() {
        let finished = ctx.slots[*i].finished.load(SeqCst) == 1;
        match completion.try_get() {
            None => prop_assert!(false, "task {i}'s completion unfinished after block_on"),
            Some(Ok(v)) => {
                prop_assert!(
                    finished,
                    "task {i}'s completion is Ok but its body did not finish"
                );
                prop_assert_eq!(*v, ctx.slots[*i].output.load(SeqCst));
            }
            Some(Err(e)) => {
                prop_assert!(e.is_cancelled(), "task {i}'s completion: {e}");
                prop_assert!(
                    !finished,
                    "task {i}'s body finished but its completion says cancelled"
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn cancelled_group_ends_its_members_one_worker(case in case()) {
        check(&case, support::shared_executor(1), true)?;
    }

    #[test]
    fn cancelled_group_ends_its_members_two_workers(case in case()) {
        check(&case, support::shared_executor(2), false)?;
    }

    #[test]
    fn cancelled_group_ends_its_members_three_workers(case in case()) {
        check(&case, support::shared_executor(3), false)?;
    }
}
