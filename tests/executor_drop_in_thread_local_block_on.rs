//! An executor kept in a `thread_local!` and dropped by its destructor at
//! thread exit, after the crate's own thread-locals were torn down, drops
//! its parked tasks' futures there; a destructor among them that runs a
//! clean-up `block_on` (here of another executor) must get its value, not
//! panic on a destroyed thread-local (which aborts the process: a panic
//! while a thread-local's destructor runs).

mod support;

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use fastexec::{Executor, JoinHandle, Scheduler, TaskGroup};
use support::{within, Gate};

/// Runs `other.block_on` when dropped and records its value.
struct CleanUp {
    other: Arc<Executor>,
    got: Arc<AtomicUsize>,
}

impl Drop for CleanUp {
    fn drop(&mut self) {
        let value = self
            .other
            .block_on(async { fastexec::spawn(async { 42 }).await.unwrap() });
        self.got.store(value, Ordering::SeqCst);
    }
}

fn clean_up_block_on_at_thread_exit(scheduler: Scheduler, other: Scheduler) {
    let got = Arc::new(AtomicUsize::new(0));
    let other = Arc::new(
        Executor::builder()
            .threads(1)
            .scheduler(other)
            .build()
            .unwrap(),
    );
    let clean_up = CleanUp {
        other: Arc::clone(&other),
        got: Arc::clone(&got),
    };
    support::drop_executor_at_thread_exit(scheduler, clean_up, |executor: &Executor| {
        let answer = executor.block_on(async { fastexec::spawn(async { 1 }).await.unwrap() });
        assert_eq!(answer, 1);
    });
    assert_eq!(got.load(Ordering::SeqCst), 42, "the clean-up block_on ran");
}

#[test]
fn work_stealing_clean_up_in_work_stealing() {
    within(60, || {
        clean_up_block_on_at_thread_exit(Scheduler::WorkStealing, Scheduler::WorkStealing)
    });
}

#[test]
fn simple_clean_up_in_simple() {
    within(60, || {
        clean_up_block_on_at_thread_exit(Scheduler::Simple, Scheduler::Simple)
    });
}

/// Opens `gate` and awaits `member` in `other.block_on` when dropped, and
/// records the outcome: the value, or 0 if the member failed.
struct AwaitMember {
    other: Arc<Executor>,
    gate: Gate,
    member: Option<JoinHandle<usize>>,
    got: Arc<AtomicUsize>,
}

impl Drop for AwaitMember {
    fn drop(&mut self) {
        let (gate, member) = (self.gate.clone(), self.member.take().unwrap());
        let value = self.other.block_on(async move {
            gate.open();
            member.await.unwrap_or(0)
        });
        self.got.store(value, Ordering::SeqCst);
    }
}

/// As [`clean_up_block_on_at_thread_exit`] under the simple scheduler,
/// the clean-up's `block_on` (its scheduler's owner, so it runs that
/// executor's ready tasks on this thread) running a task in a
/// [`TaskGroup`], spawned earlier and woken by the clean-up: its poll
/// lends its membership out in thread-local state, and its next one caches
/// it there (the thread cached another before).
#[test]
fn simple_clean_up_running_a_group_member_here() {
    within(60, || {
        let got = Arc::new(AtomicUsize::new(0));
        let other = Arc::new(support::simple_executor(1));
        let gate = Gate::new();
        let opened = gate.clone();
        // Spawned from a task of `other` (in no group, outside any
        // `block_on`, which would wait for it), so onto `other`, in the
        // group alone.
        let spawner = other.spawn(async move {
            let member = TaskGroup::new().spawn(async move {
                opened.wait().await;
                // Polled once more there: its membership is then worth
                // caching.
                fastexec::yield_now().await;
                42
            });
            // The handle is the spawner's output, not awaited in it.
            Some(member)
        });
        let member = futures::executor::block_on(spawner).unwrap().unwrap();
        let clean_up = AwaitMember {
            other: Arc::clone(&other),
            gate,
            member: Some(member),
            got: Arc::clone(&got),
        };
        support::drop_executor_at_thread_exit(
            Scheduler::Simple,
            clean_up,
            |executor: &Executor| {
                let answer = executor.block_on(async {
                    // Polled twice here: the thread caches a membership.
                    let member = TaskGroup::new().spawn(async {
                        fastexec::yield_now().await;
                        1
                    });
                    member.await.unwrap()
                });
                assert_eq!(answer, 1);
            },
        );
        assert_eq!(got.load(Ordering::SeqCst), 42, "the group member ran");
    });
}

thread_local! {
    static CLEAN_UP: RefCell<Option<AwaitMember>> = const { RefCell::new(None) };
}

/// As [`simple_clean_up_running_a_group_member_here`], the member polled
/// on this thread twice before (so its membership is the thread's cached
/// one) and spawning a task when polled at thread exit, where it reads the
/// current membership; the clean-up kept in a thread-local itself.
#[test]
fn simple_clean_up_running_a_cached_group_member_here() {
    within(60, || {
        let got = Arc::new(AtomicUsize::new(0));
        let other = Arc::new(support::simple_executor(1));
        let gates: [Gate; 5] = std::array::from_fn(|_| Gate::new());
        let [first, polled_once, second, polled_twice, last] = gates.clone();
        let spawner = other.spawn(async move {
            let member = TaskGroup::new().spawn(async move {
                first.wait().await;
                polled_once.open();
                second.wait().await;
                polled_twice.open();
                last.wait().await;
                fastexec::spawn(async { 42 }).await.unwrap()
            });
            // The handle is the spawner's output, not awaited in it.
            Some(member)
        });
        let member = futures::executor::block_on(spawner).unwrap().unwrap();
        let on_thread = Arc::clone(&other);
        let recorded = Arc::clone(&got);
        thread::spawn(move || {
            CLEAN_UP.with(|clean_up| assert!(clean_up.borrow().is_none()));
            let [first, polled_once, second, polled_twice, last] = gates;
            // This thread owns the scheduler meanwhile: the member's next
            // two polls run here, the second caching its membership.
            on_thread.block_on(async {
                first.open();
                polled_once.wait().await;
                second.open();
                polled_twice.wait().await;
            });
            let clean_up = AwaitMember {
                other: on_thread,
                gate: last,
                member: Some(member),
                got: recorded,
            };
            CLEAN_UP.with(|slot| *slot.borrow_mut() = Some(clean_up));
        })
        .join()
        .expect("the thread exited cleanly");
        assert_eq!(got.load(Ordering::SeqCst), 42, "the group member ran");
    });
}
