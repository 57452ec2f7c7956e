//! Thread-local state: which worker this thread is, which executor a
//! `block_on` on this thread belongs to, and the task-group membership of
//! whatever is being polled right now (kept as a cache after a worker's
//! poll, see [`enter_cached`]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::executor::Shared;
use crate::task_group::{MemberGuard, Membership, MembershipArc};
use crate::worker::Worker;
use std::sync::Arc;

thread_local! {
    /// Set for the whole life of a worker thread.
    static WORKER: RefCell<Option<Rc<Worker>>> = const { RefCell::new(None) };
    /// `WORKER`'s worker while spawns from this thread go to its ring: set
    /// with `WORKER`, empty while a `block_on` of another executor runs here
    /// (`EXECUTOR` set). A plain `Cell`, so the spawn path finds its worker
    /// with one test (no `RefCell` borrow, no separate flags to read).
    static SPAWN_WORKER: Cell<Option<Rc<Worker>>> = const { Cell::new(None) };
    /// Set while `block_on` runs on a thread that is not a worker.
    /// In an `Rc` so that [`with_executor`] can hold it past the cell's
    /// borrow without an atomic operation (see [`with_block_on_executor`]).
    static EXECUTOR: RefCell<Option<BlockOnExecutor>> = const { RefCell::new(None) };
    /// Whether `EXECUTOR` is set. Destructor-free, so [`with_executor`] on
    /// a worker (where `EXECUTOR` is rarely set) reads one plain cell
    /// instead of `EXECUTOR`'s registration check and borrow. (A worker's
    /// task spawning reads `SPAWN_WORKER` alone.)
    static HAS_EXECUTOR: Cell<bool> = const { Cell::new(false) };
    /// Which membership the code running here is in (see [`InScope`]).
    /// Destructor-free, so the common case (a task in no group, polled
    /// where no membership is installed) reads one plain cell and skips
    /// the cells below.
    static IN_SCOPE: Cell<InScope> = const { Cell::new(InScope::None) };
    /// The installed membership, while `IN_SCOPE` is `Installed`; empty
    /// otherwise.
    static MEMBERSHIP: Cell<Option<MembershipArc>> = const { Cell::new(None) };
    /// The membership of the last task polled here through
    /// [`enter_cached`], and the current one while `IN_SCOPE` is `Cached`.
    /// A `Weak`: a strong reference would count in the scope's group (see
    /// `task_group.rs`) and keep its `block_on` waiting; the polled task's
    /// own guard keeps it alive while it is in use.
    #[cfg(not(loom))]
    static CACHE: Cache = const { Cache(Cell::new(None)) };
    /// The address of the membership `CACHE` refers to, or null. Updated
    /// with every write of `CACHE`, and destructor-free, so [`enter_cached`]
    /// compares a task's membership with the cached one at the cost of a
    /// plain load. The `Weak` keeps that allocation, so an equal address is
    /// the same membership; when `CACHE` is torn down (its `Weak` gone, the
    /// allocation free for another membership) it sets this back to null.
    static CACHE_ADDR: Cell<*const Membership> = const { Cell::new(std::ptr::null()) };
    /// The address of the membership of the last task [`enter_cached`]
    /// declined to cache. Only compared, never followed: a stale address
    /// reused by a new membership only makes that one cached a poll early.
    static LAST_UNCACHED: Cell<*const Membership> = const { Cell::new(std::ptr::null()) };
    /// The id of the executor whose worker this thread is, or
    /// [`NOT_A_WORKER`]. A copy of what `WORKER` says, in a destructor-free
    /// cell: the spawn and wake paths of other threads read it to go
    /// straight to the injector, without `WORKER`'s registration check and
    /// borrow. Also `NOT_A_WORKER` while a `block_on` of another executor
    /// runs on the worker's thread: the worker then runs none of its
    /// queue, so its executor's tasks woken or spawned here go to the
    /// injector, for the other workers, not to this worker's slot or ring.
    static WORKER_OF: Cell<u64> = const { Cell::new(NOT_A_WORKER) };
    /// What the task that just ran on this thread left to release (see
    /// [`stash_finished`]). Destructor-free, so a worker reads and resets
    /// it for every task at the cost of a plain memory access.
    static COMPLETION: Cell<Completed> = const { Cell::new(Completed::No) };
    /// The group guard of a task that completed in its last poll on this
    /// thread, when it had one, released by [`release_finished`].
    static FINISHED: Cell<Option<MemberGuard>> = const { Cell::new(None) };
    /// This thread's key for [`thread_key`], or 0 before its first call.
    static THREAD_KEY: Cell<u64> = const { Cell::new(0) };
}

