//! Helpers shared by the graph tests.
#![allow(dead_code)]

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Runs `f` on its own thread and returns its result, failing the test if it
/// takes longer than `secs`. Only a guard against hangs, never a way to wait.
pub fn within<R: Send + 'static>(secs: u64, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    let worker = thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hung for more than {secs} s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the worker always sends before finishing"),
        },
    }
}

/// A latch a test opens once; any number of tasks can await it, any number
/// of times (task bodies are re-runnable, so they must not consume it).
#[derive(Clone)]
pub struct Gate {
    rx: futures::future::Shared<futures::channel::oneshot::Receiver<()>>,
    tx: std::sync::Arc<std::sync::Mutex<Option<futures::channel::oneshot::Sender<()>>>>,
}

impl Gate {
    pub fn new() -> Self {
        use futures::FutureExt;
        let (tx, rx) = futures::channel::oneshot::channel();
        Gate {
            rx: rx.shared(),
            tx: std::sync::Arc::new(std::sync::Mutex::new(Some(tx))),
        }
    }

    pub fn open(&self) {
        if let Some(tx) = self.tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
    }

    pub async fn wait(&self) {
        let _ = self.rx.clone().await;
    }

    /// Blocks the calling (test) thread until the gate opens.
    pub fn wait_blocking(&self) {
        futures::executor::block_on(self.wait());
    }
}
