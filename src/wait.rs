//! `wait!`, `yield_now`, and the plumbing behind `wait!`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::task::JoinHandle;

/// Blocks until every argument has completed and returns their values as a
/// tuple.
///
/// A [`JoinHandle<T>`](crate::JoinHandle) argument gives its task's `T`: a
/// panic in the task resumes in the caller, and a cancelled task panics with
/// a message saying so. Any other future gives its output. Like
/// [`block_on`](crate::block_on) (which it uses), it runs other tasks while
/// it waits when called from inside a task, so waiting for its arguments
/// cannot deadlock a worker (with the limit `block_on` states for calls
/// nested on one thread's stack).
///
/// # Panics
///
/// With the panic of a task whose handle is an argument (resumed with its
/// payload), or a plain argument's panic; if a task whose handle is an
/// argument was cancelled; and as [`block_on`](crate::block_on).
///
/// ```
/// let a = fastexec::spawn(async { 1 });
/// let b = fastexec::spawn(async { "two" });
/// let (a, b, c) = fastexec::wait!(a, b, async { 3.0 });
/// assert_eq!((a, b, c), (1, "two", 3.0));
/// ```
#[macro_export]
macro_rules! wait {
    ($($arg:expr),+ $(,)?) => {
        $crate::block_on(async {
            #[allow(unused_imports)]
            use $crate::__private::{WaitFuture as _, WaitJoinHandle as _};
            $crate::__private::join!(
                $( (&mut $crate::__private::WaitArg(::core::option::Option::Some($arg))).take_wait_future() ),+
            )
        })
    };
}

/// Wraps one `wait!` argument, so that method lookup can tell join handles
/// from other futures.
#[doc(hidden)]
pub struct WaitArg<T>(pub Option<T>);

/// Chosen for `JoinHandle` arguments: found before [`WaitFuture`] because it
/// needs no auto-reference.
#[doc(hidden)]
pub trait WaitJoinHandle {
    type Future;
    fn take_wait_future(&mut self) -> Self::Future;
}

impl<T> WaitJoinHandle for WaitArg<JoinHandle<T>> {
    type Future = JoinValue<T>;

    fn take_wait_future(&mut self) -> JoinValue<T> {
        JoinValue(self.0.take().expect("wait! argument used once"))
    }
}

/// Chosen for every other future.
#[doc(hidden)]
pub trait WaitFuture {
    type Future;
    fn take_wait_future(&mut self) -> Self::Future;
}

impl<F: Future> WaitFuture for &mut WaitArg<F> {
    type Future = F;

    fn take_wait_future(&mut self) -> F {
        self.0.take().expect("wait! argument used once")
    }
}

/// A join handle's value: panics resume here, cancellation panics.
#[doc(hidden)]
pub struct JoinValue<T>(JoinHandle<T>);

impl<T> Future for JoinValue<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match std::task::ready!(Pin::new(&mut self.0).poll(cx)) {
            Ok(value) => Poll::Ready(value),
            Err(error) => match error.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(_) => panic!("fastexec::wait!: the awaited task was cancelled"),
            },
        }
    }
}

/// Yields once to the executor: the task goes to the back of its worker's
/// queue, behind everything that was waiting. A task spawned with a
/// [`Priority`](crate::Priority) other than `Normal` goes to the back of its
/// priority's queue instead, as on every wake: a high task that yields runs
/// again before any normal task that waits, so a high task that loops on
/// `yield_now` until a normal task makes progress may wait for ever on a
/// one-worker executor (or under the simple scheduler).
///
/// ```
/// fastexec::block_on(async {
///     for _ in 0..3 {
///         fastexec::yield_now().await;
///     }
/// });
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future returned by [`yield_now`].
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