/// A number unique to this thread for the life of the process (never 0):
/// what the counter of outside spawns that one thread owns is claimed with
/// (`metrics.rs`). Unlike `ThreadId`, it is read from a destructor-free
/// cell with a plain load.
#[inline]
pub(crate) fn thread_key() -> u64 {
    match THREAD_KEY.get() {
        0 => new_thread_key(),
        key => key,
    }
}

#[cold]
fn new_thread_key() -> u64 {
    // Not the loom shim: a process-wide `static` needs a const constructor.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    // Relaxed: only uniqueness matters, which the RMW gives.
    let key = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    THREAD_KEY.set(key);
    key
}

/// Whether, and how, a membership is current on this thread.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InScope {
    /// None: tasks spawned here count in no group.
    None,
    /// The one in `MEMBERSHIP` (lent by a task or a `block_on` root).
    Installed,
    /// The one `CACHE` refers to, held alive by the task being polled.
    Cached,
}

/// `WORKER_OF` on a thread that is no executor's worker. Executor ids count
/// up from 0 and are never reused, so no executor has this one.
const NOT_A_WORKER: u64 = u64::MAX;

/// Whether the task being run on this thread completed in its last poll,
/// and if so whether it left a group guard in `FINISHED`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Completed {
    No,
    WithoutGuard,
    WithGuard,
}

/// Records that the task being polled on this thread completed, and keeps
/// its group guard until [`release_finished`], which whoever runs the task
/// calls once `Runnable::run` has stored (or dropped) the output. A
/// `spawn_blocking` job hands its guard over the same way as it ends, on
/// its pool thread (`executor.rs`).
///
/// A task in no group (the common case) has an empty guard: then only the
/// flag is set, which is what [`running_task_completed`] reads.
#[inline]
pub(crate) fn stash_finished(guard: MemberGuard) {
    if guard.is_empty() {
        // An empty guard's drop does nothing; forget it without the call.
        std::mem::forget(guard);
        COMPLETION.set(Completed::WithoutGuard);
    } else {
        stash_guard(guard);
    }
}

/// Once this thread's thread-local state is being torn down (a task run by
/// a `block_on` in a destructor at thread exit) there is nowhere to keep
/// the guard: it is released at once, before the task's output is stored.
#[cold]
fn stash_guard(guard: MemberGuard) {
    let mut guard = Some(guard);
    match FINISHED.try_with(|f| f.replace(guard.take())) {
        Ok(previous) => {
            COMPLETION.set(Completed::WithGuard);
            drop(previous);
        }
        Err(_) => {
            COMPLETION.set(Completed::WithoutGuard);
            drop(guard);
        }
    }
}

thread_local! {
    /// The executor a `spawn_blocking` job that just ended on this pool
    /// thread entered, kept entered until the pool has stored its value
    /// (and, if detached, dropped it): see [`keep_job_executor`].
    static JOB_EXECUTOR: RefCell<Option<ExecutorGuard>> = const { RefCell::new(None) };
}

/// Keeps a `spawn_blocking` job's executor entered on this pool thread
/// after the job returns or unwinds, until [`release_job_executor`], which
/// the pool calls once its task has stored the job's value: the value of a
/// detached job is dropped in between, and a task its destructor spawns
/// must go to the job's executor, as one the job spawned would.
pub(crate) fn keep_job_executor(guard: ExecutorGuard) {
    // `try_with`: on a thread whose thread-locals are being torn down, the
    // guard is dropped (the executor left) at once.
    let previous = JOB_EXECUTOR
        .try_with(|kept| kept.borrow_mut().replace(guard))
        .ok()
        .flatten();
    debug_assert!(previous.is_none(), "the pool releases after every job");
    drop(previous);
}

/// Leaves the executor [`keep_job_executor`] kept entered, if any.
pub(crate) fn release_job_executor() {
    let kept = JOB_EXECUTOR
        .try_with(|kept| kept.borrow_mut().take())
        .ok()
        .flatten();
    // Outside the borrow: leaving may drop the last reference to the
    // executor, whose drop runs tasks' destructors.
    drop(kept);
}

/// Releases the guard stashed by the task that just ran on this thread, if
/// it completed, and clears the completion flag. Called after every
/// `Runnable::run` by the worker, by the simple scheduler, and by the
/// blocking pool's threads.
#[inline]
pub(crate) fn release_finished() {
    if COMPLETION.replace(Completed::No) == Completed::WithGuard {
        drop(FINISHED.with(Cell::take));
    }
}

