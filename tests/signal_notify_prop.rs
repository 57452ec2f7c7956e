//! Property test of `Notify` against a model: random sequences of waits
//! made, polled (with the same or a new waker), dropped, and of
//! `notify_one` / `notify_all`, on one thread with every wait polled by
//! hand. After every step each wait's poll result, every waker's wake count
//! and, at the end, the stored permit are what the documented rules say:
//!
//! * `notify_one` marks the longest-registered waiter and wakes it, or
//!   stores the permit (at most one) when nobody is registered;
//! * a first poll completes at once on a `notify_all` made since the wait
//!   was created, else on a stored permit (consuming it), else registers;
//! * `notify_all` marks and wakes every registered waiter, completes every
//!   wait created before it even if not polled yet, and stores no permit;
//! * a wait dropped after a `notify_one` chose it passes the notification
//!   to the next registered waiter, or back to the permit; one chosen by
//!   `notify_all`, or not chosen, passes nothing on; a dropped wait's waker
//!   is never woken;
//! * a registered wait polled with a new waker is woken through that one;
//! * `notified_until` with a deadline already passed reports the
//!   notification if there is one by the time it is polled, else
//!   `Elapsed`, and stays registered until dropped (so a notification that
//!   reaches it then is passed on, not lost).

mod support;

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::Poll;
use std::time::Instant;

use fastexec::signal::{Notified, Notify};
use fastexec::time::Timeout;
use proptest::prelude::*;
use support::Probe;

/// How many waits may exist at once.
const SLOTS: usize = 5;

#[derive(Debug, Clone, Copy)]
enum Op {
    /// Makes a wait in the slot (dropping the one there first); timed if
    /// the flag is set.
    Make(usize, bool),
    /// Polls the slot's wait, with a new waker if the flag is set.
    Poll(usize, bool),
    Drop(usize),
    NotifyOne,
    NotifyAll,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..SLOTS, proptest::bool::weighted(0.3)).prop_map(|(s, t)| Op::Make(s, t)),
        4 => (0..SLOTS, proptest::bool::weighted(0.2)).prop_map(|(s, w)| Op::Poll(s, w)),
        2 => (0..SLOTS).prop_map(Op::Drop),
        3 => Just(Op::NotifyOne),
        1 => Just(Op::NotifyAll),
    ]
}

/// How a registered wait was notified, as the model tracks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    One,
    All,
}

/// A wait as the model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Made, not polled: holds the `notify_all` count it saw.
    Unpolled { generation: u64 },
    /// Polled and pending: registered; `Some` once notified.
    Registered(Option<Mark>),
    /// Completed (never polled again).
    Done,
}

#[derive(Debug)]
struct ModelWait {
    phase: Phase,
    /// The probe whose waker the wait holds (the last it was polled with).
    probe: usize,
}

/// The documented behaviour of one `Notify`.
#[derive(Debug, Default)]
struct Model {
    permit: bool,
    generation: u64,
    /// Registered, not yet notified waits, oldest first.
    queue: VecDeque<usize>,
    waits: Vec<Option<ModelWait>>,
    /// Wakes per probe.
    wakes: Vec<usize>,
}

impl Model {
    fn new() -> Self {
        Self {
            waits: (0..SLOTS).map(|_| None).collect(),
            ..Self::default()
        }
    }

    fn new_probe(&mut self) -> usize {
        self.wakes.push(0);
        self.wakes.len() - 1
    }

    fn make(&mut self, slot: usize) {
        self.drop_wait(slot);
        let probe = self.new_probe();
        self.waits[slot] = Some(ModelWait {
            phase: Phase::Unpolled {
                generation: self.generation,
            },
            probe,
        });
    }

    /// Whether the poll completes the wait.
    fn poll(&mut self, slot: usize, new_waker: bool) -> bool {
        let probe = if new_waker {
            self.new_probe()
        } else {
            self.waits[slot].as_ref().unwrap().probe
        };
        let wait = self.waits[slot].as_mut().unwrap();
        wait.probe = probe;
        let done = match wait.phase {
            Phase::Unpolled { generation } if generation != self.generation => true,
            Phase::Unpolled { .. } if self.permit => {
                self.permit = false;
                true
            }
            Phase::Unpolled { .. } => {
                wait.phase = Phase::Registered(None);
                self.queue.push_back(slot);
                false
            }
            Phase::Registered(mark) => mark.is_some(),
            Phase::Done => unreachable!("the test never polls a completed wait"),
        };
        if done {
            wait.phase = Phase::Done;
        }
        done
    }

