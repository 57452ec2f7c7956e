//! Property test of a run's [`Report`] and of what it draws: the table,
//! DOT and the Chrome trace.
//!
//! A random DAG (ids with spaces, quotes, backslashes, control characters,
//! NULs among them, and non-ASCII letters, on purpose) of sync and async
//! bodies, some failing (an error or a panic) on their first attempts and
//! retried after a short fixed backoff, some spinning a little (so that runners' batches
//! are handed off), some adding subflow tasks with `Inputs::add_task` /
//! `add_batch` on their first attempt: valid ones (depending on the
//! graph's tasks, on the parent's earlier subflow tasks and on each other,
//! given in any order) and invalid ones (a duplicate id, a missing
//! dependency, a cycle), is run on a shared executor of 1, 2 or 3 workers,
//! fail-fast or not, and perhaps with a `cancel` of one task from outside.
//! Every body logs each call (task, attempt) with `Instant`s read inside
//! it. What the docs promise, checked on every run:
//!
//! * the report has one record per accepted task (initial or subflow), in
//!   the order added, with its declared dependencies (each once), and none
//!   for a rejected addition; a rejected addition returns the typed error
//!   naming the culprit (the duplicate id; the task and its missing
//!   dependency; the cycle, as a path along real dependency edges) and
//!   adds none of its tasks; a valid one is accepted (or refused as
//!   `Finished` once a cancelled parent's run is over);
//! * per record: a terminal state; `attempts` equals the body calls logged
//!   for it, or one more for a cancelled task (an attempt taken, then
//!   cancelled before its body was called); an attempt whose body was
//!   never called did not run (`ran` is false), and only the last attempt
//!   of a cancelled task may not have run, which then starts and ends at
//!   the cancel, its task's end (or the task has none); a completed task
//!   made its planned output on the first attempt planned to succeed, a
//!   failed one used up its attempts; start and end present iff an attempt
//!   ran,
//!   start ≤ end, `duration` = end − start; no task starts before its
//!   dependencies ended; every attempt lies within its task's span, the
//!   first starts with it, the last of a completed or failed task ends
//!   with it, and each body call lies within its attempt; an error iff the
//!   state has one, naming the right cause (the body's error or panic; a
//!   failed ancestor for upstream-failed; the task cancelled from outside,
//!   a cancelled ancestor, or the failed task of a fail-fast run, for a
//!   cancel); `output` is `Some` iff completed; `count` and `is_success`
//!   agree with the records; without fail-fast or cancel every state is
//!   the one the plan calls for;
//! * the critical path is a chain of real dependency edges among tasks
//!   that ran, its duration is the sum of theirs, and no chain is longer
//!   (computed here independently); `elapsed` covers every task's end;
//! * `to_dot()` (of the graph before the run and of the report) declares
//!   every task once, with its state in its label and one colour per
//!   state, and every dependency edge once, nothing else, and stays
//!   well-formed whatever the ids hold;
//! * `chrome_trace()` is valid JSON with one complete event per attempt
//!   that ran,
//!   named by its task, with its number, outcome and worker, whose `ts` and
//!   `dur` are the attempt's times (to the nanosecond the trace prints),
//!   one named row per worker (and, where its attempts would overlap
//!   partly, more rows named after it and sorted under it); each attempt
//!   that ran is on a row of the thread that called its body, the slices
//!   of each row nest (disjoint, or one inside the other), and no two
//!   attempts that ran and never suspended overlap on one worker;
//! * the table lists every task once, with its state and attempts.
//!
//! (It found the attempts of a runner's hand-off recorded on the runner's
//! thread rather than the one that ran them, and a run's `elapsed` ending
//! before some task's end when a runner was held up between reading an
//! attempt's end and recording it. See the tests
//! `a_handed_off_attempt_is_recorded_on_the_thread_that_ran_it` in
//! `src/graph/run.rs` and
//! `elapsed_covers_a_task_that_ended_after_the_last_one_recorded` in
//! `src/graph/report.rs`.)

mod support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fastexec::graph::{
    Attempt, AttemptOutcome, CancelReason, Graph, GraphError, Inputs, Report, Task, TaskError,
    TaskRecord, TaskState,
};
use fastexec::Executor;
use proptest::prelude::*;
use serde_json::Value;
use support::pause::{pause, wait_out, Pause};

/// What an attempt that does not succeed does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Error,
    Panic,
}

/// A task's body and its plan.
#[derive(Debug, Clone)]
struct Body {
    sync: bool,
    /// Async only: where the body may suspend.
    pause: Pause,
    /// Busy work in the body, in µs (a runner hands off the rest of a
    /// batch that runs longer than 50 µs).
    spin_us: u16,
    /// The first `failing` attempts fail.
    failing: u32,
    fault: Fault,
    /// The task's maximum number of attempts.
    max_attempts: u32,
}

impl Body {
    /// Whether an attempt may suspend (and so go on past its runner).
    fn may_suspend(&self) -> bool {
        !self.sync && self.pause != Pause::None
    }
}

fn body() -> impl Strategy<Value = Body> {
    (
        proptest::bool::weighted(0.5),
        pause(),
        prop_oneof![3 => Just(0u16), 1 => 0u16..80],
        prop_oneof![4 => Just(0u32), 1 => 1u32..3],
        proptest::bool::weighted(0.3),
        1u32..3,
    )
        .prop_map(
            |(sync, pause, spin_us, failing, panics, max_attempts)| Body {
                sync,
                pause,
                spin_us,
                failing,
                fault: if panics { Fault::Panic } else { Fault::Error },
                max_attempts,
            },
        )
}

/// A task to add: its id, planned output, body, dependencies (as
/// declared) and, for a task of the initial graph, the additions its first
/// attempt makes.
#[derive(Debug, Clone)]
struct Spec {
    id: String,
    value: u64,
    body: Body,
    deps: Vec<String>,
    subflow: Vec<Addition>,
}

/// One `add_task` (one member) or `add_batch` call of a subflow.
#[derive(Debug, Clone)]
struct Addition {
    batch: bool,
    members: Vec<Spec>,
    expect: Expect,
    /// The members' ids that no task had before.
    fresh: Vec<String>,
}

/// What an addition must give.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    Accepted,
    Duplicate(String),
    Missing {
        task: String,
        dependency: String,
    },
    /// The members of the cycle.
    Cycle(Vec<String>),
}