/// Takes out the guard of the task that completed in its last poll on this
/// thread, while it waits for [`release_finished`]: async-task drops a
/// detached task's output in that window, and the output's destructor
/// runs in the task's groups (see `task/mod.rs`), holding the guard
/// meanwhile, to hand it back with [`stash_finished`] once the output is
/// dropped. Held there rather than here, the guard is out of reach of a
/// `block_on` in the destructor: the tasks it runs on this thread release
/// what is stashed here after each run, which would let the task's groups
/// count it as finished while its output is still being dropped. `None`
/// outside that window, for a task in no group, or while this thread's
/// thread-local state is being torn down.
#[cold]
pub(crate) fn take_finished() -> Option<MemberGuard> {
    if COMPLETION.get() != Completed::WithGuard || !can_install_membership() {
        return None;
    }
    FINISHED.try_with(Cell::take).ok().flatten()
}

/// Whether the task being run on this thread has completed (its output is
/// being stored, and wakes now come from its completion).
#[inline]
pub(crate) fn running_task_completed() -> bool {
    COMPLETION.get() != Completed::No
}

/// Marks this thread as `worker`'s thread until [`exit_worker`].
pub(crate) fn enter_worker(worker: Rc<Worker>) {
    WORKER_OF.set(worker.shared().id());
    if !HAS_EXECUTOR.get() {
        SPAWN_WORKER.set(Some(worker.clone()));
    }
    WORKER.with(|w| *w.borrow_mut() = Some(worker));
}

/// Unmarks a worker thread, before it drains its queue.
pub(crate) fn exit_worker() {
    WORKER_OF.set(NOT_A_WORKER);
    drop(SPAWN_WORKER.take());
    let worker = WORKER.with(|w| w.borrow_mut().take());
    drop(worker);
}

/// Whether this thread is a worker of the executor with this id: one
/// destructor-free thread-local read, so the paths that spawn or wake from
/// other threads skip [`with_worker`].
#[inline]
pub(crate) fn is_worker_of(executor: u64) -> bool {
    WORKER_OF.get() == executor
}

/// Runs `f` with this thread's worker, if it is one.
#[inline]
pub(crate) fn with_worker<R>(f: impl FnOnce(Option<&Worker>) -> R) -> R {
    WORKER.with(|w| f(w.borrow().as_deref()))
}

/// This thread's worker, when it is one and spawns go to the worker's own
/// executor (no `block_on` of another executor is running on it).
#[inline(always)]
pub(crate) fn own_worker() -> Option<Rc<Worker>> {
    // `try_with`: a spawn from another thread-local's destructor may come
    // after this one's, while the thread exits (then: not a worker's spawn).
    SPAWN_WORKER
        .try_with(|w| {
            let worker = w.take()?;
            let copy = Rc::clone(&worker);
            // What `take` left: nothing, which needs no drop.
            std::mem::forget(w.replace(Some(worker)));
            Some(copy)
        })
        .ok()
        .flatten()
}

/// The worker of this thread if it belongs to `shared`; `None` once this
/// thread's thread-local state is being torn down (an executor dropped
/// from another thread-local's destructor).
pub(crate) fn worker_of(shared: &Shared) -> Option<Rc<Worker>> {
    WORKER
        .try_with(|w| {
            w.borrow()
                .as_ref()
                .filter(|w| std::ptr::eq(w.shared(), shared))
                .cloned()
        })
        .ok()
        .flatten()
}

/// Runs `f` with the executor this thread spawns onto: the one whose
/// `block_on` is running here, else its worker's; `None` elsewhere. The
/// worker is passed too when the executor is this thread's worker's, so the
/// spawn path need not look it up again.
#[inline]
pub(crate) fn with_executor<R>(f: impl FnOnce(Option<&Arc<Shared>>, Option<&Worker>) -> R) -> R {
    if HAS_EXECUTOR.get() {
        return with_block_on_executor(f);
    }
    // `try_with`: a spawn from another thread-local's destructor may come
    // after this one's, while the thread exits (then: no executor here).
    let worker = WORKER.try_with(|w| w.borrow().clone()).ok().flatten();
    match worker.as_deref() {
        Some(worker) => f(Some(worker.shared_arc()), Some(worker)),
        None => f(None, None),
    }
}