    fn notify_one(&mut self) {
        match self.queue.pop_front() {
            Some(slot) => self.mark(slot, Mark::One),
            None => self.permit = true,
        }
    }

    fn notify_all(&mut self) {
        self.generation += 1;
        while let Some(slot) = self.queue.pop_front() {
            self.mark(slot, Mark::All);
        }
    }

    fn mark(&mut self, slot: usize, mark: Mark) {
        let wait = self.waits[slot].as_mut().unwrap();
        wait.phase = Phase::Registered(Some(mark));
        self.wakes[wait.probe] += 1;
    }

    fn drop_wait(&mut self, slot: usize) {
        let Some(wait) = self.waits[slot].take() else {
            return;
        };
        match wait.phase {
            Phase::Registered(None) => self.queue.retain(|&s| s != slot),
            Phase::Registered(Some(Mark::One)) => self.notify_one(),
            Phase::Registered(Some(Mark::All)) | Phase::Unpolled { .. } | Phase::Done => {}
        }
    }

    fn is_done(&self, slot: usize) -> bool {
        matches!(&self.waits[slot], Some(w) if w.phase == Phase::Done)
    }
}

/// A real wait: plain, or `notified_until` a deadline already passed.
enum Wait<'a> {
    Plain(Notified<'a>),
    Timed(Pin<Box<Timeout<Notified<'a>>>>),
}

impl Wait<'_> {
    /// Polls once; true if the notification was reported.
    fn poll(&mut self, probe: &Probe) -> Poll<bool> {
        match self {
            Wait::Plain(notified) => probe.poll(notified).map(|()| true),
            // A passed deadline: ready at every poll, the notification
            // checked first.
            Wait::Timed(timeout) => probe.poll(timeout).map(|result| result.is_ok()),
        }
    }
}

/// Runs `ops` on a real `Notify` and on the model, comparing after every
/// step; returns the first difference.
fn check(ops: &[Op]) -> Result<(), TestCaseError> {
    let notify = Notify::new();
    let mut model = Model::new();
    let mut probes: Vec<Probe> = Vec::new();
    let mut waits: Vec<Option<(Wait<'_>, usize)>> = (0..SLOTS).map(|_| None).collect();
    for (step, &op) in ops.iter().enumerate() {
        match op {
            Op::Make(slot, timed) => {
                waits[slot] = None;
                model.make(slot);
                probes.push(Probe::new());
                let wait = if timed {
                    Wait::Timed(Box::pin(notify.notified_until(Instant::now())))
                } else {
                    Wait::Plain(notify.notified())
                };
                waits[slot] = Some((wait, probes.len() - 1));
            }
            Op::Poll(slot, new_waker) => {
                if waits[slot].is_none() || model.is_done(slot) {
                    continue;
                }
                let timed = matches!(waits[slot], Some((Wait::Timed(_), _)));
                let expected_done = model.poll(slot, new_waker);
                if new_waker {
                    probes.push(Probe::new());
                    waits[slot].as_mut().unwrap().1 = probes.len() - 1;
                }
                let (wait, probe) = waits[slot].as_mut().unwrap();
                let polled = wait.poll(&probes[*probe]);
                let expected = match (timed, expected_done) {
                    (_, true) => Poll::Ready(true),
                    (true, false) => Poll::Ready(false),
                    (false, false) => Poll::Pending,
                };
                prop_assert_eq!(polled, expected, "step {} {:?}", step, op);
            }
            Op::Drop(slot) => {
                waits[slot] = None;
                model.drop_wait(slot);
            }
            Op::NotifyOne => {
                notify.notify_one();
                model.notify_one();
            }
            Op::NotifyAll => {
                notify.notify_all();
                model.notify_all();
            }
        }
        let wakes: Vec<usize> = probes.iter().map(Probe::wakes).collect();
        prop_assert_eq!(&wakes, &model.wakes, "wakes after step {} {:?}", step, op);
    }
    for (slot, wait) in waits.iter_mut().enumerate() {
        *wait = None;
        model.drop_wait(slot);
    }
    let wakes: Vec<usize> = probes.iter().map(Probe::wakes).collect();
    prop_assert_eq!(&wakes, &model.wakes, "wakes after dropping every wait");
    for (i, probe) in probes.iter().enumerate() {
        prop_assert_eq!(
            probe.wakers_held(),
            0,
            "probe {}'s waker outlived its wait",
            i
        );
    }
    let stored = Probe::new().poll(&mut notify.notified()).is_ready();
    prop_assert_eq!(stored, model.permit, "the stored permit at the end");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn notify_follows_its_documented_rules(ops in proptest::collection::vec(op(), 0..60)) {
        check(&ops)?;
    }
}