#[derive(Debug, Clone)]
struct Case {
    tasks: Vec<Spec>,
    /// The order of the initial batch.
    order: Vec<usize>,
    fail_fast: bool,
    /// A task to cancel from outside, after this many yields.
    cancel: Option<(usize, u8)>,
}

/// The id of `core` in one of ten styles, some of which DOT, JSON and the
/// table must escape or cope with.
fn styled(style: u16, core: &str) -> String {
    match style % 10 {
        0 => format!("t{core}"),
        1 => format!("t {core} sp"),
        2 => format!("q\"{core}\""),
        3 => format!("b\\{core}\\"),
        4 => format!("ü{core}→✓"),
        5 => format!("nl\nbreak{core}"),
        6 => format!("\\\"{core}"),
        7 => format!("nul\0{core}"),
        8 => format!("nul\\0{core}"),
        _ => format!("tab\t{core}"),
    }
}

/// An addition's raw draw, made into an [`Addition`] by [`addition`].
#[derive(Debug, Clone)]
struct RawAdd {
    variant: u8,
    batch: bool,
    size: usize,
    picks: Vec<u16>,
    bodies: Vec<Body>,
}

fn raw_add() -> impl Strategy<Value = RawAdd> {
    (
        0u8..8,
        any::<bool>(),
        1usize..=3,
        proptest::collection::vec(any::<u16>(), 12),
        proptest::collection::vec(body(), 3),
    )
        .prop_map(|(variant, batch, size, picks, bodies)| RawAdd {
            variant,
            batch,
            size,
            picks,
            bodies,
        })
}

/// Makes addition `k` of parent `p` from its draw. `initial` are the
/// graph's ids, `earlier` the ids of the parent's earlier accepted
/// additions. Each invalid addition has one defect only, so that the error
/// it must give is the one for that defect.
fn addition(raw: &RawAdd, p: usize, k: usize, initial: &[String], earlier: &[String]) -> Addition {
    let pick = |n: usize| usize::from(raw.picks[n % raw.picks.len()]);
    // The ids in use before member `m` of the batch.
    let in_use = |members: &[Spec], m: usize| -> Vec<String> {
        let batch = members[..m].iter().map(|s| s.id.clone());
        initial
            .iter()
            .chain(earlier)
            .cloned()
            .chain(batch)
            .collect()
    };
    let (variant, batch) = (raw.variant, raw.batch);
    let size = if batch { raw.size } else { 1 };
    let mut members: Vec<Spec> = (0..size)
        .map(|m| Spec {
            id: styled(raw.picks[m] >> 3, &format!("s{p}.{k}.{m}")),
            value: 1000 * (p as u64 + 1) + 10 * k as u64 + m as u64,
            body: raw.bodies[m].clone(),
            deps: Vec::new(),
            subflow: Vec::new(),
        })
        .collect();
    // Valid dependencies: the graph's tasks, the parent's earlier subflow
    // tasks, the batch's earlier members (but in a cycle's batch, whose
    // only cycle must be its ring); sometimes one listed twice.
    for m in 0..size {
        let pool = in_use(&members, if variant == 6 { 0 } else { m });
        let n_deps = pick(m + 3) % 3;
        let mut deps: Vec<String> = (0..n_deps)
            .map(|d| pool[pick(m + 4 + d) % pool.len()].clone())
            .collect();
        if n_deps > 0 && pick(m + 9) % 5 == 0 {
            deps.push(deps[0].clone());
        }
        members[m].deps = deps;
    }
    let expect = match variant {
        4 => {
            // The last member takes an id already in use.
            let last = size - 1;
            let taken = in_use(&members, last);
            let dup = taken[pick(11) % taken.len()].clone();
            members[last].id = dup.clone();
            members[last].deps = vec![initial[pick(10) % initial.len()].clone()];
            Expect::Duplicate(dup)
        }
        5 => {
            let m = pick(11) % size;
            let ghost = styled(raw.picks[10], &format!("ghost{p}.{k}"));
            members[m].deps.push(ghost.clone());
            Expect::Missing {
                task: members[m].id.clone(),
                dependency: ghost,
            }
        }
        6 => {
            // A ring of all the members (a self-loop for one).
            for m in 0..size {
                let next = members[(m + 1) % size].id.clone();
                members[m].deps.push(next);
            }
            Expect::Cycle(members.iter().map(|s| s.id.clone()).collect())
        }
        _ => Expect::Accepted,
    };
    if raw.picks[0] % 2 == 1 {
        // Members of a batch come in any order.
        members.reverse();
    }
    let fresh = members
        .iter()
        .map(|m| m.id.clone())
        .filter(|id| !initial.contains(id) && !earlier.contains(id))
        .collect();
    Addition {
        batch,
        members,
        expect,
        fresh,
    }
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..12)
        .prop_flat_map(|n| {
            let deps = (0..n)
                .map(|i| proptest::sample::subsequence((0..i).collect::<Vec<_>>(), 0..=i.min(3)))
                .collect::<Vec<_>>();
            let styles = proptest::collection::vec(any::<u16>(), n);
            let bodies = proptest::collection::vec(body(), n);
            let subs = proptest::collection::vec(
                prop_oneof![
                    3 => Just(Vec::new()),
                    1 => proptest::collection::vec(raw_add(), 1..4),
                ],
                n,
            );
            let order = Just((0..n).collect::<Vec<_>>()).prop_shuffle();
            let cancel = proptest::option::weighted(0.3, (0..n, 0u8..4));
            (
                deps,
                styles,
                bodies,
                subs,
                order,
                proptest::bool::weighted(0.25),
                cancel,
            )
        })
        .prop_map(|(deps, styles, bodies, subs, order, fail_fast, cancel)| {
            let ids: Vec<String> = (0..deps.len())
                .map(|i| styled(styles[i], &i.to_string()))
                .collect();
            let tasks = (0..deps.len())
                .map(|i| {
                    let mut earlier = Vec::new();
                    let subflow = subs[i]
                        .iter()
                        .enumerate()
                        .map(|(k, raw)| {
                            let a = addition(raw, i, k, &ids, &earlier);
                            if a.expect == Expect::Accepted {
                                earlier.extend(a.members.iter().map(|s| s.id.clone()));
                            }
                            a
                        })
                        .collect();
                    Spec {
                        id: ids[i].clone(),
                        value: i as u64 + 1,
                        body: bodies[i].clone(),
                        deps: deps[i].iter().map(|&d| ids[d].clone()).collect(),
                        subflow,
                    }
                })
                .collect();
            Case {
                tasks,
                order,
                fail_fast,
                cancel,
            }
        })
}

