//! Task graphs: tasks with ids and dependencies, run on fastexec with
//! retries, timeouts, cancellation, failure propagation and a report.
//!
//! Build a [`Graph`] from [`Task`]s (one at a time, or as a batch in any
//! order), each with an id, the ids it depends on and a re-runnable body
//! that receives its dependencies' outputs as [`Inputs`]: async
//! ([`Task::new`]) or a plain function ([`Task::sync`]). Adding
//! validates before anything runs: duplicate ids, missing dependencies,
//! cycles and zero timeouts are typed [`GraphError`]s naming the ids.
//!
//! [`Graph::start`] runs it and gives a [`RunHandle`]: the [`TaskState`] of
//! any task, cancel one (and its dependents), wait for one or for all, stop,
//! and add tasks while it runs, also from a running task (a subflow). A
//! completed task releases its dependents by decrementing their counters of
//! unmet dependencies (O(out-degree), no scanning, no future per edge). A
//! task that fails (after its retries) makes its dependents, transitively,
//! upstream-failed while independent branches go on, or with
//! [`Graph::fail_fast`] cancels everything else. A task with one failed and
//! one cancelled dependency ends upstream-failed or cancelled, whichever
//! reaches it first.
//!
//! The [`Report`] tells every task's state, attempts, times and error, and
//! the critical path; it prints as a table, exports DOT and a Chrome trace.
//!
//! ```
//! use std::time::Duration;
//! use fastexec::graph::{Graph, Task, TaskState};
//!
//! let mut g = Graph::<Vec<String>>::new();
//! g.add_batch([
//!     // Members of a batch may come in any order.
//!     Task::new("link", |inp| async move {
//!         Ok(inp.values().flatten().cloned().collect())
//!     })
//!     .after(["compile-a", "compile-b"]),
//!     Task::new("compile-a", |_| async { Ok(vec!["a.o".to_string()]) })
//!         .timeout(Duration::from_secs(10)),
//!     Task::new("compile-b", |_| async { Ok(vec!["b.o".to_string()]) }).retries(2),
//! ])
//! .unwrap();
//! println!("{}", g.to_dot());
//!
//! let report = g.run_blocking();
//! assert_eq!(report.output("link").unwrap(), &["a.o", "b.o"]);
//! assert!(report.tasks().iter().all(|t| t.state == TaskState::Completed));
//! print!("{report}");
//! ```
//!
//! # Sync bodies
//!
//! Most nodes of a compute graph do synchronous work. [`Task::sync`] takes
//! a plain function of the borrowed [`Inputs`], which the runner calls
//! directly: no future, no box, no reference count per attempt. It has the
//! retries, failure propagation and report of an async body; since it
//! never suspends, a timeout judges it when it returns, a cancel ends the
//! task at once but not the call (what it returns is dropped), and it
//! cannot be paused while it runs (see [`Task::sync`]). The kinds mix
//! freely.
//!
//! ```
//! use fastexec::graph::{Graph, Task};
//!
//! // Word counts of three chunks, then their total.
//! let chunks = ["a b c", "d e", "f"];
//! let mut g = Graph::<usize>::new();
//! for (n, chunk) in chunks.into_iter().enumerate() {
//!     g.add(Task::sync(format!("count-{n}"), move |_| Ok(chunk.split_whitespace().count())))
//!         .unwrap();
//! }
//! g.add(Task::sync("total", |inp| Ok(inp.values().sum())).after(["count-0", "count-1", "count-2"]))
//!     .unwrap();
//! assert_eq!(g.run_blocking().output("total"), Some(&6));
//! ```
//!
//! # Scheduling policies
//!
//! Which ready task runs next, and how many run together, is set per graph
//! by a [`SchedulerConfig`] ([`Graph::with_config`], or [`Graph::from_env`]
//! for the `FASTEXEC_*` variables; [`Graph::new`] has no caps and every
//! task at priority 0):
//!
//! * **Priorities with aging** ([`Task::priority`],
//!   [`SchedulerConfig::with_aging`]): the highest
//!   `priority + floor(wait / interval) * boost` goes first, ties to the
//!   task ready first, then the smaller id, so a low-priority task is not
//!   starved by a stream of higher ones. While every task is at priority 0
//!   and no budget is set or task paused, the ready queue is a plain FIFO
//!   (the fast path): tasks start in the order they became ready, and
//!   tasks that became ready at once (the members of a batch, or the
//!   dependents one completion releases) in the order they were added,
//!   not by id.
//! * **Budgets** ([`Task::demand`], [`Demand`]): CPU slots are a hard cap
//!   (a task demanding more than the cap is refused when added,
//!   [`GraphError::ExceedsCap`], naming the task and the resource); RAM and
//!   VRAM are soft caps that one bigger task may exceed while no running
//!   task holds any of that resource; named custom resources are either.
//!   A task holds its demand until it ends, however it ends; a cancelled
//!   task ends, and gives its demand back, when it is cancelled, even if
//!   its body runs on a little (an async one up to its next suspension
//!   point, a sync one to its return).
//! * **Pause, resume, cancel** ([`RunHandle::pause`]): a pending or ready
//!   task pauses at once, a running one at its next
//!   [`Inputs::checkpoint`], or is cancelled if none comes within the
//!   pause timeout.
//! * **Why is it not running?** ([`RunHandle::why`], [`Blocked`]).
//!
//! ```
//! use fastexec::graph::{Demand, Graph, GraphError, ResourceKind, SchedulerConfig, Task};
//!
//! let config = SchedulerConfig::new()
//!     .with_cpu_slots(2)
//!     .with_resource("gpu", 1, ResourceKind::Hard);
//! let mut g = Graph::<u32>::with_config(config);
//! let gpu = || Demand::new().resource("gpu", 1);
//! g.add(Task::new("train", |_| async { Ok(1) }).priority(5).demand(gpu().cpu_slots(2)))
//!     .unwrap();
//! g.add(Task::new("eval", |_| async { Ok(2) }).after(["train"]).demand(gpu()))
//!     .unwrap();
//! g.add(Task::new("report", |_| async { Ok(3) })).unwrap();
//! // A task that could never run is refused when added, not left waiting.
//! let err = g.add(Task::new("huge", |_| async { Ok(4) }).cpu(3)).unwrap_err();
//! assert!(matches!(err, GraphError::ExceedsCap { .. }));
//! assert_eq!(err.to_string(), "task `huge` demands 3 cpu slots, more than the cap of 2");
//! let report = g.run_blocking();
//! assert!(report.is_success());
//! // "train" (priority 5) ran first; "report" waited for its two slots.
//! assert_eq!(report.attempts()[0].task.as_str(), "train");
//! ```
//!
//! # Job files
//!
//! The distributed mode (dtask: a coordinator and workers that run YAML
//! job files of tasks with dependencies across machines) is planned, not
//! part of this crate yet; this layer is designed to be its engine. The
//! model is plain data plus a body, so an entry of its job files maps onto
//! it one to one: `id` is the [`TaskId`],
//! `dependencies` go to [`Task::after`], `retries` and `timeout_ms` to
//! [`Task::retries`] and [`Task::timeout`] (which refuses zero with
//! [`GraphError::ZeroTimeout`] when the task is added), and the entry's
//! `type` picks a handler that becomes the body, parameterised by its
//! `input`. Outputs are serialised bytes there, so such a graph is a
//! `Graph<Vec<u8>>`.
//!
//! ```
//! use std::time::Duration;
//! use fastexec::graph::{Graph, Inputs, Task};
//!
//! // What a YAML job file deserialises to (the parsing is dtask's business).
//! struct Entry {
//!     id: &'static str,
//!     kind: &'static str,
//!     input: &'static str,
//!     dependencies: &'static [&'static str],
//!     retries: u32,
//!     timeout_ms: u64,
//! }
//!
//! fn task_for(e: &Entry) -> Task<Vec<u8>> {
//!     let input = e.input.to_string();
//!     let body = match e.kind {
//!         // map: count the words of its input chunk.
//!         "map" => Task::new(e.id, move |_: Inputs<Vec<u8>>| {
//!             let words = input.split_whitespace().count() as u64;
//!             async move { Ok(words.to_le_bytes().to_vec()) }
//!         }),
//!         // reduce: add up the counts of its dependencies.
//!         _ => Task::new(e.id, |inp: Inputs<Vec<u8>>| async move {
//!             let total: u64 = inp
//!                 .values()
//!                 .map(|b| u64::from_le_bytes(b[..8].try_into().unwrap()))
//!                 .sum();
//!             Ok(total.to_le_bytes().to_vec())
//!         }),
//!     };
//!     body.after(e.dependencies.iter().copied())
//!         .retries(e.retries)
//!         .timeout(Duration::from_millis(e.timeout_ms))
//! }
//!
//! let job = [
//!     Entry { id: "reduce-001", kind: "reduce", input: "", dependencies: &["map-001", "map-002"], retries: 0, timeout_ms: 60_000 },
//!     Entry { id: "map-001", kind: "map", input: "a b c", dependencies: &[], retries: 3, timeout_ms: 60_000 },
//!     Entry { id: "map-002", kind: "map", input: "d e", dependencies: &[], retries: 3, timeout_ms: 60_000 },
//! ];
//! let mut g = Graph::new();
//! g.add_batch(job.iter().map(task_for)).unwrap(); // any order, validated whole
//! let report = g.run_blocking();
//! assert_eq!(report.output("reduce-001").unwrap(), &5u64.to_le_bytes());
//! ```
//!
//! # How a run executes
//!
//! A task is not a spawned executor task. A few *runners* (at most one per
//! worker of the executor the run starts on, see
//! [`current_threads`](crate::current_threads), and one per core) take
//! ready tasks from the graph's ready queue, a batch of up to 32 per lock
//! acquisition (their share of the queue, so two runners do not meet on
//! the lock for every task), and poll each attempt in place; finishing a
//! batch, releasing its dependents and taking the next batch cost one lock
//! acquisition. A batch that runs longer than 50 µs hands the tasks it has
//! not started to a task of their own, which an idle worker can steal (the
//! report then records their attempts on the worker that runs them). The
//! tasks of a batch count as running from when the runner took them (their
//! attempts' start times are when each was actually polled; an attempt
//! cancelled before its runner called its body, which the runner may still
//! call after the cancel, did not run: the report gives it no time, see
//! [`Attempt`]).
//!
//! The clock is read once per task boundary: the reading that ends one
//! attempt of a batch starts the next, and the one taken under the lock
//! ends the batch's last attempt and starts the next batch. Inside a
//! batch the reading is the CPU's tick counter (`rdtsc` on x86_64, a
//! nanosecond of `Instant` elsewhere), a twentieth of what an `Instant`
//! costs; the readings under the lock are exact `Instant`s, and the ticks
//! between two of them become instants by linear interpolation when the
//! batch is recorded (within tens of nanoseconds of what an `Instant`
//! would have read). An attempt with a time limit reads `Instant`s at its
//! start (and, for a sync body, its end), so that its limit and its record
//! count from the same readings. So the times in the report stay
//! consistent: durations are never negative, and a task never starts
//! before its dependencies ended (a dependent is taken only after its
//! dependency was recorded, with a later exact reading, and every
//! interpolated time lies between the exact readings around it). The
//! runner's own work between two attempts (recording one, dispatching the
//! next: tens of nanoseconds) counts in one of them.
//!
//! Only an attempt that
//! returns `Pending` (it awaits I/O, a timer, another task) moves to an
//! executor task of its own, and the runner goes on with the next ready task.
//! Calling an async body makes its future in a box the runner keeps from
//! the last attempt (when the type matches) and polls it once, in one call;
//! a sync body is one call that borrows the runner's inputs, refilled for
//! each attempt. The [`Inputs`] carry the dependencies' outputs (for a `T`
//! with no size and no drop glue, such as `()`, none: every task shares one
//! output) and fetch the task's ids from the run only if the body asks for
//! them.
//! Everything a run touches per task lies in one aligned pair of cache lines
//! of the task's node, so that tasks built on one core and run on another
//! cost few transfers between the cores.
//! A runner yields to the executor every 128 tasks so that other work on its
//! worker gets a turn. The report of a finished run is built when first read.
//!
//! # Task groups
//!
//! A run belongs to the place it was started in: [`Graph::start`] captures
//! the caller's [`Scope`](crate::Scope) (its executor and its
//! [`TaskGroup`](crate::TaskGroup)s), and the run's runners, and the tasks
//! that carry on an attempt that went asynchronous or waits to retry, are
//! spawned there, whichever task wakes them: the one that started the run, a
//! runner, or a task that calls [`RunHandle::resume`], [`RunHandle::cancel`],
//! [`RunHandle::add_task`] or [`RunHandle::add_batch`] from some other group.
//! So an enclosing `block_on` waits for the run's tasks, and cancelling the
//! group of a task that merely steers the run does not touch them (the test
//! `graph_group_steering`). Cancelling a group the run was *started* in
//! cancels the run: its runners and drivers are dropped, as any task of
//! that group, and the first of them dropped before it finished its work
//! cancels every task of the run not yet ended, with
//! [`CancelReason::GroupCancelled`] (tasks added later are cancelled too, as
//! after a stop), so that [`RunHandle::wait_all`], awaited from outside the
//! group, returns its report (the test `graph_group_cancel`). The cancel
//! reaches the run through its tasks only: a run with none alive at that
//! moment (every unfinished task paused, or waiting on a paused one) is not
//! cancelled, and its `wait_all` waits for a resume. What the run spawns
//! later joins the groups only while the membership it was started in
//! lives (see [`Scope`](crate::Scope): the task that started it, or one
//! of the run's own, is still alive); once that has ended, as it has when
//! the group's `wait` returned, the run's tasks belong to no group, and a
//! cancel of the group does not touch them. The executor
//! shutting down while the run goes on, which drops its tasks too, ends
//! the run the same way, with [`CancelReason::ExecutorShutdown`] (the run
//! tells the two apart by whether its executor has begun to shut down when
//! the first of its tasks is lost). Should one of the run's own tasks
//! panic (a bug in this layer: a body's panic is caught and fails only its
//! task), the run ends the same way, with [`CancelReason::Internal`]. A
//! driver dropped on purpose (its task cancelled, or the run stopped)
//! changes nothing else. To end a run and keep the
//! attempts that are running, stop it ([`RunHandle::stop`]) rather than
//! cancel the group it lives in. The pause timeout is a timer, not a task
//! (see [`RunHandle::pause`]).
//!
//! The graph layer is written against fastexec's public API only (`spawn`,
//! `Scope`, `JoinHandle`, `block_on`, `current_threads`, `yield_now`, and
//! the timers of [`time`](crate::time)), so it holds no unsafe code.
#![forbid(unsafe_code)]

mod core;
mod dot;
mod edges;
mod error;
mod id;
mod inputs;
mod lane;
mod policy;
mod report;
mod retry;
mod run;
mod slots;
mod state;
mod task;
mod trace;
mod validate;

pub use error::{BoxError, CancelReason, CyclePath, GraphError, TaskError};
pub use id::TaskId;
pub use inputs::Inputs;
pub use policy::{
    Blocked, BudgetFull, Cancelled, CustomResource, Demand, PauseControl, PauseError, PausedFrom,
    ReadySet, Resource, ResourceKind, SchedulerConfig, LOOKAHEAD, MAX_BYPASS,
};
pub use report::{Attempt, AttemptOutcome, Report, TaskRecord};
pub use retry::RetryPolicy;
pub use run::{Graph, RunHandle};
pub use state::TaskState;
pub use task::Task;
