//! Property test of steering a running graph through its `RunHandle`.
//!
//! A random DAG of async and sync bodies, some failing on chosen attempts
//! (retried after a short fixed backoff), some reaching
//! `Inputs::checkpoint`, some (async) waiting on a gate the test opens, is
//! started on a shared executor of 1, 2 or 3 workers; a random script of
//! `cancel`, `pause` (awaited in the script, or in a task of its own whose
//! result is read at the end), `resume`, `stop`, `add_task` / `add_batch`
//! (on tasks in any state, ended ones included), `wait`, `state`, `why`,
//! opening gates and short pauses of the script is applied while it runs.
//! Then every gate is opened, every pause settles, every paused task is
//! resumed, and the run must end. What the docs promise, checked on every
//! run:
//!
//! * the run ends (the hang guard fails the test otherwise), every task in
//!   a terminal state;
//! * a body attempt is called at most once per number, numbers 1, 2, ... up
//!   to `retries + 1`, only once all its dependencies completed (their
//!   outputs are its inputs), never after its task ended, except after a
//!   cancel (`RunHandle::cancel`: a task is running from when a runner
//!   takes its attempt, and its body may still be called then); each
//!   attempt in the report is one body call, its outcome the one the body
//!   gave (but for one a cancel caught taken and not yet called: counted
//!   in `attempts`, cancelled, and once its runner gave it back, as one
//!   that did not run); an attempt that did not run (`ran` false) is a
//!   cancelled task's last, takes no time, and a task none of whose
//!   attempts ran has no times;
//! * every final state is the one its dependencies, its failure plan and
//!   the operations call for: a cancelled task's dependents end cancelled
//!   or upstream-failed, never completed; each cancel reason was caused
//!   (`Requested` by a cancel, `Stopped` by a stop, `PauseTimedOut` by a
//!   pause, `Upstream` by a cancelled ancestor); a task nothing stopped
//!   (resumed ones included) completes, or fails as planned;
//! * after `stop`, no attempt starts but the one a runner had taken;
//! * `wait(id)` gives `Ok(output)` iff the report says completed, else
//!   `TaskFailed` with the report's error; `pause` gives `Ok`,
//!   `TaskEnded` with the final state, `PauseTimedOut` for a task the
//!   report says the pause timeout cancelled, or, once the run is
//!   stopped, `Stopped`;
//! * `pause`, `resume`, `cancel`, `why`, `wait` on an ended task give the
//!   documented answers and change nothing;
//! * a task seen paused makes no progress (no attempt starts, no
//!   checkpoint returns) until it is resumed;
//! * states seen go only forward (pending, ready, running, terminal; paused
//!   aside), and a terminal one is the final one;
//! * the report's times are consistent: start ≤ end, attempts within their
//!   task's span, and a task starts after its dependencies ended.
//!
//! (It found a pause acknowledged inside a checkpoint with the task still
//! recorded running, which the end's resume of the paused tasks then
//! missed: a hang. See `graph_pause_checkpoint_race`.)

mod support;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fastexec::graph::{
    AttemptOutcome, Blocked, CancelReason, Graph, GraphError, Inputs, Report, RunHandle,
    SchedulerConfig, Task, TaskError, TaskState,
};
use fastexec::{Executor, JoinHandle};
use proptest::prelude::*;
use support::pause::{pause, wait_out, Pause};
use support::{fixed_backoff, Gate};

/// The pause timeout of every graph: short, so that a pause of a task
/// that reaches no checkpoint soon cancels it within the case.
const PAUSE_TIMEOUT: Duration = Duration::from_millis(25);

/// One task: its body's kind and plan.
#[derive(Debug, Clone)]
struct Spec {
    sync: bool,
    /// Retries after a failed attempt (0..=2).
    retries: u32,
    /// Bit `a - 1` set: attempt `a` fails.
    fail_on: u8,
    /// Async only: waits on its gate before it ends.
    gated: bool,
    /// Async only: reaches a checkpoint before and after its gate, and
    /// while it waits for it.
    checkpoint: bool,
    backoff_ms: u64,
}

impl Spec {
    fn max_attempts(&self) -> u32 {
        self.retries + 1
    }

    fn fails(&self, attempt: u32) -> bool {
        (1..=8).contains(&attempt) && self.fail_on & (1 << (attempt - 1)) != 0
    }