/// One body call, with the clock read inside the body.
#[derive(Debug)]
struct Call {
    task: String,
    attempt: u32,
    start: Instant,
    /// `None`: the call did not return (an async body dropped at a
    /// suspension point).
    end: Option<Instant>,
    /// The name of the thread that called it (an async body: that polled
    /// it first).
    thread: Option<String>,
}

/// What a subflow addition gave.
#[derive(Debug)]
struct Added {
    parent: String,
    index: usize,
    result: Result<(), GraphError>,
    /// After an error: none of the addition's new ids is in the run.
    absent: bool,
}

#[derive(Default)]
struct Log {
    calls: Mutex<Vec<Call>>,
    added: Mutex<Vec<Added>>,
}

impl Log {
    fn begin(&self, task: &str, attempt: u32) -> usize {
        let mut calls = self.calls.lock().unwrap();
        calls.push(Call {
            task: task.to_owned(),
            attempt,
            start: Instant::now(),
            end: None,
            thread: std::thread::current().name().map(String::from),
        });
        calls.len() - 1
    }

    fn end(&self, call: usize) {
        self.calls.lock().unwrap()[call].end = Some(Instant::now());
    }
}

fn fail_message(id: &str, attempt: u32) -> String {
    format!("planned failure of {id} on attempt {attempt}")
}

fn panic_message(id: &str, attempt: u32) -> String {
    format!("planned panic of {id} on attempt {attempt}")
}

/// The attempt's end: its output or its planned fault.
fn conclude(spec: &Spec, attempt: u32) -> Result<u64, fastexec::graph::BoxError> {
    if attempt > spec.body.failing {
        return Ok(spec.value);
    }
    match spec.body.fault {
        Fault::Error => Err(fail_message(&spec.id, attempt).into()),
        Fault::Panic => std::panic::panic_any(panic_message(&spec.id, attempt)),
    }
}

fn spin(us: u16) {
    let until = Instant::now() + Duration::from_micros(us.into());
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Makes the parent's subflow additions (on its first attempt).
fn subflow(log: &Arc<Log>, inp: &Inputs<u64>, spec: &Spec) {
    if inp.attempt() != 1 {
        return;
    }
    for (index, add) in spec.subflow.iter().enumerate() {
        let mut tasks = add.members.iter().map(|m| task(log, m));
        let result = if add.batch {
            inp.add_batch(tasks)
        } else {
            inp.add_task(tasks.next().expect("one member"))
        };
        let absent = result.is_err() && add.fresh.iter().all(|id| inp.run().state(id).is_none());
        log.added.lock().unwrap().push(Added {
            parent: spec.id.clone(),
            index,
            result,
            absent,
        });
    }
}

/// The task of `spec`, logging its calls in `log`.
fn task(log: &Arc<Log>, spec: &Spec) -> Task<u64> {
    let policy = support::fixed_backoff(spec.body.max_attempts, Duration::from_micros(100));
    let deps = spec.deps.clone();
    let (log, spec) = (Arc::clone(log), Arc::new(spec.clone()));
    let task = if spec.body.sync {
        let id = spec.id.clone();
        Task::sync(id, move |inp| {
            let call = log.begin(&spec.id, inp.attempt());
            subflow(&log, inp, &spec);
            spin(spec.body.spin_us);
            log.end(call);
            conclude(&spec, inp.attempt())
        })
    } else {
        let id = spec.id.clone();
        Task::new(id, move |inp| {
            let (log, spec) = (Arc::clone(&log), Arc::clone(&spec));
            async move {
                let call = log.begin(&spec.id, inp.attempt());
                subflow(&log, &inp, &spec);
                wait_out(spec.body.pause).await;
                spin(spec.body.spin_us);
                log.end(call);
                conclude(&spec, inp.attempt())
            }
        })
    };
    task.after(deps).retry(policy)
}

/// A run of `case` and what it left.
struct Outcome {
    report: Report<u64>,
    log: Arc<Log>,
    /// Clock readings just before and after `Graph::start` (which reads the
    /// run's origin in between).
    before: Instant,
    after: Instant,
    /// `to_dot` of the graph before it ran.
    dot: String,
    cancelled: Option<(String, Result<(), GraphError>)>,
}

fn run(case: &Case, executor: &'static Executor) -> Outcome {
    let log = Arc::new(Log::default());
    let mut g = Graph::new();
    g.fail_fast(case.fail_fast);
    g.add_batch(case.order.iter().map(|&i| task(&log, &case.tasks[i])))
        .expect("a DAG validates");
    let dot = g.to_dot();
    let target = case
        .cancel
        .map(|(i, yields)| (case.tasks[i].id.clone(), yields));
    let (report, before, after, cancelled) = support::within(20, move || {
        executor.block_on(async move {
            let before = Instant::now();
            let run = g.start();
            let after = Instant::now();
            let mut cancelled = None;
            if let Some((id, yields)) = target {
                for _ in 0..yields {
                    fastexec::yield_now().await;
                }
                cancelled = Some((id.clone(), run.cancel(&id)));
            }
            (run.wait_all().await, before, after, cancelled)
        })
    });
    Outcome {
        report,
        log,
        before,
        after,
        dot,
        cancelled,
    }
}

/// Every spec that may be added (the initial ones and every subflow
/// member), by id; rejected members' ids are fresh or duplicates, so only
/// accepted ones are looked up.
fn specs_by_id(case: &Case) -> HashMap<String, &Spec> {
    let mut all = HashMap::new();
    for t in &case.tasks {
        all.insert(t.id.clone(), t);
    }
    for t in &case.tasks {
        for a in &t.subflow {
            if a.expect == Expect::Accepted {
                for m in &a.members {
                    all.insert(m.id.clone(), m);
                }
            }
        }
    }
    all
}

/// The ids in order, each once.
fn unique(ids: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    ids.iter().filter(|d| seen.insert(*d)).cloned().collect()
}

/// Whether `ancestor` is a dependency of `id`, directly or not.
fn is_ancestor(report: &Report<u64>, ancestor: &str, id: &str) -> bool {
    let mut stack = vec![id.to_owned()];
    let mut seen = HashSet::new();
    while let Some(t) = stack.pop() {
        for d in &report.task(&t).expect("a dependency has a record").deps {
            if d.as_str() == ancestor {
                return true;
            }
            if seen.insert(d.as_str().to_owned()) {
                stack.push(d.as_str().to_owned());
            }
        }
    }
    false
}

/// Checks the additions: each gave what its plan calls for, and rejected
/// ones added nothing. Returns the ids of accepted subflow tasks, in no
/// particular order.
fn check_additions(case: &Case, out: &Outcome, e: &mut Vec<String>) -> Vec<String> {
    let report = &out.report;
    let added = out.log.added.lock().unwrap();
    let mut accepted = Vec::new();
    for t in &case.tasks {
        let calls_1 = out
            .log
            .calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.task == t.id && c.attempt == 1)
            .count();
        let mine: Vec<&Added> = added.iter().filter(|a| a.parent == t.id).collect();
        let expected = if calls_1 > 0 { t.subflow.len() } else { 0 };
        if mine.len() != expected {
            e.push(format!(
                "{:?} made {} additions, not {expected}",
                t.id,
                mine.len()
            ));
            continue;
        }
        let parent_cancelled = report.task(&t.id).map(|r| r.state) == Some(TaskState::Cancelled);
        for a in mine {
            let plan = &t.subflow[a.index];
            let new_ids: Vec<&str> = plan.members.iter().map(|m| m.id.as_str()).collect();
            let ok = match (&plan.expect, &a.result) {
                (_, Err(GraphError::Finished)) => parent_cancelled,
                (Expect::Accepted, Ok(())) => {
                    accepted.extend(new_ids.iter().map(|s| s.to_string()));
                    true
                }
                (Expect::Duplicate(want), Err(GraphError::DuplicateId(id))) => id.as_str() == want,
                (
                    Expect::Missing { task, dependency },
                    Err(GraphError::MissingDependency {
                        task: t2,
                        dependency: d2,
                    }),
                ) => t2.as_str() == task && d2.as_str() == dependency,
                (Expect::Cycle(ring), Err(GraphError::Cycle(path))) => {
                    cycle_is_valid(ring, path.ids(), &plan.members)
                }
                _ => false,
            };
            if !ok {
                e.push(format!(
                    "addition {} of {:?} (expected {:?}) gave {:?}",
                    a.index, t.id, plan.expect, a.result
                ));
            }
            if a.result.is_err() {
                if !a.absent {
                    e.push(format!(
                        "rejected addition {} of {:?} left tasks in the run",
                        a.index, t.id
                    ));
                }
                for id in &plan.fresh {
                    if report.task(id).is_some() {
                        e.push(format!("rejected task {id:?} has a record"));
                    }
                }
            }
        }
    }
    accepted
}

