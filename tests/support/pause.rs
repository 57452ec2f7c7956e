//! What a task of a property test waits for before it goes on: nothing, a
//! few yields, or a short timer. Mixing the three makes the executor meet
//! a task queued, parked on a timer, or running when something else
//! (a cancel, an abort, a drop) happens to it.

use std::time::Duration;

use proptest::prelude::*;

/// A task's wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pause {
    None,
    Yields(u8),
    /// A timer of this many microseconds: the task parks and a timer wakes it.
    Sleep(u16),
}

/// Mostly no wait, often yields, sometimes a timer of under 200 µs.
pub fn pause() -> impl Strategy<Value = Pause> {
    prop_oneof![
        3 => Just(Pause::None),
        2 => (1u8..4).prop_map(Pause::Yields),
        1 => (0u16..200).prop_map(Pause::Sleep),
    ]
}

/// Waits as `pause` says.
pub async fn wait_out(pause: Pause) {
    match pause {
        Pause::None => {}
        Pause::Yields(n) => {
            for _ in 0..n {
                fastexec::yield_now().await;
            }
        }
        Pause::Sleep(micros) => {
            fastexec::time::sleep(Duration::from_micros(micros.into())).await;
        }
    }
}