    /// The attempt that succeeds, if any does.
    fn success(&self) -> Option<u32> {
        (1..=self.max_attempts()).find(|&a| !self.fails(a))
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        proptest::bool::weighted(0.3),
        0u32..3,
        proptest::bits::u8::between(0, 3),
        proptest::bool::weighted(0.4),
        proptest::bool::weighted(0.5),
        prop_oneof![Just(1u64), Just(5), Just(30)],
    )
        .prop_map(
            |(sync, retries, fail_on, gated, checkpoint, backoff_ms)| Spec {
                sync,
                retries,
                // Fail rarely enough that most tasks complete.
                fail_on: fail_on & 0b101 | fail_on & 0b010 & (fail_on << 1),
                gated: gated && !sync,
                checkpoint: checkpoint && !sync,
                backoff_ms,
            },
        )
}

/// A step of the script. Task numbers are taken modulo the number of tasks
/// at that point.
#[derive(Debug, Clone)]
enum Op {
    Cancel(u8),
    /// `true`: awaited in the script; `false`: in a task of its own.
    Pause(u8, bool),
    Resume(u8),
    Stop,
    /// New tasks, each with its dependency picks (taken modulo the tasks
    /// before it, the batch's earlier members included); one is added with
    /// `add_task`, more with `add_batch`, in reverse order.
    Add(Vec<(Spec, Vec<u8>)>),
    /// In a task of its own, whose result is read at the end (a wait on
    /// an ended task is also made in the script, see [`ended_ops`]).
    Wait(u8),
    State(u8),
    Why(u8),
    Open(u8),
    Breathe(Pause),
}

fn op() -> impl Strategy<Value = Op> {
    let idx = any::<u8>;
    prop_oneof![
        3 => idx().prop_map(Op::Cancel),
        4 => (idx(), any::<bool>()).prop_map(|(i, inline)| Op::Pause(i, inline)),
        4 => idx().prop_map(Op::Resume),
        1 => Just(Op::Stop),
        2 => proptest::collection::vec(
            (spec(), proptest::collection::vec(idx(), 0..3)),
            1..4
        )
        .prop_map(Op::Add),
        2 => idx().prop_map(Op::Wait),
        3 => idx().prop_map(Op::State),
        2 => idx().prop_map(Op::Why),
        3 => idx().prop_map(Op::Open),
        3 => pause().prop_map(Op::Breathe),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    /// The initial tasks, each with its dependencies (earlier tasks).
    tasks: Vec<(Spec, Vec<usize>)>,
    ops: Vec<Op>,
    /// CPU slots of the graph's budget, if any.
    cpu_slots: Option<u64>,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..10)
        .prop_flat_map(|n| {
            let tasks = (0..n)
                .map(|i| {
                    let deps =
                        proptest::sample::subsequence((0..i).collect::<Vec<_>>(), 0..=i.min(3));
                    (spec(), deps)
                })
                .collect::<Vec<_>>();
            let ops = proptest::collection::vec(op(), 0..20);
            let cpu = proptest::option::weighted(0.25, 1u64..4);
            (tasks, ops, cpu)
        })
        .prop_map(|(tasks, ops, cpu_slots)| Case {
            tasks,
            ops,
            cpu_slots,
        })
}

/// What a body did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Its body was called.
    Start,
    /// A checkpoint returned `Ok`.
    Progress,
    /// It is about to return.
    End,
}

#[derive(Debug, Clone, Copy)]
struct Event {
    task: usize,
    attempt: u32,
    kind: Kind,
    /// The logical time (see [`Ctx::tick`]).
    at: u64,
}

/// What the bodies and the script share: one logical clock for the bodies'
/// events and the script's observations, the tasks' plans and gates, and
/// the violations seen inside bodies.
#[derive(Default)]
struct Ctx {
    log: Mutex<(u64, Vec<Event>)>,
    tasks: Mutex<Vec<(Spec, Vec<usize>)>>,
    gates: Mutex<Vec<Gate>>,
    errors: Mutex<Vec<String>>,
}

impl Ctx {
    fn tick(&self) -> u64 {
        let mut log = self.log.lock().unwrap();
        log.0 += 1;
        log.0
    }

    fn event(&self, task: usize, attempt: u32, kind: Kind) {
        let mut log = self.log.lock().unwrap();
        log.0 += 1;
        let at = log.0;
        log.1.push(Event {
            task,
            attempt,
            kind,
            at,
        });
    }

    fn error(&self, e: String) {
        self.errors.lock().unwrap().push(e);
    }

    /// An attempt of task `i` begins: its dependencies completed and gave
    /// their outputs, and the task has not ended (but by a cancel).
    fn started(&self, i: usize, deps: &[usize], inp: &Inputs<usize>) {
        let attempt = inp.attempt();
        match inp.run().state(&id(i)) {
            Some(TaskState::Running) | Some(TaskState::Cancelled) => {}
            other => self.error(format!("t{i} attempt {attempt} began in state {other:?}")),
        }
        if inp.len() != deps.len() {
            self.error(format!("t{i} has {} inputs, not {}", inp.len(), deps.len()));
        }
        for &d in deps {
            if inp.get(&id(d)) != Some(&d) {
                self.error(format!("t{i} input t{d}: {:?}", inp.get(&id(d))));
            }
            let state = inp.run().state(&id(d));
            if state != Some(TaskState::Completed) {
                self.error(format!("t{i} attempt {attempt} began with t{d} {state:?}"));
            }
        }
        self.event(i, attempt, Kind::Start);
    }
}