/// [`with_executor`] on a thread inside `block_on`: the `block_on`'s
/// executor, which is never this thread's worker's (a worker's `block_on`
/// of its own executor does not set it).
///
/// `f` runs after the cell's borrow ends: it runs user code (a spawn hook,
/// the destructor of a future spawned onto an executor shut down) that may
/// start a `block_on` here, which replaces the cell. The `Rc` clone keeps
/// the executor meanwhile, without an atomic operation per spawn.
fn with_block_on_executor<R>(f: impl FnOnce(Option<&Arc<Shared>>, Option<&Worker>) -> R) -> R {
    let shared = EXECUTOR.with(|e| e.borrow().clone());
    f(shared.as_deref(), None)
}

/// The executor of a `block_on` running on this thread, as `EXECUTOR`
/// holds it: the `Rc` (one allocation per `block_on`) is cloned where the
/// `Arc` would need an atomic increment per spawn.
#[allow(clippy::redundant_allocation)]
type BlockOnExecutor = Rc<Arc<Shared>>;

/// Makes `shared` this thread's executor until the guard drops. On a
/// worker of another executor, that worker is set aside meanwhile (see
/// `WORKER_OF`). On a worker of `shared` itself (set aside by a
/// `block_on` of another executor that this one runs inside), it is the
/// thread's worker again.
///
/// Once this thread's thread-local state is being torn down (an executor
/// kept in another thread-local, dropped by its destructor at thread
/// exit), there is no state to change: the guard does nothing, and a task
/// spawned here meanwhile goes where [`with_executor`] sends it then.
pub(crate) fn enter_executor(shared: Arc<Shared>) -> ExecutorGuard {
    if !can_enter_executor() {
        return ExecutorGuard { _entered: None };
    }
    let saved = Saved {
        has_executor: HAS_EXECUTOR.get(),
        worker_of: WORKER_OF.get(),
        spawn_worker: SPAWN_WORKER.take(),
    };
    let replaced = match worker_of(&shared) {
        Some(worker) => {
            WORKER_OF.set(shared.id());
            SPAWN_WORKER.set(Some(worker));
            HAS_EXECUTOR.set(false);
            None
        }
        None => {
            WORKER_OF.set(NOT_A_WORKER);
            HAS_EXECUTOR.set(true);
            Some(EXECUTOR.with(|e| e.borrow_mut().replace(Rc::new(shared))))
        }
    };
    ExecutorGuard {
        _entered: Some(Entered { replaced, saved }),
    }
}

/// Whether [`enter_executor`] can change this thread's state: not once
/// the thread-locals it uses are being torn down.
fn can_enter_executor() -> bool {
    EXECUTOR.try_with(|_| ()).is_ok()
        && SPAWN_WORKER.try_with(|_| ()).is_ok()
        && WORKER.try_with(|_| ()).is_ok()
}

/// What [`enter_executor`] changed and its guard puts back.
struct Saved {
    has_executor: bool,
    worker_of: u64,
    spawn_worker: Option<Rc<Worker>>,
}

/// Restores the thread's executor and worker as they were before
/// [`enter_executor`] (if it entered: see there).
pub(crate) struct ExecutorGuard {
    /// Dropped with the guard; `None` if it did not enter.
    _entered: Option<Entered>,
}

/// What an [`ExecutorGuard`] that entered puts back.
struct Entered {
    /// The `EXECUTOR` replaced, if it was.
    replaced: Option<Option<BlockOnExecutor>>,
    saved: Saved,
}

impl Drop for Entered {
    fn drop(&mut self) {
        HAS_EXECUTOR.set(self.saved.has_executor);
        WORKER_OF.set(self.saved.worker_of);
        drop(SPAWN_WORKER.replace(self.saved.spawn_worker.take()));
        if let Some(prev) = self.replaced.take() {
            // The executor left is dropped after the borrow: if it is the
            // last reference, its drop may run tasks' destructors.
            let left = EXECUTOR.with(|e| std::mem::replace(&mut *e.borrow_mut(), prev));
            drop(left);
        }
    }
}

/// A clone of the current membership.
#[inline]
pub(crate) fn membership() -> Option<MembershipArc> {
    match IN_SCOPE.get() {
        InScope::None => None,
        InScope::Installed => MEMBERSHIP.with(|m| {
            let current = m.take();
            let copy = current.clone();
            m.set(current);
            copy
        }),
        InScope::Cached => cached_membership(),
    }
}

/// The value of `CACHE`: the cached membership. Torn down with this
/// thread's thread-local state, it clears `CACHE_ADDR`, so that no task
/// enters a cache that is gone (by a `block_on` in a destructor at thread
/// exit, say); such a task lends its membership out instead, or is polled
/// as it is once that cannot be done either (`task/mod.rs`).
#[cfg(not(loom))]
struct Cache(Cell<Option<std::sync::Weak<Membership>>>);