/// A cycle path names the ring's members, each once, the first repeated
/// at the end, each a dependency of the next.
fn cycle_is_valid(ring: &[String], path: &[fastexec::graph::TaskId], members: &[Spec]) -> bool {
    let Some((last, cycle)) = path.split_last() else {
        return false;
    };
    let names: HashSet<&str> = cycle.iter().map(|i| i.as_str()).collect();
    let ring_set: HashSet<&str> = ring.iter().map(String::as_str).collect();
    let deps_of = |id: &str| {
        members
            .iter()
            .find(|m| m.id == id)
            .map(|m| m.deps.clone())
            .unwrap_or_default()
    };
    path.len() >= 2
        && Some(last) == path.first()
        && names.len() == cycle.len()
        && names == ring_set
        && path
            .windows(2)
            .all(|w| deps_of(w[1].as_str()).iter().any(|d| d == w[0].as_str()))
}

fn check_records(case: &Case, out: &Outcome, accepted: &[String], e: &mut Vec<String>) {
    let report = &out.report;
    let specs = specs_by_id(case);
    let calls = out.log.calls.lock().unwrap();
    let records = report.tasks();

    // One record per accepted task, in the order added, with its deps.
    let mut want: Vec<&str> = case.tasks.iter().map(|t| t.id.as_str()).collect();
    want.extend(accepted.iter().map(String::as_str));
    let mut got: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
    let initial: HashSet<&str> = case.tasks.iter().map(|t| t.id.as_str()).collect();
    if got
        .iter()
        .take(case.tasks.len())
        .any(|id| !initial.contains(id))
    {
        e.push("the initial tasks do not come first".into());
    }
    want.sort_unstable();
    got.sort_unstable();
    if want != got {
        e.push(format!("records {got:?}, accepted {want:?}"));
        return;
    }
    let position: HashMap<&str, usize> = records
        .iter()
        .enumerate()
        .map(|(n, r)| (r.id.as_str(), n))
        .collect();

    let attempts_of = |id: &str| -> Vec<&Attempt> {
        report
            .attempts()
            .iter()
            .filter(|a| a.task.as_str() == id)
            .collect()
    };
    for r in records {
        let id = r.id.as_str();
        let spec = specs[id];
        let mut err = |m: String| e.push(format!("{id:?} ({}): {m}", r.state));
        if !std::ptr::eq(report.task(id).unwrap(), r) {
            err("task(id) is another record".into());
        }
        let deps: Vec<&str> = r.deps.iter().map(|d| d.as_str()).collect();
        if deps != unique(&spec.deps) {
            err(format!("deps {deps:?}, declared {:?}", spec.deps));
        }
        for d in &deps {
            if position[d] >= position[id] {
                err(format!("dependency {d:?} comes after it"));
            }
        }
        if !r.state.is_terminal() {
            err("not terminal".into());
        }

        // Attempts against the body calls logged.
        let mut mine: Vec<&Call> = calls.iter().filter(|c| c.task == id).collect();
        mine.sort_by_key(|c| c.attempt);
        let numbers: Vec<u32> = mine.iter().map(|c| c.attempt).collect();
        let m = numbers.len() as u32;
        if numbers != (1..=m).collect::<Vec<_>>() {
            err(format!("body calls numbered {numbers:?}"));
        }
        let taken_not_called = r.state == TaskState::Cancelled && r.attempts == m + 1;
        if r.attempts != m && !taken_not_called {
            err(format!("{} attempts, {m} body calls", r.attempts));
        }
        if r.attempts > spec.body.max_attempts {
            err(format!(
                "{} attempts, at most {}",
                r.attempts, spec.body.max_attempts
            ));
        }
        let spans = attempts_of(id);
        let span_numbers: Vec<u32> = spans.iter().map(|a| a.number).collect();
        if span_numbers != (1..=r.attempts).collect::<Vec<_>>() {
            err(format!("attempt records numbered {span_numbers:?}"));
        }

        // Attempts that did not run: their body was not called, or only
        // after the cancel (read after the executor's `block_on`, which
        // waited for the runners, so every runner has said which). Only a
        // cancelled task's last attempt, at the cancel, claiming no time.
        for (n, a) in spans.iter().enumerate() {
            let called = mine.iter().any(|c| c.attempt == a.number);
            if !called && a.ran {
                err(format!("attempt {} ran, its body never called", a.number));
            }
            if a.ran {
                continue;
            }
            if r.state != TaskState::Cancelled
                || a.outcome != AttemptOutcome::Cancelled
                || n + 1 != spans.len()
            {
                err(format!(
                    "attempt {} {:?} did not run, of a {} task",
                    a.number, a.outcome, r.state
                ));
            }
            if a.end != Some(a.start) || a.end != r.end.or(a.end) {
                err(format!(
                    "attempt {} did not run but spans {:?}..{:?} (task ends {:?})",
                    a.number, a.start, a.end, r.end
                ));
            }
        }
        let ran = spans.iter().filter(|a| a.ran).count();

        // Times.
        match (r.start, r.end) {
            (None, None) if ran == 0 => {}
            (Some(s), Some(end)) if ran > 0 => {
                if s > end {
                    err(format!("starts at {s:?} after its end {end:?}"));
                }
                if r.duration() != end.checked_sub(s) {
                    err(format!("duration {:?} for {s:?}..{end:?}", r.duration()));
                }
                if end > report.elapsed() {
                    err(format!(
                        "ends at {end:?}, after elapsed {:?}",
                        report.elapsed()
                    ));
                }
                for d in &r.deps {
                    let dep = report.task(d.as_str()).unwrap();
                    if dep.state != TaskState::Completed || dep.end.map_or(true, |de| de > s) {
                        err(format!(
                            "started at {s:?}; dependency {d:?} is {} ending {:?}",
                            dep.state, dep.end
                        ));
                    }
                }
                if spans.first().map(|a| a.start) != Some(s) {
                    err("its first attempt does not start with it".into());
                }
                for a in &spans {
                    match a.end {
                        Some(ae) if a.start >= s && a.start <= ae && ae <= end => {}
                        other => err(format!(
                            "attempt {} spans {:?}..{other:?}, outside {s:?}..{end:?}",
                            a.number, a.start
                        )),
                    }
                }
                let ended = matches!(r.state, TaskState::Completed | TaskState::Failed);
                if ended && spans.last().and_then(|a| a.end) != Some(end) {
                    err("its last attempt does not end with it".into());
                }
            }
            (s, end) => err(format!("{} attempts, times {s:?}..{end:?}", r.attempts)),
        }

        // Each body call within its attempt. The run's clock starts
        // between `before` and `after`, so an offset `d` is an instant
        // between `before + d` and `after + d`.
        for c in &mine {
            let Some(a) = spans.iter().find(|a| a.number == c.attempt) else {
                continue;
            };
            if out.before + a.start > c.start {
                err(format!("attempt {} called before it started", c.attempt));
            }
            if let (Some(ce), Some(ae)) = (c.end, a.end) {
                if a.outcome != AttemptOutcome::Cancelled && ce > out.after + ae {
                    err(format!("attempt {} returned after it ended", c.attempt));
                }
            }
        }

        // Outcomes against the plan.
        let last = spans.len();
        for (n, a) in spans.iter().enumerate() {
            let planned = if a.number > spec.body.failing {
                AttemptOutcome::Completed
            } else if spec.body.fault == Fault::Panic {
                AttemptOutcome::Panicked
            } else {
                AttemptOutcome::Failed
            };
            let cancelled_last = a.outcome == AttemptOutcome::Cancelled
                && n + 1 == last
                && r.state == TaskState::Cancelled;
            if a.outcome != planned && !cancelled_last {
                err(format!(
                    "attempt {} {:?}, planned {planned:?}",
                    a.number, a.outcome
                ));
            }
        }

        // State, error and output.
        let output = report.output(id);
        if (output.is_some() || r.output.is_some()) != (r.state == TaskState::Completed) {
            err(format!("output {output:?}"));
        }
        match (r.state, &r.error) {
            (TaskState::Completed, None) => {
                if output != Some(&spec.value) || r.attempts != spec.body.failing + 1 {
                    err(format!("output {output:?} after {} attempts", r.attempts));
                }
            }
            (TaskState::Failed, Some(error)) => {
                let n = r.attempts;
                let ok = match (spec.body.fault, error) {
                    (Fault::Error, TaskError::Failed(inner)) => {
                        inner.to_string() == fail_message(id, n)
                    }
                    (Fault::Panic, TaskError::Panicked(text)) => *text == panic_message(id, n),
                    _ => false,
                };
                if !ok || n != spec.body.max_attempts || spec.body.failing < n {
                    err(format!("error {error:?} after {n} attempts"));
                }
            }
            (TaskState::UpstreamFailed, Some(TaskError::UpstreamFailed(root))) => {
                let root_state = report.task(root.as_str()).map(|t| t.state);
                if root_state != Some(TaskState::Failed) || !is_ancestor(report, root.as_str(), id)
                {
                    err(format!("upstream {root:?} is {root_state:?}"));
                }
                if r.attempts != 0 {
                    err("ran".into());
                }
            }
            (TaskState::Cancelled, Some(TaskError::Cancelled(reason))) => {
                let ok = match reason {
                    CancelReason::Requested => out
                        .cancelled
                        .as_ref()
                        .is_some_and(|(t, res)| t == id && res.is_ok()),
                    CancelReason::Upstream(root) => {
                        report.task(root.as_str()).map(|t| t.state) == Some(TaskState::Cancelled)
                            && is_ancestor(report, root.as_str(), id)
                    }
                    CancelReason::FailFast(f) => {
                        case.fail_fast
                            && report.task(f.as_str()).map(|t| t.state) == Some(TaskState::Failed)
                    }
                    _ => false,
                };
                if !ok {
                    err(format!("cancelled for {reason:?}"));
                }
            }
            (_, error) => err(format!("error {error:?}")),
        }
    }

    // Without fail-fast or a cancel, every state follows from the plan.
    if !case.fail_fast && out.cancelled.is_none() {
        let mut expected: HashMap<&str, TaskState> = HashMap::new();
        for r in records {
            let spec = specs[r.id.as_str()];
            let doomed = r
                .deps
                .iter()
                .any(|d| expected[d.as_str()] != TaskState::Completed);
            let state = if doomed {
                TaskState::UpstreamFailed
            } else if spec.body.failing < spec.body.max_attempts {
                TaskState::Completed
            } else {
                TaskState::Failed
            };
            if r.state != state {
                e.push(format!("{:?} is {}, planned {state}", r.id, r.state));
            }
            expected.insert(r.id.as_str(), state);
        }
    }

    // Counts.
    let states = [
        TaskState::Pending,
        TaskState::Ready,
        TaskState::Running,
        TaskState::Paused,
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Cancelled,
        TaskState::UpstreamFailed,
    ];
    for s in states {
        let n = records.iter().filter(|r| r.state == s).count();
        if report.count(s) != n {
            e.push(format!("count({s}) = {}, records {n}", report.count(s)));
        }
    }
    let all = records.iter().all(|r| r.state == TaskState::Completed);
    if report.is_success() != all {
        e.push(format!(
            "is_success {} with all completed {all}",
            report.is_success()
        ));
    }
}

