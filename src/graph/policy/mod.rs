//! The scheduling-policy engine of the graph layer: plain data structures
//! the run core drives under its mutex (no threads, no executor internals).
//!
//! It implements seed 002 (priorities with aging, CPU/RAM/VRAM budgets with
//! the escape rule, pause/resume/cancel at checkpoints, "why isn't it
//! running?"), with dispatch in `O(log n)` instead of 002's `O(|ready set|)`.
//!
//! # Interface for the run core
//!
//! Per run, from a [`SchedulerConfig`] (`SchedulerConfig::from_env()` or
//! built in code):
//!
//! ```text
//! let mut ready  = ReadySet::new(config.aging_interval(), config.aging_boost());
//! let mut budget = Budget::new(&config);                  // crate-private
//! ```
//!
//! * **Submit** (`Core::add`): `ready.reserve_nodes(node_count)`; for each task,
//!   `budget.check_submission(&id, &demand)?` refuses a task that could never
//!   run (`GraphError::ExceedsCap`, `GraphError::UnknownResource`), before
//!   anything is inserted. Keep each node's `Demand` and base priority.
//! * **Became ready** (all deps completed, or resumed from `Ready`):
//!   `ready.insert(node, id.clone(), base_priority, ready_since)` where
//!   `ready_since = Instant::now()` for a newly ready task and, for a
//!   resumed one, the original instant moved on by the time it was paused
//!   (it keeps the priority it had aged to: being paused is not waiting).
//! * **Dispatch** (whenever a slot may have freed: on insert, on a task
//!   ending): loop
//!   `while let Some(node) = ready.pop_best(now, |n| budget.check(&demand[n]).is_ok())`
//!   then `budget.try_acquire(&demand[node])` (cannot fail right after a
//!   successful `check` under the same lock) and start the node. Call
//!   `budget.release(&demand[node])` when it ends. The core keeps the
//!   demand of a task paused at a checkpoint (releasing it would make
//!   resume wait for capacity); `RunHandle::pause` and `Blocked`'s text
//!   say so. When the loop ends with tasks left,
//!   `ready.next_reorder(now, fits)` says when aging may next let one
//!   start with nothing else happening; the core then dispatches again
//!   (a timer of the run, see "Runners" in `core.rs`).
//! * **Pause**: `Pending` -> mark paused with `PausedFrom::Pending`;
//!   `Ready` -> `ready.remove(node)`, keep its `ready_since`, mark
//!   `PausedFrom::Ready`; `Running` -> `control.request_pause()` on the
//!   task's [`PauseControl`] (one per running task, the body reaches it
//!   through `Inputs::checkpoint`, which takes the pause and records the
//!   task as paused from `Running` under the lock). The pause timeout is a
//!   timer outside any task (`RunTimer` in `run.rs`, so no task group of
//!   the caller can cancel it): when due, under the lock,
//!   `Change::TimeOut { request }` cancels the control if that request
//!   still waits, and the core aborts the driver and records the task as
//!   cancelled (`TaskError::Cancelled(CancelReason::PauseTimedOut(d))`,
//!   not the task's own `TaskError::TimedOut`), propagating to dependents.
//!   `RunHandle::pause` awaits `control.acknowledged(Duration::MAX)` to
//!   tell its caller how it went.
//! * **Resume**: restore `from.state()`: `Pending` (re-check unmet deps:
//!   if they completed meanwhile it is now ready), `Ready` (re-insert with
//!   the kept `ready_since` moved on by the time paused), `Running`
//!   (`control.resume()`).
//! * **Cancel**: `ready.remove(node)` if ready; `control.cancel()` if
//!   running (idempotent; a paused body wakes with `Err(Cancelled)`).
//! * **Why?** ([`Blocked`]): `Pending` -> `WaitingOn(unmet deps)`; paused ->
//!   `Paused { from }`; `Ready` -> `BudgetFull(e)` if
//!   `budget.check(&demand)` fails with `e`, else
//!   `Outranked { by: ready.outranked_by(node, now) }`; `Running` between
//!   two attempts -> `Retrying { next_attempt, due_in }` (other running
//!   tasks have no answer); cancelled -> `Cancelled(reason)`; other
//!   terminal states -> `Finished(state)`. (`NotStarted` is never given: a
//!   run's handle exists only once the run has started.)
//!
//! # Fast path
//!
//! With every task at the default priority and no budgets, the ready set has
//! one level: `insert` is a `VecDeque::push_back` plus a slot write, and
//! `pop_best` a `pop_front` (no heads set, no B-tree; `fits` is still
//! called once). The bench `graph_dispatch` measures it.
//!
//! # Files
//!
//! `ready.rs` (the algorithm, its proof and complexity), `budget.rs`,
//! `pause.rs` (the pause protocol), `why.rs`, `config.rs`.

mod budget;
mod config;
mod pause;
mod ready;
mod why;

pub(crate) use budget::Budget;
pub use budget::{BudgetFull, Demand, Resource};
pub use config::{CustomResource, ResourceKind, SchedulerConfig};
pub use pause::{Cancelled, PauseControl, PauseError, PausedFrom};
pub(crate) use pause::{Change, DeferredWake};
pub use ready::{ReadySet, LOOKAHEAD, MAX_BYPASS};
pub use why::Blocked;