#[cfg(not(loom))]
impl Drop for Cache {
    fn drop(&mut self) {
        // Destructor-free, so never torn down.
        CACHE_ADDR.set(std::ptr::null());
    }
}

/// A strong reference to the cached membership, which the task being
/// polled holds alive. `None` only if `CACHE` is torn down meanwhile, a
/// case `CACHE_ADDR` rules out (see [`Cache`]).
#[cfg(not(loom))]
#[cold]
fn cached_membership() -> Option<MembershipArc> {
    CACHE
        .try_with(|c| {
            let weak = c.0.take();
            let strong = weak.as_ref().and_then(std::sync::Weak::upgrade);
            c.0.set(weak);
            debug_assert!(strong.is_some(), "the polled task holds it");
            strong
        })
        .ok()
        .flatten()
}

#[cfg(loom)]
fn cached_membership() -> Option<MembershipArc> {
    unreachable!("nothing is cached under loom")
}

/// Installs `membership` and returns the previous current one, as a strong
/// reference to install again afterwards (a cached one is upgraded: such a
/// restore, in a poll nested in a cached one, is undone by
/// [`leave_cached`]).
#[inline]
pub(crate) fn replace_membership(membership: Option<MembershipArc>) -> Option<MembershipArc> {
    let scope = IN_SCOPE.get();
    if membership.is_none() && scope == InScope::None {
        return None;
    }
    IN_SCOPE.set(if membership.is_some() {
        InScope::Installed
    } else {
        InScope::None
    });
    let previous = MEMBERSHIP.with(|m| m.replace(membership));
    match scope {
        InScope::Cached => cached_membership(),
        InScope::Installed | InScope::None => previous,
    }
}

/// Makes `membership` current for the poll of a task that holds it, on a
/// thread where none is current, until [`leave_cached`], if it is cached
/// or now worth caching; `false` leaves the thread as it was, for the
/// caller to lend the membership out as in a nested poll.
///
/// When it is the cached one (the last task polled here was of the same
/// membership, as when one scope's tasks run one after another on a
/// worker) this only sets the flag. A new `Weak` replaces the cache only
/// when the previous poll here declined the same membership: tasks of
/// different scopes taking turns on a worker would otherwise pay for a
/// `Weak` (two RMWs on a count other threads share) every poll, where
/// lending the membership out costs none.
#[inline]
pub(crate) fn enter_cached(membership: &MembershipArc) -> bool {
    debug_assert!(!has_membership());
    if cfg!(loom) {
        return false;
    }
    let addr = crate::sync::Arc::as_ptr(membership);
    if CACHE_ADDR.get() != addr {
        if LAST_UNCACHED.get() != addr {
            LAST_UNCACHED.set(addr);
            return false;
        }
        if !cache_membership(membership) {
            return false;
        }
    }
    IN_SCOPE.set(InScope::Cached);
    true
}

/// Makes `membership` the cached one; `false` (nothing cached) once this
/// thread's thread-local state is being torn down.
#[cfg(not(loom))]
#[cold]
fn cache_membership(membership: &MembershipArc) -> bool {
    let weak = crate::sync::Arc::downgrade(membership);
    match CACHE.try_with(|c| c.0.replace(Some(weak))) {
        Ok(previous) => {
            CACHE_ADDR.set(crate::sync::Arc::as_ptr(membership));
            drop(previous);
            true
        }
        Err(_) => false,
    }
}

#[cfg(loom)]
fn cache_membership(_: &MembershipArc) -> bool {
    false
}

/// Ends [`enter_cached`]. The cache stays for the next task. Whatever ran
/// inside the poll restored what it replaced, which for a poll nested in
/// this one is a strong reference: dropped here.
#[inline]
pub(crate) fn leave_cached() {
    if IN_SCOPE.replace(InScope::None) == InScope::Installed {
        drop_restored();
    }
}

#[cold]
fn drop_restored() {
    drop(MEMBERSHIP.with(Cell::take));
}

/// Whether a membership can be installed on this thread: not once its
/// thread-local state is being torn down (a task dropped from another
/// thread-local's destructor).
#[cold]
pub(crate) fn can_install_membership() -> bool {
    MEMBERSHIP.try_with(|_| ()).is_ok()
}

/// Whether a membership is installed on this thread.
#[inline]
pub(crate) fn has_membership() -> bool {
    IN_SCOPE.get() != InScope::None
}