/// The heaviest chain of tasks that ran, each a dependency of the next,
/// weighted by duration: memoised from each task back through its
/// dependencies (the report's walks forward in index order).
fn longest_chain(report: &Report<u64>) -> Duration {
    fn heaviest<'a>(
        r: &'a TaskRecord<u64>,
        report: &'a Report<u64>,
        memo: &mut HashMap<&'a str, Duration>,
    ) -> Duration {
        if let Some(&d) = memo.get(r.id.as_str()) {
            return d;
        }
        let own = r.duration().unwrap_or_default();
        let before = r
            .deps
            .iter()
            .filter_map(|d| report.task(d.as_str()))
            .filter(|d| d.duration().is_some())
            .map(|d| heaviest(d, report, memo))
            .max()
            .unwrap_or_default();
        memo.insert(r.id.as_str(), own + before);
        own + before
    }
    let mut memo = HashMap::new();
    report
        .tasks()
        .iter()
        .filter(|r| r.duration().is_some())
        .map(|r| heaviest(r, report, &mut memo))
        .max()
        .unwrap_or_default()
}

fn check_critical_path(report: &Report<u64>, e: &mut Vec<String>) {
    let path: Vec<&TaskRecord<u64>> = report.critical_path().collect();
    let ids: Vec<&str> = path.iter().map(|t| t.id.as_str()).collect();
    for t in &path {
        if t.duration().is_none() {
            e.push(format!("critical path {ids:?}: {:?} never ran", t.id));
        }
    }
    for w in path.windows(2) {
        if !w[1].deps.contains(&w[0].id) {
            e.push(format!(
                "critical path {ids:?}: {:?} is no dependency of {:?}",
                w[0].id, w[1].id
            ));
        }
    }
    let sum: Duration = path.iter().filter_map(|t| t.duration()).sum();
    if report.critical_path_duration() != sum {
        e.push(format!(
            "critical path duration {:?}, its tasks sum to {sum:?}",
            report.critical_path_duration()
        ));
    }
    let longest = longest_chain(report);
    if sum != longest {
        e.push(format!(
            "critical path {ids:?} weighs {sum:?}, a chain weighs {longest:?}"
        ));
    }
    let ran = report.tasks().iter().any(|t| t.duration().is_some());
    if path.is_empty() == ran {
        e.push(format!("critical path {ids:?} with a task run: {ran}"));
    }
}