fn id(i: usize) -> String {
    format!("t{i}")
}

/// What attempt `attempt` of task `i` returns.
fn outcome(i: usize, spec: &Spec, attempt: u32) -> Result<usize, fastexec::graph::BoxError> {
    if spec.fails(attempt) {
        Err(format!("t{i} fails attempt {attempt}").into())
    } else {
        Ok(i)
    }
}

/// Task `i` (its spec and gate already in `ctx`).
fn task(ctx: &Arc<Ctx>, i: usize, spec: &Spec, deps: &[usize]) -> Task<usize> {
    let (c, s, d) = (Arc::clone(ctx), spec.clone(), deps.to_vec());
    let task = if spec.sync {
        Task::sync(id(i), move |inp| {
            c.started(i, &d, inp);
            c.event(i, inp.attempt(), Kind::End);
            outcome(i, &s, inp.attempt())
        })
    } else {
        let gate = ctx.gates.lock().unwrap()[i].clone();
        Task::new(id(i), move |inp| {
            let (c, s, d, gate) = (Arc::clone(&c), s.clone(), d.clone(), gate.clone());
            async move {
                c.started(i, &d, &inp);
                let a = inp.attempt();
                if s.checkpoint {
                    inp.checkpoint().await?;
                    c.event(i, a, Kind::Progress);
                }
                if s.gated && s.checkpoint {
                    // Work in slices until the gate opens, a checkpoint
                    // after each: a pause takes effect within a slice.
                    let slice = Duration::from_millis(1);
                    while fastexec::time::timeout(slice, gate.wait()).await.is_err() {
                        inp.checkpoint().await?;
                        c.event(i, a, Kind::Progress);
                    }
                } else if s.gated {
                    gate.wait().await;
                } else {
                    fastexec::yield_now().await;
                }
                if s.checkpoint {
                    inp.checkpoint().await?;
                    c.event(i, a, Kind::Progress);
                }
                c.event(i, a, Kind::End);
                outcome(i, &s, a)
            }
        })
    };
    let backoff = Duration::from_millis(spec.backoff_ms);
    task.after(deps.iter().map(|&d| id(d)))
        .retry(fixed_backoff(spec.max_attempts(), backoff))
}

/// Registers task `i` in `ctx` and makes it.
fn new_task(ctx: &Arc<Ctx>, i: usize, spec: &Spec, deps: &[usize]) -> Task<usize> {
    let mut tasks = ctx.tasks.lock().unwrap();
    let mut gates = ctx.gates.lock().unwrap();
    tasks.truncate(i);
    gates.truncate(i);
    tasks.push((spec.clone(), deps.to_vec()));
    gates.push(Gate::new());
    drop((tasks, gates));
    task(ctx, i, spec, deps)
}

/// What a `wait` gives.
type Waited = Result<Arc<usize>, GraphError>;

/// What the script saw and did.
#[derive(Default)]
struct Script {
    /// Per task: whether `cancel` was called on it.
    cancelled: Vec<bool>,
    /// Per task: whether `pause` was called on it.
    paused: Vec<bool>,
    /// (task, time after it was seen paused).
    seen_paused: Vec<(usize, u64)>,
    /// (task, time before `resume` was called on it).
    resumed: Vec<(usize, u64)>,
    /// The time after `stop` returned, and the states then.
    stop: Option<(u64, Vec<Option<TaskState>>)>,
    /// Per task: the states seen, in order.
    seen: Vec<Vec<TaskState>>,
    pauses: Vec<(usize, JoinHandle<Result<(), GraphError>>)>,
    waits: Vec<(usize, JoinHandle<Waited>)>,
    pause_results: Vec<(usize, Result<(), GraphError>)>,
    wait_results: Vec<(usize, Waited)>,
    /// (task, what `why` said, when).
    whys: Vec<(usize, Blocked, u64)>,
    errors: Vec<String>,
    /// Whether the graph has a budget (`why` can say it is full).
    budget: bool,
}

impl Script {
    fn grow(&mut self, n: usize) {
        self.cancelled.resize(n, false);
        self.paused.resize(n, false);
        self.seen.resize(n, Vec::new());
    }

