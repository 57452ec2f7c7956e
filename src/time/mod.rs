//! Timers.
pub(crate) mod queue;