/// A DOT statement of the forms `render` writes, its quoted strings
/// unescaped.
#[derive(Debug, PartialEq)]
enum Statement {
    Node(String, Option<(String, String)>),
    Edge(String, String),
}

/// Reads one double-quoted DOT string at the start of `s` as Graphviz's
/// scanner does (`\"` and `\\` are pairs; a `"` alone ends it, and so would
/// a NUL), returning it unescaped (`\n` is a newline, as in a label; `\0`
/// is how `render` spells a NUL) and the rest.
fn dot_string(s: &str) -> Result<(String, &str), String> {
    let body = s
        .strip_prefix('"')
        .ok_or_else(|| format!("no string at {s:?}"))?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &body[at + 1..])),
            '\\' => match chars.next() {
                Some((_, '"')) => out.push('"'),
                Some((_, '\\')) => out.push('\\'),
                Some((_, 'n')) => out.push('\n'),
                Some((_, '0')) => out.push('\0'),
                other => return Err(format!("stray escape {other:?} in {s:?}")),
            },
            '\n' => return Err(format!("raw newline in {s:?}")),
            '\0' => return Err(format!("raw NUL in {s:?}")),
            c => out.push(c),
        }
    }
    Err(format!("unterminated string {s:?}"))
}

fn parse_dot(dot: &str) -> Result<Vec<Statement>, String> {
    let body = dot
        .strip_prefix("digraph tasks {\n")
        .and_then(|b| b.strip_suffix("}\n"))
        .ok_or("not one digraph")?;
    let mut out = Vec::new();
    for line in body.lines() {
        let line = line.trim_start();
        if line.starts_with("rankdir=") || line.starts_with("node [") {
            continue;
        }
        let (first, rest) = dot_string(line)?;
        if let Some(rest) = rest.strip_prefix(" -> ") {
            let (second, rest) = dot_string(rest)?;
            if rest != ";" {
                return Err(format!("edge ends with {rest:?}"));
            }
            out.push(Statement::Edge(first, second));
        } else if rest == ";" {
            out.push(Statement::Node(first, None));
        } else {
            let rest = rest
                .strip_prefix(" [label=")
                .ok_or(format!("node {line:?}"))?;
            let (label, rest) = dot_string(rest)?;
            let rest = rest
                .strip_prefix(", fillcolor=")
                .ok_or(format!("node {line:?}"))?;
            let (colour, rest) = dot_string(rest)?;
            if rest != "];" {
                return Err(format!("node ends with {rest:?}"));
            }
            out.push(Statement::Node(first, Some((label, colour))));
        }
    }
    Ok(out)
}

