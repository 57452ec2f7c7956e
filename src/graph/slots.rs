//! A runner's two lists of attempts, kept in slots that are written field
//! by field: [`Starts`], the attempts begun under the lock and not yet
//! polled, and [`Records`], the attempts polled to their end and not yet
//! recorded.
//!
//! # Why slots and not vectors pushed to
//!
//! `Vec::push` may grow, and growing may panic; so the compiler builds the
//! whole value in a temporary first (for the unwinding path to drop), with
//! one store per field, and then copies it into the vector 16 bytes at a
//! time. Each of those loads spans stores made a moment before, still on
//! their way to the cache; the CPU cannot serve it from them (store-to-load
//! forwarding fails) and it waits until every older store has landed, and
//! a runner's older stores include writes to nodes that missed the cache.
//! A runner paid that twice per task: once when an attempt began, once
//! when it ended. A slot is written in place, after any growing, and no
//! field is read back before the batch moves on to its next step.
//! (Measured: BENCHMARKS.md, "Attempts written in place".)
//!
//! A slot past the list's end holds no body and no output: taking an
//! attempt out leaves its slot empty, so nothing a task captured lives on
//! in a slot after its attempt was recorded.

use std::mem;
use std::sync::Arc;
use std::time::Duration;

use super::core::AttemptStart;
use super::inputs::{Inputs, Outputs};
use super::task::Body;
use super::TaskError;

/// The attempts a runner began under the lock and has not polled yet, in
/// the order begun: slots `next..end`.
pub(crate) struct Starts<T> {
    slots: Vec<StartSlot<T>>,
    next: usize,
    end: usize,
}

/// An [`AttemptStart`] in a slot; `body` is `None` in a slot not in use,
/// and `outputs` a unit placeholder.
pub(crate) struct StartSlot<T> {
    pub(crate) node: u32,
    pub(crate) attempt: u32,
    pub(crate) outputs: Outputs<T>,
    pub(crate) body: Option<Body<T>>,
    pub(crate) timeout: Option<Duration>,
}

impl<T> StartSlot<T> {
    pub(crate) fn empty() -> Self {
        StartSlot {
            node: 0,
            attempt: 0,
            outputs: Outputs::Unit(0),
            body: None,
            timeout: None,
        }
    }

    /// The attempt it holds, leaving it empty.
    #[inline(always)]
    pub(crate) fn take(&mut self) -> AttemptStart<T> {
        AttemptStart {
            node: self.node,
            attempt: self.attempt,
            outputs: mem::replace(&mut self.outputs, Outputs::Unit(0)),
            body: self.body.take().expect("a slot in use holds its body"),
            timeout: self.timeout,
        }
    }
}

impl<T> Starts<T> {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Starts {
            slots: std::iter::repeat_with(StartSlot::empty).take(n).collect(),
            next: 0,
            end: 0,
        }
    }

    /// `begun` in slots, at least `capacity` of them.
    pub(crate) fn from_vec(begun: Vec<AttemptStart<T>>, capacity: usize) -> Self {
        let mut starts = Self::with_capacity(capacity.max(begun.len()));
        for start in begun {
            starts.push(start);
        }
        starts
    }

    /// How many attempts are begun and not yet polled.
    pub(crate) fn len(&self) -> usize {
        self.end - self.next
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.next == self.end
    }

    /// Fills the slot after the last begun with `fill` and counts it as
    /// begun once `fill` returned.
    #[inline(always)]
    pub(crate) fn push_with(&mut self, fill: impl FnOnce(&mut StartSlot<T>)) {
        if self.next == self.end {
            // Empty: start again from the first slot, so that the slots
            // in use stay few and warm.
            self.next = 0;
            self.end = 0;
        }
        if self.end == self.slots.len() {
            self.grow();
        }
        let slot = &mut self.slots[self.end];
        // So that filling it drops nothing of the user's (under the lock).
        debug_assert!(slot.body.is_none() && matches!(slot.outputs, Outputs::Unit(_)));
        fill(slot);
        self.end += 1;
    }

    /// Keeps `start`, after the attempts begun before it.
    pub(crate) fn push(&mut self, start: AttemptStart<T>) {
        let AttemptStart {
            node,
            attempt,
            outputs,
            body,
            timeout,
        } = start;
        self.push_with(|slot| {
            slot.node = node;
            slot.attempt = attempt;
            slot.outputs = outputs;
            slot.body = Some(body);
            slot.timeout = timeout;
        });
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.slots.push(StartSlot::empty());
    }

    /// Takes the first attempt begun and not yet polled, its outputs
    /// moved into `inputs` (made its inputs: see [`Inputs::refill`]).
    /// The outputs the inputs had are dropped here.
    #[inline(always)]
    pub(crate) fn pop_front_into(&mut self, inputs: &mut Inputs<T>) -> Option<Popped<T>> {
        if self.next == self.end {
            return None;
        }
        let slot = &mut self.slots[self.next];
        self.next += 1;
        inputs.refill(slot.node, slot.attempt, &mut slot.outputs);
        if !matches!(slot.outputs, Outputs::Unit(_)) {
            slot.outputs = Outputs::Unit(0);
        }
        Some(Popped {
            node: slot.node,
            body: slot.body.take().expect("a slot in use holds its body"),
            timeout: slot.timeout,
        })
    }

    /// Takes every attempt not yet polled, in order.
    pub(crate) fn take_all(&mut self) -> Vec<AttemptStart<T>> {
        let (next, end) = (mem::take(&mut self.next), mem::take(&mut self.end));
        self.slots[next..end]
            .iter_mut()
            .map(StartSlot::take)
            .collect()
    }
}

