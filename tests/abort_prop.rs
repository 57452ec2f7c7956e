//! Property test of `JoinHandle::abort` and `Completion::abort` over random
//! task trees.
//!
//! A `block_on` root spawns a random tree; each parent aborts some of its
//! children at a random moment: right after spawning them (usually before
//! they start), after a pause of its own (while they run, park on a timer
//! or on their own children, or after they finished), or once the handle
//! says the child finished. Some children aborted at once wait forever
//! after spawning their own children, so only the abort ends them. Parents
//! spawn from the task itself or from a blocking job (which aborts at once).
//! What the docs of `abort`, `is_finished` and `block_on` promise, checked
//! on every tree:
//!
//! * an aborted handle resolves (the hang guard fails the test otherwise),
//!   with the task's output if the task had finished before the abort (as
//!   `is_finished` said), and otherwise with `Ok(output)` only if the body
//!   finished, else a cancelled error (never a panic);
//! * once an aborted handle has given its cancelled error, or says
//!   `is_finished`, the task's future is gone and the task is never polled
//!   again;
//! * with one worker and a task aborting, nothing runs beside the aborter,
//!   so the abort is exact: the child is never polled after it, and its
//!   handle gives its output exactly when it had finished. (Its future is
//!   not dropped inside `abort`, though, as the docs once said of an idle
//!   task: the worker drops it once the aborter's poll returns. With more
//!   workers, an abort that lands in the poll that completes the task drops
//!   the output: the handle says cancelled though the body finished, which
//!   the docs now say.)
//! * aborting a task does not reach its children: every task spawned and
//!   not itself aborted finishes exactly once before `block_on` returns
//!   (the docs of `block_on`: it waits for every task spawned under it),
//!   and their handles give their outputs.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use fastexec::{Executor, JoinHandle};
use proptest::prelude::*;
use support::pause::{pause, wait_out, Pause};

/// When a parent aborts a child.
#[derive(Debug, Clone, Copy)]
enum When {
    /// Right after spawning it.
    AtOnce,
    /// After a pause of the parent's.
    After(Pause),
    /// Once the handle says it finished (the parent yields until then).
    Finished,
}

/// How a parent spawns a child and what it does with the handle.
#[derive(Debug, Clone, Copy)]
enum How {
    /// `spawn`, the handle awaited.
    Awaited,
    /// `spawn`, the handle dropped.
    Dropped,
    /// `spawn`, the handle aborted then awaited.
    Aborted(When),
    /// `spawn_completion`, the completion aborted then awaited.
    Completion(When),
}

/// One generated task: its parent (an earlier task, or none: spawned by the
/// root), how it is spawned, what it waits for first, whether it spawns its
/// children from a blocking job, and whether it waits forever at its end
/// (only if aborted at once).
type Generated = (Option<usize>, How, Pause, bool, bool);

fn when() -> impl Strategy<Value = When> {
    prop_oneof![
        Just(When::AtOnce),
        pause().prop_map(When::After),
        Just(When::Finished),
    ]
}

fn how() -> impl Strategy<Value = How> {
    prop_oneof![
        2 => Just(How::Awaited),
        1 => Just(How::Dropped),
        3 => when().prop_map(How::Aborted),
        1 => when().prop_map(How::Completion),
    ]
}

fn tree() -> impl Strategy<Value = Vec<Generated>> {
    (1usize..60, any::<bool>()).prop_flat_map(|(n, deep)| {
        let tasks: Vec<_> = (0..n)
            .map(|i| {
                let lowest = if deep { i.saturating_sub(3) } else { 0 };
                // `i` itself stands for the root.
                let parent = (lowest..=i).prop_map(move |p| (p < i).then_some(p));
                let blocking = prop_oneof![7 => Just(false), 1 => Just(true)];
                let hold = prop_oneof![3 => Just(false), 1 => Just(true)];
                (parent, how(), pause(), blocking, hold).prop_map(
                    |(parent, how, pause, blocking, hold)| {
                        let at_once = matches!(
                            how,
                            How::Aborted(When::AtOnce) | How::Completion(When::AtOnce)
                        );
                        (parent, how, pause, blocking, hold && at_once)
                    },
                )
            })
            .collect();
        tasks
    })
}

/// What one task records.
#[derive(Default)]
struct Slot {
    spawned: AtomicBool,
    /// Its parent called `abort` on it.
    aborted: AtomicBool,
    /// Its handle said it had finished just before the abort.
    finished_before_abort: AtomicBool,
    /// The abort came from a task on the only worker: nothing else ran.
    exact_abort: AtomicBool,
    /// Polls begun when it was aborted.
    polls_at_abort: AtomicU32,
    polls: AtomicU32,
    in_poll: AtomicBool,
    /// Its body ran to the end (how many times).
    finished: AtomicU32,
    /// Its future was dropped (completed or cancelled).
    dropped: AtomicBool,
    output: AtomicUsize,
    /// What its handle (or completion) gave: `Ok(output)`, or `Err(whether
    /// the error says cancelled)`, and the polls begun at that moment.
    joined: Mutex<Option<(Result<usize, bool>, u32)>>,
}