    /// Reads the state of task `i`, noting it.
    fn state(&mut self, ctx: &Ctx, run: &RunHandle<usize>, i: usize) -> TaskState {
        let state = run.state(&id(i)).expect("the task exists");
        self.seen[i].push(state);
        if state == TaskState::Paused {
            self.seen_paused.push((i, ctx.tick()));
        }
        state
    }
}

/// Runs `case` to its end: the graph, the script, then opening every gate,
/// settling every pause and resuming every paused task.
async fn drive(case: Case) -> (Report<usize>, Arc<Ctx>, Script) {
    let ctx = Arc::new(Ctx::default());
    let mut config = SchedulerConfig::new().with_pause_timeout(PAUSE_TIMEOUT);
    if let Some(slots) = case.cpu_slots {
        config = config.with_cpu_slots(slots);
    }
    let mut g = Graph::<usize>::with_config(config);
    let tasks: Vec<_> = (case.tasks.iter().enumerate())
        .map(|(i, (spec, deps))| new_task(&ctx, i, spec, deps))
        .collect();
    g.add_batch(tasks.into_iter().rev())
        .expect("a DAG validates");
    let mut s = Script {
        budget: case.cpu_slots.is_some(),
        ..Script::default()
    };
    s.grow(case.tasks.len());
    let run = g.start();
    for op in &case.ops {
        apply(&ctx, &run, &mut s, op).await;
    }

    // The end: open every gate, let every pause settle, resume every task
    // paused; the run must then end.
    for gate in ctx.gates.lock().unwrap().iter() {
        gate.open();
    }
    for (i, pause) in std::mem::take(&mut s.pauses) {
        let result = pause.await.expect("a pause's task ends");
        s.pause_results.push((i, result));
    }
    let n = ctx.tasks.lock().unwrap().len();
    for i in 0..n {
        if s.state(&ctx, &run, i) == TaskState::Paused {
            s.resumed.push((i, ctx.tick()));
            match run.resume(&id(i)) {
                // A task paused while pending ends without running if a
                // dependency fails or is cancelled meanwhile (the gates
                // just opened let its dependencies run): nothing to resume.
                Ok(())
                | Err(GraphError::TaskEnded {
                    state: TaskState::UpstreamFailed | TaskState::Cancelled,
                    ..
                }) => {}
                Err(e) => s.errors.push(format!("resume of paused t{i}: {e:?}")),
            }
        }
    }
    let report = run.wait_all().await;
    for (i, wait) in std::mem::take(&mut s.waits) {
        let result = wait.await.expect("a wait's task ends");
        s.wait_results.push((i, result));
    }
    // Once ended, a task answers every operation as documented.
    for i in 0..n {
        ended_ops(&run, &mut s, i).await;
    }
    (report, ctx, s)
}

/// Applies one step of the script.
async fn apply(ctx: &Arc<Ctx>, run: &RunHandle<usize>, s: &mut Script, op: &Op) {
    let n = ctx.tasks.lock().unwrap().len();
    let pick = |k: &u8| usize::from(*k) % n;
    match op {
        Op::Cancel(k) => {
            let i = pick(k);
            if s.state(ctx, run, i).is_terminal() {
                return ended_ops(run, s, i).await;
            }
            s.cancelled[i] = true;
            if let Err(e) = run.cancel(&id(i)) {
                s.errors.push(format!("cancel t{i}: {e:?}"));
            }
            let state = s.state(ctx, run, i);
            if !state.is_terminal() {
                s.errors.push(format!("t{i} is {state} after its cancel"));
            }
        }
        Op::Pause(k, inline) => {
            let i = pick(k);
            if s.state(ctx, run, i).is_terminal() {
                return ended_ops(run, s, i).await;
            }
            s.paused[i] = true;
            if *inline {
                let result = run.pause(&id(i)).await;
                if result.is_ok() {
                    // Paused, unless it ended or its pause timed out since.
                    s.state(ctx, run, i);
                }
                s.pause_results.push((i, result));
            } else {
                let r = run.clone();
                let pause = fastexec::spawn(async move { r.pause(&id(i)).await });
                s.pauses.push((i, pause));
            }
        }
        Op::Resume(k) => {
            let i = pick(k);
            if s.state(ctx, run, i).is_terminal() {
                return ended_ops(run, s, i).await;
            }
            s.resumed.push((i, ctx.tick()));
            // It may end between the two calls.
            match run.resume(&id(i)) {
                Ok(()) => {}
                Err(GraphError::TaskEnded { state, .. }) if state.is_terminal() => {}
                Err(e) => s.errors.push(format!("resume t{i}: {e:?}")),
            }
        }
        Op::Stop => {
            run.stop();
            let at = ctx.tick();
            let states = (0..n).map(|i| run.state(&id(i))).collect();
            s.stop.get_or_insert((at, states));
        }
        Op::Add(new) => add(ctx, run, s, new, n),
        Op::Wait(k) => {
            let i = pick(k);
            let r = run.clone();
            let wait = fastexec::spawn(async move { r.wait(&id(i)).await });
            s.waits.push((i, wait));
        }
        Op::State(k) => {
            s.state(ctx, run, pick(k));
        }
        Op::Why(k) => {
            let i = pick(k);
            match run.why(&id(i)) {
                Ok(Some(why)) => {
                    let at = ctx.tick();
                    if matches!(why, Blocked::Paused { .. }) {
                        s.seen_paused.push((i, at));
                    }
                    s.whys.push((i, why, at));
                }
                Ok(None) => {}
                Err(e) => s.errors.push(format!("why t{i}: {e:?}")),
            }
        }
        Op::Open(k) => ctx.gates.lock().unwrap()[pick(k)].open(),
        Op::Breathe(p) => wait_out(*p).await,
    }
}