/// An attempt taken out of [`Starts`] to be polled, its outputs already in
/// the runner's inputs (see [`Starts::pop_front_into`]).
pub(crate) struct Popped<T> {
    pub(crate) node: u32,
    pub(crate) body: Body<T>,
    pub(crate) timeout: Option<Duration>,
}

/// The attempts a runner polled to their end and has not recorded yet:
/// slots `..len`.
pub(crate) struct Records<T> {
    slots: Vec<Ran<T>>,
    len: usize,
}

/// An attempt a runner polled to its end, in a slot: when it began and
/// ended, and the body to give back; `body` and `result` are `None` in a
/// slot not in use.
struct Ran<T> {
    node: u32,
    body: Option<Body<T>>,
    /// The error boxed: failures are rare.
    result: Option<Result<Option<Arc<T>>, Box<TaskError>>>,
    /// Ticks of the batch's timeline, turned into instants when the batch
    /// is recorded.
    began: u64,
    /// The reading after it, taken before the next attempt (or the mark
    /// of the next lock acquisition, for the last of a batch).
    ended: Option<u64>,
}

impl<T> Ran<T> {
    fn empty() -> Self {
        Ran {
            node: 0,
            body: None,
            result: None,
            began: 0,
            ended: None,
        }
    }
}

/// A record taken out of [`Records`], to be recorded in the core.
pub(crate) struct Recorded<T> {
    pub(crate) node: u32,
    pub(crate) body: Body<T>,
    pub(crate) result: Result<Option<Arc<T>>, Box<TaskError>>,
    /// Ticks, as in the slot.
    pub(crate) began: u64,
    pub(crate) ended: Option<u64>,
}

impl<T> Records<T> {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Records {
            slots: std::iter::repeat_with(Ran::empty).take(n).collect(),
            len: 0,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keeps the record of an attempt polled to its end, begun and ended
    /// at those tick readings.
    #[inline(always)]
    pub(crate) fn push(
        &mut self,
        node: u32,
        body: Body<T>,
        result: Result<Option<Arc<T>>, Box<TaskError>>,
        (began, ended): (u64, Option<u64>),
    ) {
        if self.len == self.slots.len() {
            self.grow();
        }
        let slot = &mut self.slots[self.len];
        slot.node = node;
        slot.body = Some(body);
        slot.result = Some(result);
        slot.began = began;
        slot.ended = ended;
        self.len += 1;
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.slots.push(Ran::empty());
    }

    /// The end reading of the last attempt kept, if any was.
    pub(crate) fn last_ended(&mut self) -> Option<&mut Option<u64>> {
        let last = self.len.checked_sub(1)?;
        Some(&mut self.slots[last].ended)
    }

    /// Takes the records kept, in order, leaving none. (Those the iterator
    /// is dropped before reaching stay in their slots until overwritten or
    /// dropped with the list.)
    pub(crate) fn take_all(&mut self) -> impl Iterator<Item = Recorded<T>> + '_ {
        let len = mem::take(&mut self.len);
        self.slots[..len].iter_mut().map(|slot| Recorded {
            node: slot.node,
            body: slot.body.take().expect("a record kept holds its body"),
            result: slot.result.take().expect("a record kept holds its result"),
            began: slot.began,
            ended: slot.ended,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Task;
    use std::time::Duration;

    fn body(n: u32) -> Body<u32> {
        Task::sync("t", move |_| Ok(n)).body
    }

    #[test]
    fn starts_come_out_in_the_order_begun_and_leave_their_slots_empty() {
        let mut starts = Starts::<u32>::with_capacity(1);
        for node in 0..3 {
            starts.push_with(|slot| {
                slot.node = node;
                slot.attempt = 1;
                slot.body = Some(body(node));
            });
        }
        assert_eq!(starts.len(), 3);
        let begun: Vec<u32> = starts.take_all().iter().map(|s| s.node).collect();
        assert_eq!(begun, [0, 1, 2]);
        assert!(starts.is_empty());
        assert!(starts.slots.iter().all(|slot| slot.body.is_none()));
        // Emptied, the next one begun reuses the first slot.
        starts.push(AttemptStart {
            node: 7,
            attempt: 2,
            outputs: Outputs::Unit(0),
            body: body(7),
            timeout: None,
        });
        assert_eq!((starts.next, starts.end), (0, 1));
        let again: Vec<_> = starts
            .take_all()
            .iter()
            .map(|s| (s.node, s.attempt))
            .collect();
        assert_eq!(again, [(7, 2)]);
    }

    #[test]
    fn records_come_out_in_order_with_their_readings_and_leave_no_body_behind() {
        let mut records = Records::<u32>::with_capacity(1);
        assert!(records.last_ended().is_none());
        records.push(3, body(3), Ok(Some(Arc::new(30))), (10, None));
        records.push(
            4,
            body(4),
            Err(Box::new(TaskError::TimedOut(Duration::ZERO))),
            (11, None),
        );
        *records.last_ended().expect("one kept") = Some(12);
        let taken: Vec<_> = records
            .take_all()
            .map(|r| (r.node, r.result.is_ok(), r.began, r.ended))
            .collect();
        assert_eq!(taken, [(3, true, 10, None), (4, false, 11, Some(12))]);
        assert!(records.is_empty());
        assert!(records
            .slots
            .iter()
            .all(|s| s.body.is_none() && s.result.is_none()));
    }
}