struct Ctx {
    tasks: Vec<Generated>,
    children: Vec<Vec<usize>>,
    one_worker: bool,
    slots: Vec<Slot>,
    errors: Mutex<Vec<String>>,
}

impl Ctx {
    fn error(&self, message: String) {
        self.errors.lock().unwrap().push(message);
    }

    /// Records an abort of `index` about to happen.
    fn aborting(&self, index: usize, finished: bool, from_task: bool) {
        let slot = &self.slots[index];
        slot.aborted.store(true, SeqCst);
        slot.finished_before_abort.store(finished, SeqCst);
        slot.exact_abort.store(from_task && self.one_worker, SeqCst);
        slot.polls_at_abort.store(slot.polls.load(SeqCst), SeqCst);
    }

    /// After an abort of `index`: if the handle says finished, the future
    /// must be gone (a completion's `is_finished` says only that it has an
    /// outcome, which the task stores before its future is dropped).
    fn aborted(&self, index: usize, finished: bool) {
        let slot = &self.slots[index];
        let handle = matches!(self.tasks[index].1, How::Aborted(_));
        if handle && finished && !slot.dropped.load(SeqCst) {
            self.error(format!(
                "task {index} is_finished after abort, future alive"
            ));
        }
    }

    fn joined(&self, index: usize, result: Result<usize, bool>) {
        let slot = &self.slots[index];
        if result.is_err() && (!slot.dropped.load(SeqCst) || slot.in_poll.load(SeqCst)) {
            self.error(format!(
                "task {index}'s handle said cancelled, future alive"
            ));
        }
        *slot.joined.lock().unwrap() = Some((result, slot.polls.load(SeqCst)));
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
        slot.polls.fetch_add(1, SeqCst);
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
    ctx.slots[index].spawned.store(true, SeqCst);
    Probe {
        ctx: ctx.clone(),
        index,
        body: body(ctx.clone(), index),
    }
}

/// A spawned child as its parent holds it.
enum Held {
    Handle(JoinHandle<usize>),
    Completion(fastexec::Completion<usize>),
}

impl Held {
    fn is_finished(&self) -> bool {
        match self {
            Held::Handle(h) => h.is_finished(),
            Held::Completion(c) => c.is_finished(),
        }
    }

    fn abort(&mut self) {
        match self {
            Held::Handle(h) => h.abort(),
            Held::Completion(c) => c.abort(),
        }
    }