/// Adds `new` (after `n` tasks): with `add_task` if one, else with
/// `add_batch` in reverse order. Checks that a task depending on an ended
/// task that did not complete, or added after a stop, ends at once.
fn add(ctx: &Arc<Ctx>, run: &RunHandle<usize>, s: &mut Script, new: &[(Spec, Vec<u8>)], n: usize) {
    let mut doomed = Vec::new();
    let mut made = Vec::new();
    for (k, (spec, picks)) in new.iter().enumerate() {
        let i = n + k;
        let deps: BTreeSet<usize> = picks.iter().map(|&p| usize::from(p) % i).collect();
        let deps: Vec<usize> = deps.into_iter().collect();
        // Ended before the add: stays so.
        let ended = deps.iter().any(|&d| {
            d < n
                && run
                    .state(&id(d))
                    .is_some_and(|st| st.is_terminal() && st != TaskState::Completed)
        });
        doomed.push(ended || deps.iter().any(|&d| d >= n && doomed[d - n]));
        made.push(new_task(ctx, i, spec, &deps));
    }
    let finished = run.is_finished();
    let result = if made.len() == 1 {
        run.add_task(made.pop().unwrap())
    } else {
        run.add_batch(made.into_iter().rev())
    };
    match result {
        Ok(()) => {
            s.grow(n + new.len());
            for (k, doomed) in doomed.into_iter().enumerate() {
                let state = s.state(ctx, run, n + k);
                if (doomed || s.stop.is_some()) && !state.is_terminal() {
                    s.errors
                        .push(format!("t{} added {state}, not ended", n + k));
                }
            }
        }
        Err(GraphError::Finished) if run.is_finished() => {
            ctx.tasks.lock().unwrap().truncate(n);
            ctx.gates.lock().unwrap().truncate(n);
        }
        Err(e) => s
            .errors
            .push(format!("add after {n} (finished: {finished}): {e:?}")),
    }
}

/// Operations on task `i`, which has ended: `pause` and `resume` are
/// `TaskEnded` with its state, `cancel` does nothing, `why` says it ended,
/// `wait` answers at once; none changes its record.
async fn ended_ops(run: &RunHandle<usize>, s: &mut Script, i: usize) {
    let t = id(i);
    let before = record(run, i);
    let state = before.0;
    let ended = |r: Result<(), GraphError>| matches!(r, Err(GraphError::TaskEnded { ref id, state: st }) if id.as_str() == t && st == state);
    let paused = run.pause(&t).await;
    if !ended(paused.clone()) {
        s.errors
            .push(format!("pause of ended t{i} ({state}): {paused:?}"));
    }
    let resumed = run.resume(&t);
    if !ended(resumed.clone()) {
        s.errors
            .push(format!("resume of ended t{i} ({state}): {resumed:?}"));
    }
    if let Err(e) = run.cancel(&t) {
        s.errors.push(format!("cancel of ended t{i}: {e:?}"));
    }
    match run.why(&t) {
        Ok(Some(Blocked::Finished(st))) if st == state && st != TaskState::Cancelled => {}
        Ok(Some(Blocked::Cancelled(_))) if state == TaskState::Cancelled => {}
        other => s
            .errors
            .push(format!("why of ended t{i} ({state}): {other:?}")),
    }
    let waited = run.wait(&t).await;
    s.wait_results.push((i, waited));
    let after = record(run, i);
    if before != after && !settled(&before, &after) {
        s.errors
            .push(format!("ended t{i} changed: {before:?} -> {after:?}"));
    }
}