/// `dot` declares each of `tasks` once (with its state, if `states`), and
/// each dependency edge once, and nothing else.
fn check_dot(
    what: &str,
    dot: &str,
    tasks: &[(String, Vec<String>, Option<TaskState>)],
    e: &mut Vec<String>,
) {
    let statements = match parse_dot(dot) {
        Ok(s) => s,
        Err(m) => return e.push(format!("{what}: {m}\n{dot}")),
    };
    let mut nodes: Vec<String> = Vec::new();
    let mut edges: Vec<(String, String)> = Vec::new();
    let mut colours: HashMap<TaskState, String> = HashMap::new();
    let by_id: HashMap<&str, Option<TaskState>> =
        tasks.iter().map(|(id, _, s)| (id.as_str(), *s)).collect();
    for s in statements {
        match s {
            Statement::Node(id, attrs) => {
                match (by_id.get(id.as_str()), attrs) {
                    (Some(None), None) => {}
                    (Some(Some(state)), Some((label, colour))) => {
                        if label != format!("{id}\n{state}") {
                            e.push(format!("{what}: {id:?} labelled {label:?}"));
                        }
                        let seen = colours.entry(*state).or_insert_with(|| colour.clone());
                        if *seen != colour {
                            e.push(format!("{what}: {state} drawn {seen} and {colour}"));
                        }
                    }
                    (state, attrs) => {
                        e.push(format!("{what}: node {id:?} ({state:?}) with {attrs:?}"))
                    }
                }
                nodes.push(id);
            }
            Statement::Edge(from, to) => edges.push((from, to)),
        }
    }
    let distinct: HashSet<&String> = colours.values().collect();
    if distinct.len() != colours.len() {
        e.push(format!("{what}: two states share a colour: {colours:?}"));
    }
    let mut want_nodes: Vec<String> = tasks.iter().map(|(id, _, _)| id.clone()).collect();
    let mut want_edges: Vec<(String, String)> = tasks
        .iter()
        .flat_map(|(id, deps, _)| deps.iter().map(move |d| (d.clone(), id.clone())))
        .collect();
    nodes.sort();
    want_nodes.sort();
    edges.sort();
    want_edges.sort();
    if nodes != want_nodes {
        e.push(format!("{what}: nodes {nodes:?}, tasks {want_nodes:?}"));
    }
    if edges != want_edges {
        e.push(format!(
            "{what}: edges {edges:?}, dependencies {want_edges:?}"
        ));
    }
}

/// The trace is valid JSON with one event per attempt, named rows of each
/// worker sorted under it, slices that nest on each row, and no two
/// attempts that stayed on their worker overlapping.
fn check_trace(case: &Case, out: &Outcome, e: &mut Vec<String>) {
    let report = &out.report;
    let trace = report.chrome_trace();
    let json: Value = match serde_json::from_str(&trace) {
        Ok(v) => v,
        Err(err) => return e.push(format!("trace is no JSON ({err}):\n{trace}")),
    };
    let Some(events) = json["traceEvents"].as_array() else {
        return e.push(format!("trace has no events:\n{trace}"));
    };
    let attempts = report.attempts();
    let mut unmatched: HashMap<(&str, u64), &Attempt> = HashMap::new();
    for a in attempts {
        if a.end.is_none() {
            e.push(format!(
                "attempt {} of {:?} of a finished run has no end",
                a.number, a.task
            ));
        }
        if a.ran {
            unmatched.insert((a.task.as_str(), u64::from(a.number)), a);
        }
    }
    let mut rows: BTreeMap<u64, &str> = BTreeMap::new();
    let mut sort_index: BTreeMap<u64, u64> = BTreeMap::new();
    // Each complete event's row and its attempt.
    let mut slices: Vec<(u64, &Attempt)> = Vec::new();
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    // The trace prints microseconds with three decimals.
    let close = |x: Option<f64>, want: f64| x.is_some_and(|x| (x - want).abs() <= 0.0015);
    for ev in events {
        let pid_ok = ev["pid"].as_u64() == Some(1);
        let tid = ev["tid"].as_u64();
        match ev["ph"].as_str() {
            Some("M") if ev["name"] == "thread_name" => {
                let name = ev["args"]["name"].as_str().unwrap_or_default();
                if !pid_ok || tid.is_none() {
                    e.push(format!("metadata event {ev}"));
                }
                if rows.insert(tid.unwrap_or(u64::MAX), name).is_some() {
                    e.push(format!("row {tid:?} named twice"));
                }
            }
            Some("M") if ev["name"] == "thread_sort_index" => {
                let index = ev["args"]["sort_index"].as_u64();
                if !pid_ok || tid.is_none() || index.is_none() {
                    e.push(format!("metadata event {ev}"));
                }
                let (tid, index) = (tid.unwrap_or(u64::MAX), index.unwrap_or_default());
                if sort_index.insert(tid, index).is_some() {
                    e.push(format!("row {tid:?} sorted twice"));
                }
            }
            Some("X") => {
                let name = ev["name"].as_str().unwrap_or_default();
                let number = ev["args"]["attempt"].as_u64().unwrap_or_default();
                let Some(a) = unmatched.remove(&(name, number)) else {
                    e.push(format!("event {ev} matches no attempt (or a second time)"));
                    continue;
                };
                let end = a.end.unwrap_or_default();
                let ok = pid_ok
                    && ev["cat"] == "task"
                    && tid.is_some()
                    && ev["args"]["outcome"] == a.outcome.as_str()
                    && close(ev["ts"].as_f64(), micros(a.start))
                    && close(ev["dur"].as_f64(), micros(end.saturating_sub(a.start)));
                if !ok {
                    e.push(format!("event {ev} for {a:?}"));
                }
                slices.push((tid.unwrap_or(u64::MAX), a));
            }
            _ => e.push(format!("unexpected event {ev}")),
        }
    }
    for a in unmatched.values() {
        e.push(format!("no event for {a:?}"));
    }
    // A worker's first row has its number and name; its other rows (where
    // its attempts would overlap partly) are named after it and sorted
    // right under it.
    let workers: BTreeMap<u64, &str> = attempts
        .iter()
        .map(|a| (u64::from(a.worker), &*a.worker_name))
        .collect();
    let first_rows: BTreeMap<u64, &str> = rows
        .iter()
        .filter(|(tid, _)| workers.contains_key(tid))
        .map(|(&tid, &name)| (tid, name))
        .collect();
    if first_rows != workers {
        e.push(format!("rows {rows:?}, workers {workers:?}"));
    }
    if sort_index.keys().ne(rows.keys()) {
        e.push(format!("rows {rows:?}, sort indices {sort_index:?}"));
    }
    let mut sorted: Vec<u64> = rows.keys().copied().collect();
    sorted.sort_by_key(|tid| sort_index.get(tid));
    let mut owner: HashMap<u64, u64> = HashMap::new();
    let mut current: Option<(u64, u32)> = None;
    for tid in sorted {
        if workers.contains_key(&tid) {
            current = Some((tid, 1));
            owner.insert(tid, tid);
        } else if let Some((worker, k)) = &mut current {
            *k += 1;
            let want = format!("{} ({k})", workers[worker]);
            if rows[&tid] != want {
                e.push(format!("row {tid} named {:?}, not {want:?}", rows[&tid]));
            }
            owner.insert(tid, *worker);
        } else {
            e.push(format!(
                "row {tid} ({:?}) sorted under no worker",
                rows[&tid]
            ));
        }
    }
    for &(tid, a) in &slices {
        if owner.get(&tid) != Some(&u64::from(a.worker)) {
            e.push(format!(
                "attempt {a:?} on row {tid}, of no row of its worker"
            ));
        }
    }
    // The slices of one row nest: disjoint, or one inside the other.
    slices.sort_by_key(|&(tid, a)| (tid, a.start, std::cmp::Reverse(a.end)));
    let mut enclosing: Vec<(u64, &Attempt)> = Vec::new();
    for &(tid, a) in &slices {
        while enclosing
            .last()
            .is_some_and(|&(t, x)| t != tid || x.end <= Some(a.start))
        {
            enclosing.pop();
        }
        if let Some(&(_, x)) = enclosing.last() {
            if a.end > x.end {
                e.push(format!(
                    "on row {tid}: {:?} #{} ({:?}..{:?}) overlaps {:?} #{} ({:?}..{:?}) partly",
                    x.task, x.number, x.start, x.end, a.task, a.number, a.start, a.end
                ));
            }
        }
        enclosing.push((tid, a));
    }

    let specs = specs_by_id(case);
    let calls = out.log.calls.lock().unwrap();
    // Each attempt that ran is on the row of the thread that called its
    // body.
    for a in attempts.iter().filter(|a| a.ran) {
        let call = calls
            .iter()
            .find(|c| c.task == a.task.as_str() && c.attempt == a.number);
        if let Some(c) = call {
            if c.thread.as_deref() != Some(&*a.worker_name) {
                e.push(format!(
                    "attempt {} of {:?} on the row of {:?}, called on {:?}",
                    a.number, a.task, a.worker_name, c.thread
                ));
            }
        }
    }

    // No two attempts that ran and never suspended overlap on their
    // worker: its thread ran each from its start to its end (a cancelled
    // one from its call to the cancel, or to the call's return, if
    // earlier).
    let called: HashSet<(&str, u32)> = calls.iter().map(|c| (c.task.as_str(), c.attempt)).collect();
    let mut inline: Vec<&Attempt> = attempts
        .iter()
        .filter(|a| !specs[a.task.as_str()].body.may_suspend())
        .filter(|a| called.contains(&(a.task.as_str(), a.number)))
        .filter(|a| a.ran)
        .collect();
    inline.sort_by_key(|a| (a.worker, a.start, a.end));
    for w in inline.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.worker == b.worker && a.end.is_some_and(|end| end > b.start) {
            e.push(format!(
                "on worker {}: {:?} #{} ({:?}..{:?}) overlaps {:?} #{} ({:?}..{:?})",
                a.worker, a.task, a.number, a.start, a.end, b.task, b.number, b.start, b.end
            ));
        }
    }
}