    async fn join(self) -> Result<usize, bool> {
        match self {
            Held::Handle(h) => h.await.map_err(|e| e.is_cancelled()),
            Held::Completion(c) => c.await.map(|v| *v).map_err(|e| e.is_cancelled()),
        }
    }
}

fn abort_time(how: How) -> Option<When> {
    match how {
        How::Aborted(when) | How::Completion(when) => Some(when),
        How::Awaited | How::Dropped => None,
    }
}

/// Where children are spawned from.
#[derive(Clone, Copy, PartialEq)]
enum From {
    /// A task, on a worker.
    Task,
    /// The root future, on the test's thread beside the workers.
    Root,
    /// A blocking job, which cannot wait: it aborts every child to abort
    /// at once, and drops the handles.
    Job,
}

/// Spawns `children`, aborting at once those to abort at once; returns the
/// handles the caller still has to deal with.
fn spawn_children(ctx: &Arc<Ctx>, children: &[usize], from: From) -> Vec<(usize, Held)> {
    let mut held = Vec::new();
    for &child in children {
        let how = ctx.tasks[child].1;
        let mut handle = match how {
            How::Completion(_) => Held::Completion(fastexec::spawn_completion(probe(ctx, child))),
            _ => Held::Handle(fastexec::spawn(probe(ctx, child))),
        };
        if matches!(abort_time(how), Some(When::AtOnce))
            || (from == From::Job && abort_time(how).is_some())
        {
            ctx.aborting(child, handle.is_finished(), from == From::Task);
            handle.abort();
            ctx.aborted(child, handle.is_finished());
        }
        if !matches!(how, How::Dropped) {
            held.push((child, handle));
        }
    }
    held
}

/// Deals with each spawned child in turn as its `How` says; returns the
/// sum of the outputs received.
async fn join_children(ctx: &Arc<Ctx>, held: Vec<(usize, Held)>, from: From) -> usize {
    let mut sum = 0;
    for (child, mut handle) in held {
        match abort_time(ctx.tasks[child].1) {
            None | Some(When::AtOnce) => {}
            Some(When::After(pause)) => {
                wait_out(pause).await;
                ctx.aborting(child, handle.is_finished(), from == From::Task);
                handle.abort();
                ctx.aborted(child, handle.is_finished());
            }
            Some(When::Finished) => {
                while !handle.is_finished() {
                    fastexec::yield_now().await;
                }
                ctx.aborting(child, true, from == From::Task);
                handle.abort();
                ctx.aborted(child, handle.is_finished());
            }
        }
        let result = handle.join().await;
        ctx.joined(child, result);
        sum += result.unwrap_or(0);
    }
    sum
}

fn body(ctx: Arc<Ctx>, index: usize) -> Task {
    Box::pin(async move {
        let (_, _, pause, blocking, hold) = ctx.tasks[index];
        wait_out(pause).await;
        let mut output = 1;
        if blocking {
            let job_ctx = ctx.clone();
            drop(fastexec::spawn_blocking(move || {
                drop(spawn_children(
                    &job_ctx,
                    &job_ctx.children[index],
                    From::Job,
                ));
            }));
        } else {
            let held = spawn_children(&ctx, &ctx.children[index], From::Task);
            output += join_children(&ctx, held, From::Task).await;
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

fn check(
    tasks: &[Generated],
    executor: &'static Executor,
    one_worker: bool,
) -> Result<(), TestCaseError> {
    let n = tasks.len();
    let mut children = vec![Vec::new(); n];
    let mut top = Vec::new();
    for (i, task) in tasks.iter().enumerate() {
        match task.0 {
            Some(parent) => children[parent].push(i),
            None => top.push(i),
        }
    }
    let ctx = Arc::new(Ctx {
        tasks: tasks.to_vec(),
        children,
        one_worker,
        slots: (0..n).map(|_| Slot::default()).collect(),
        errors: Mutex::new(Vec::new()),
    });
    let root_ctx = ctx.clone();
    support::with_timeout(move || {
        executor.block_on(async move {
            // The root runs on the test's thread, beside the worker: its
            // aborts are not exact.
            let held = spawn_children(&root_ctx, &top, From::Root);
            join_children(&root_ctx, held, From::Root).await
        })
    });

    let errors = ctx.errors.lock().unwrap().clone();
    prop_assert!(errors.is_empty(), "{errors:?}");
    for i in 0..n {
        let slot = &ctx.slots[i];
        let polls = slot.polls.load(SeqCst);
        let finished = slot.finished.load(SeqCst);
        let aborted = slot.aborted.load(SeqCst);
        prop_assert!(finished <= 1, "task {i} finished {finished} times");
        if !slot.spawned.load(SeqCst) {
            prop_assert_eq!(polls, 0, "task {} ran unspawned", i);
            continue;
        }
        prop_assert!(slot.dropped.load(SeqCst), "task {i}'s future never dropped");
        if !aborted {
            prop_assert_eq!(finished, 1, "task {} was not aborted and did not finish", i);
        }
        let joined = *slot.joined.lock().unwrap();
        if let Some((result, polls_then)) = joined {
            match result {
                Ok(v) => {
                    prop_assert_eq!(finished, 1, "task {}'s handle gave Ok, body unfinished", i);
                    prop_assert_eq!(v, slot.output.load(SeqCst), "task {}'s output", i);
                }
                Err(cancelled) => {
                    prop_assert!(cancelled, "task {i}'s handle gave a panic");
                    prop_assert!(aborted, "task {i}'s handle cancelled, task not aborted");
                    prop_assert_eq!(
                        polls,
                        polls_then,
                        "task {} polled after its handle said cancelled",
                        i
                    );
                    prop_assert!(
                        !slot.finished_before_abort.load(SeqCst),
                        "task {i} finished before its abort, handle says cancelled"
                    );
                }
            }
            if slot.exact_abort.load(SeqCst) {
                prop_assert_eq!(
                    polls,
                    slot.polls_at_abort.load(SeqCst),
                    "task {} polled after its abort on the only worker",
                    i
                );
                prop_assert_eq!(
                    result.is_ok(),
                    slot.finished_before_abort.load(SeqCst),
                    "task {}: Ok iff it had finished when aborted on the only worker",
                    i
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn abort_ends_only_the_aborted_task_one_worker(tasks in tree()) {
        check(&tasks, support::shared_executor(1), true)?;
    }

    #[test]
    fn abort_ends_only_the_aborted_task_two_workers(tasks in tree()) {
        check(&tasks, support::shared_executor(2), false)?;
    }

    #[test]
    fn abort_ends_only_the_aborted_task_three_workers(tasks in tree()) {
        check(&tasks, support::shared_executor(3), false)?;
    }
}