/// Whether `after` is `before` with a cancelled attempt settled by the
/// runner that held it (see `TaskRecord::start`): the times narrowed to
/// the body's call, or gone if the body was not called before the cancel.
fn settled(before: &Brief, after: &Brief) -> bool {
    let same_but_times = (before.0, before.1, &before.4) == (after.0, after.1, &after.4);
    let narrowed = match (before.2, before.3, after.2, after.3) {
        (_, _, None, None) => true,
        (Some(s0), Some(e0), Some(s1), Some(e1)) => s1 >= s0 && e1 <= e0,
        _ => false,
    };
    before.0 == TaskState::Cancelled && same_but_times && narrowed
}

type Brief = (TaskState, u32, Option<Duration>, Option<Duration>, String);

/// What the report says of task `i`, in brief.
fn record(run: &RunHandle<usize>, i: usize) -> Brief {
    let report = run.report();
    let r = report.task(&id(i)).expect("the task exists");
    let error = r.error.as_ref().map(|e| e.to_string()).unwrap_or_default();
    (r.state, r.attempts, r.start, r.end, error)
}

/// How far along a state is: pending, ready, running, ended (paused: none).
fn rank(state: TaskState) -> Option<u8> {
    match state {
        TaskState::Pending => Some(0),
        TaskState::Ready => Some(1),
        TaskState::Running => Some(2),
        TaskState::Paused => None,
        _ => Some(3),
    }
}

/// Whether `a` is `d` or one of its dependencies, transitively.
fn ancestor(tasks: &[(Spec, Vec<usize>)], a: usize, d: usize) -> bool {
    a == d || tasks[d].1.iter().any(|&p| ancestor(tasks, a, p))
}

