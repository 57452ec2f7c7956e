//! `spawn` from a thread-local's destructor, while the thread exits: the
//! spawn path's own thread-locals may already be gone then, and reading one
//! with `LocalKey::with` would panic inside a destructor (an abort). The
//! task goes to the global executor, as from any thread outside one.

mod support;

use std::cell::RefCell;
use std::sync::mpsc;

/// Spawns a task that sends on `tx` when dropped.
struct SpawnsOnDrop(mpsc::Sender<u32>);

impl Drop for SpawnsOnDrop {
    fn drop(&mut self) {
        let tx = self.0.clone();
        fastexec::spawn(async move {
            let _ = tx.send(7);
        })
        .detach();
    }
}

thread_local! {
    static LATE: RefCell<Option<SpawnsOnDrop>> = const { RefCell::new(None) };
}

#[test]
fn a_spawn_from_a_thread_local_destructor_runs() {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        // `LATE` first, then a spawn: thread-locals are destroyed in the
        // reverse order of their first use, so the spawn path's are gone
        // by the time `LATE`'s destructor spawns.
        let warm = tx.clone();
        LATE.with(|late| *late.borrow_mut() = Some(SpawnsOnDrop(tx)));
        fastexec::spawn(async move {
            let _ = warm.send(1);
        })
        .detach();
    });
    thread.join().expect("the thread exited cleanly");
    let mut got: Vec<u32> = (0..2)
        .map(|_| rx.recv_timeout(support::TIMEOUT).expect("both tasks ran"))
        .collect();
    got.sort_unstable();
    assert_eq!(got, [1, 7]);
}