/// An id as the table shows it: control characters escaped, as in a Rust
/// string literal, so that each task keeps one line.
fn one_line(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The table has a row per task, one line each, giving its state and
/// attempts.
fn check_table(report: &Report<u64>, e: &mut Vec<String>) {
    let table = report.to_string();
    let header = table.lines().next().unwrap_or_default();
    for col in [
        "task", "state", "attempts", "start ms", "end ms", "took ms", "error",
    ] {
        if !header.contains(col) {
            e.push(format!("table header {header:?} lacks {col:?}"));
        }
    }
    for r in report.tasks() {
        let shown = one_line(r.id.as_str());
        let id = shown.as_str();
        let rows = table
            .match_indices(id)
            .filter(|&(at, _)| at == 0 || table[..at].ends_with('\n'))
            .filter(|&(at, _)| {
                let mut rest = table[at + id.len()..].trim_start_matches(' ').split(' ');
                rest.next() == Some(r.state.as_str())
                    && rest.find(|w| !w.is_empty()) == Some(&*r.attempts.to_string())
            })
            .count();
        if rows != 1 {
            e.push(format!(
                "{id:?} ({}, {} attempts) has {rows} rows in the table",
                r.state, r.attempts
            ));
        }
    }
    if !table.contains("critical path") {
        e.push("the table has no critical path".into());
    }
}

fn check(case: &Case, executor: &'static Executor) -> Result<(), TestCaseError> {
    let out = run(case, executor);
    let mut e = Vec::new();
    let initial: Vec<(String, Vec<String>, Option<TaskState>)> = case
        .tasks
        .iter()
        .map(|t| (t.id.clone(), unique(&t.deps), None))
        .collect();
    check_dot("graph dot", &out.dot, &initial, &mut e);
    let accepted = check_additions(case, &out, &mut e);
    check_records(case, &out, &accepted, &mut e);
    let report = &out.report;
    if e.is_empty() {
        // The pictures, of a report whose records hold.
        check_critical_path(report, &mut e);
        let ran: Vec<(String, Vec<String>, Option<TaskState>)> = report
            .tasks()
            .iter()
            .map(|r| {
                let deps = r.deps.iter().map(|d| d.as_str().to_owned()).collect();
                (r.id.as_str().to_owned(), deps, Some(r.state))
            })
            .collect();
        check_dot("report dot", &report.to_dot(), &ran, &mut e);
        check_trace(case, &out, &mut e);
        check_table(report, &mut e);
    }
    prop_assert!(e.is_empty(), "{e:#?}\n{report}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_report_and_its_pictures_tell_the_run_one_worker(case in case()) {
        check(&case, support::shared_executor(1))?;
    }

    #[test]
    fn the_report_and_its_pictures_tell_the_run_two_workers(case in case()) {
        check(&case, support::shared_executor(2))?;
    }

    #[test]
    fn the_report_and_its_pictures_tell_the_run_three_workers(case in case()) {
        check(&case, support::shared_executor(3))?;
    }
}