/// Every invariant of the module docs on a finished run; the violations.
fn verify(report: &Report<usize>, ctx: &Ctx, s: &Script) -> Vec<String> {
    let mut errors = ctx.errors.lock().unwrap().clone();
    errors.extend(s.errors.iter().cloned());
    let tasks = ctx.tasks.lock().unwrap().clone();
    let events = ctx.log.lock().unwrap().1.clone();
    let mut e = |m: String| errors.push(m);
    let n = tasks.len();
    if report.tasks().len() != n {
        e(format!(
            "{} tasks in the report, not {n}",
            report.tasks().len()
        ));
        return errors;
    }
    let rec = |i: usize| report.task(&id(i)).expect("in the report");
    let stopped = s.stop.is_some();
    for (i, (spec, deps)) in tasks.iter().enumerate() {
        let r = rec(i);
        let starts: Vec<u32> = (events.iter())
            .filter(|ev| ev.task == i && ev.kind == Kind::Start)
            .map(|ev| ev.attempt)
            .collect();
        let calls = starts.len() as u32;
        if !r.state.is_terminal() {
            e(format!("t{i} ended {}", r.state));
        }
        // Body calls: 1, 2, ... up to retries + 1.
        if starts != (1..=calls).collect::<Vec<_>>() || calls > spec.max_attempts() {
            e(format!("t{i} ({spec:?}) body calls {starts:?}"));
        }
        // The report's attempts: one per body call, as it ended.
        let attempts: Vec<_> = (report.attempts().iter())
            .filter(|a| a.task.as_str() == id(i))
            .collect();
        if attempts.len() as u32 != r.attempts {
            e(format!(
                "t{i}: {} attempts listed, {} counted",
                attempts.len(),
                r.attempts
            ));
        }
        // A cancel may come after a runner took an attempt and before it
        // called the body, which then is not called: the attempt counts
        // (a task runs from when its attempt is taken), cancelled, with no
        // call, and did not run once its runner gave it back (a runner
        // still in another cancelled body when the report was taken has
        // not).
        let uncalled = r.state == TaskState::Cancelled
            && r.attempts == calls + 1
            && (attempts.last()).is_some_and(|a| a.outcome == AttemptOutcome::Cancelled);
        let calls = if uncalled { calls + 1 } else { calls };
        if r.attempts != calls {
            e(format!(
                "t{i} ({}): {} attempts, {calls} body calls",
                r.state, r.attempts
            ));
        }
        for a in &attempts {
            let ok = match a.outcome {
                AttemptOutcome::Completed => !spec.fails(a.number),
                AttemptOutcome::Failed => spec.fails(a.number),
                AttemptOutcome::Cancelled => r.state == TaskState::Cancelled,
                _ => false,
            };
            if !ok || a.number > calls {
                e(format!(
                    "t{i} ({spec:?}): attempt {} {:?}",
                    a.number, a.outcome
                ));
            }
            // Times: within the task's span; one that did not run, at the
            // cancel (the task's end, if it has one), taking no time.
            let within = if a.ran {
                a.end
                    .is_some_and(|end| a.start <= end && Some(end) <= r.end)
                    && r.start.is_some_and(|start| start <= a.start)
            } else {
                a.outcome == AttemptOutcome::Cancelled
                    && a.number == r.attempts
                    && a.end == Some(a.start)
                    && r.end.map_or(true, |end| end == a.start)
            };
            if !within {
                e(format!(
                    "t{i} attempt {} at {:?}..{:?}, task {:?}..{:?}",
                    a.number, a.start, a.end, r.start, r.end
                ));
            }
        }
        match (r.start, r.end) {
            (Some(start), Some(end)) if start <= end => {}
            (None, None) if attempts.iter().all(|a| !a.ran) => {}
            other => e(format!("t{i} ({}) times {other:?}", r.state)),
        }
        // Dependencies: ended before it started, in the report and in the
        // bodies' events.
        if let Some(start) = r.start {
            for &d in deps {
                let dr = rec(d);
                if dr.state != TaskState::Completed || !dr.end.is_some_and(|end| end <= start) {
                    e(format!(
                        "t{i} started at {start:?}, dep t{d} {} at {:?}",
                        dr.state, dr.end
                    ));
                }
            }
            let first = events
                .iter()
                .find(|ev| ev.task == i && ev.kind == Kind::Start);
            for &d in deps {
                let last = events
                    .iter()
                    .rev()
                    .find(|ev| ev.task == d && ev.kind == Kind::End);
                if let (Some(first), Some(last)) = (first, last) {
                    if last.at > first.at {
                        e(format!("t{i} began before its dep t{d}'s body ended"));
                    }
                }
            }
        }
        // The final state, from its dependencies' and the operations.
        let dep_states: Vec<_> = deps.iter().map(|&d| rec(d).state).collect();
        let all_completed = dep_states.iter().all(|&st| st == TaskState::Completed);
        let dep_failed = (dep_states.iter())
            .any(|&st| matches!(st, TaskState::Failed | TaskState::UpstreamFailed));
        let dep_cancelled = dep_states.contains(&TaskState::Cancelled);
        match (&r.state, &r.error) {
            (TaskState::Completed, None) => {
                if !all_completed || spec.success() != Some(r.attempts) {
                    e(format!(
                        "t{i} ({spec:?}) completed at attempt {} with deps {dep_states:?}",
                        r.attempts
                    ));
                }
                if r.output.as_deref() != Some(&i) || report.output(&id(i)) != Some(&i) {
                    e(format!("t{i} output {:?}", r.output));
                }
            }
            (TaskState::Failed, Some(TaskError::Failed(_))) => {
                let last = r.attempts;
                if !all_completed || !spec.fails(last) || (last != spec.max_attempts() && !stopped)
                {
                    e(format!(
                        "t{i} ({spec:?}) failed at attempt {last} with deps {dep_states:?}"
                    ));
                }
            }
            (TaskState::UpstreamFailed, Some(TaskError::UpstreamFailed(root))) => {
                let root_ok = (0..n).any(|a| {
                    id(a) == root.as_str()
                        && a != i
                        && ancestor(&tasks, a, i)
                        && rec(a).state == TaskState::Failed
                });
                if !dep_failed || r.attempts != 0 || !root_ok {
                    e(format!(
                        "t{i} upstream-failed ({root}) with deps {dep_states:?}"
                    ));
                }
            }
            (TaskState::Cancelled, Some(TaskError::Cancelled(reason))) => {
                let caused = match reason {
                    CancelReason::Requested => s.cancelled[i],
                    CancelReason::Stopped => stopped,
                    CancelReason::PauseTimedOut(d) => s.paused[i] && *d == PAUSE_TIMEOUT,
                    CancelReason::Upstream(root) => {
                        dep_cancelled
                            && r.attempts == 0
                            && (0..n).any(|a| {
                                id(a) == root.as_str()
                                    && a != i
                                    && ancestor(&tasks, a, i)
                                    && rec(a).state == TaskState::Cancelled
                            })
                    }
                    _ => false,
                };
                if !caused {
                    e(format!(
                        "t{i} cancelled ({reason}) uncaused, deps {dep_states:?}"
                    ));
                }
            }
            (state, error) => e(format!("t{i} ended {state} with {error:?}")),
        }
        // A dependency that failed or was cancelled: never completed.
        if (dep_failed || dep_cancelled) && r.state == TaskState::Completed {
            e(format!("t{i} completed after a dep did not"));
        }
        // Forward only; a terminal state seen is the final one.
        let seen = &s.seen[i];
        let ranks: Vec<u8> = seen.iter().filter_map(|&st| rank(st)).collect();
        if ranks.windows(2).any(|w| w[0] > w[1]) {
            e(format!("t{i} went back: {seen:?}"));
        }
        if let Some(&last) = seen.iter().rev().find(|st| st.is_terminal()) {
            if last != r.state || seen.iter().any(|st| st.is_terminal() && *st != last) {
                e(format!("t{i} seen {seen:?}, ended {}", r.state));
            }
        }
    }
    // A task seen paused makes no progress until its next resume.
    for &(i, seen_at) in &s.seen_paused {
        let until = (s.resumed.iter())
            .filter(|&&(t, at)| t == i && at > seen_at)
            .map(|&(_, at)| at)
            .min()
            .unwrap_or(u64::MAX);
        if let Some(ev) = events
            .iter()
            .find(|ev| ev.task == i && ev.at > seen_at && ev.at < until)
        {
            e(format!(
                "t{i} seen paused at {seen_at}, then {ev:?} before its resume at {until}"
            ));
        }
    }
    // After a stop, only an attempt a runner had taken may start: of a
    // task running then, or cancelled (not by the stop) after its attempt
    // was taken (see `RunHandle::cancel`). The states are read just after
    // `stop` returned, so a taken attempt may have run to its end by then
    // (seen on a loaded machine): a task completed or failed then counts
    // as taken too.
    if let Some((at, states)) = &s.stop {
        for ev in events
            .iter()
            .filter(|ev| ev.kind == Kind::Start && ev.at > *at)
        {
            let i = ev.task;
            let r = rec(i);
            let taken = match states.get(i).copied().flatten() {
                Some(TaskState::Running | TaskState::Completed | TaskState::Failed) => true,
                Some(TaskState::Cancelled) => {
                    !matches!(r.error, Some(TaskError::Cancelled(CancelReason::Stopped)))
                }
                _ => false,
            };
            if !taken || ev.attempt != r.attempts {
                e(format!(
                    "t{i} attempt {} began after the stop (then {:?})",
                    ev.attempt,
                    states.get(i)
                ));
            }
        }
    }
    for (i, result) in &s.wait_results {
        let r = rec(*i);
        match result {
            Ok(out) if r.state == TaskState::Completed && **out == *i => {}
            Err(GraphError::TaskFailed { id: t, source })
                if r.state != TaskState::Completed
                    && t.as_str() == id(*i)
                    && r.error.as_ref().map(|e| e.to_string()) == Some(source.to_string()) => {}
            other => e(format!("wait of t{i} ({}): {other:?}", r.state)),
        }
    }
    for (i, result) in &s.pause_results {
        let r = rec(*i);
        match result {
            Ok(()) => {}
            Err(GraphError::TaskEnded { id: t, state })
                if t.as_str() == id(*i) && *state == r.state => {}
            // A stopped run's running tasks finish: none pauses any more.
            Err(GraphError::Stopped { id: t }) if t.as_str() == id(*i) && s.stop.is_some() => {}
            Err(GraphError::PauseTimedOut { id: t, timeout })
                if t.as_str() == id(*i)
                    && *timeout == PAUSE_TIMEOUT
                    && matches!(r.error, Some(TaskError::Cancelled(CancelReason::PauseTimedOut(d))) if d == PAUSE_TIMEOUT) =>
                {}
            other => e(format!("pause of t{i} ({}): {other:?}", r.state)),
        }
    }
    for (i, why, at) in &s.whys {
        let (spec, deps) = &tasks[*i];
        let r = rec(*i);
        let ok = match why {
            Blocked::Finished(st) => *st == r.state && *st != TaskState::Cancelled,
            Blocked::Cancelled(reason) => {
                matches!(&r.error, Some(TaskError::Cancelled(rr)) if rr == reason)
            }
            Blocked::Retrying { next_attempt, .. } => {
                (2..=spec.max_attempts()).contains(next_attempt) && spec.fails(next_attempt - 1)
            }
            Blocked::WaitingOn(ids) => ids
                .iter()
                .all(|w| deps.iter().any(|&d| id(d) == w.as_str())),
            Blocked::Paused { .. } | Blocked::Outranked { .. } => true,
            Blocked::BudgetFull(_) => s.budget,
            _ => false,
        };
        if !ok {
            e(format!(
                "why t{i} at {at}: {why:?}, ended {} {:?}",
                r.state, r.error
            ));
        }
    }
    errors
}

fn check(case: &Case, executor: &'static Executor) -> Result<(), TestCaseError> {
    let c = case.clone();
    let (report, ctx, script) = support::within(20, move || executor.block_on(drive(c)));
    let errors = verify(&report, &ctx, &script);
    prop_assert!(errors.is_empty(), "{errors:#?}\n{report}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn steering_a_run_keeps_its_promises_one_worker(case in case()) {
        check(&case, support::shared_executor(1))?;
    }

    #[test]
    fn steering_a_run_keeps_its_promises_two_workers(case in case()) {
        check(&case, support::shared_executor(2))?;
    }

    #[test]
    fn steering_a_run_keeps_its_promises_three_workers(case in case()) {
        check(&case, support::shared_executor(3))?;
    }
}
