//! Cooperative cancellation: [`CancellationToken`].
//!
//! Tokens form a tree. Cancelling a token cancels every token below it; a
//! token made below an already cancelled one starts cancelled; cancelling a
//! token never affects the tokens above it or beside it. Code that should
//! stop checks [`CancellationToken::is_cancelled`] or awaits
//! [`CancellationToken::cancelled`].
//!
//! # How the tree is kept
//!
//! A node holds a strong reference to its parent and the parent a weak one
//! to each child, in a slab under the parent's mutex. When the last clone of
//! a child token is dropped, the child removes its slab entry, so a
//! long-lived parent whose children come and go does not grow. A cancelled
//! node empties its slab and never links children again (they start
//! cancelled), so a stale slab index can never name another child.
//!
//! # Waking the waiters
//!
//! The wakers of [`CancellationToken::cancelled`] futures wait in the
//! node's `WaitList` (see `waiters.rs` for its protocol): a waiter
//! registers, then checks the flag; `cancel` sets the flag, then wakes the
//! list, with no lock held, so a waker (a foreign one) may poll or drop its
//! future on the spot. `cancel` goes down the whole tree before it re-raises
//! a panic from a waker: every token below is cancelled and every waiter
//! woken all the same.

// std's Arc: loom's has no Weak, and the reference counts are not what the
// models check; the flag and the lock come from the shim.
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use slab::Slab;

use crate::sync::{lock, AtomicBool, Mutex, Ordering};
use crate::waiters::{FirstPanic, Slot, WaitList};

/// A cloneable handle to a cancellation flag that can have child tokens.
///
/// Clones share one flag. `Send + Sync`; cancelling is idempotent.
///
/// ```
/// use fastexec::cancel::CancellationToken;
///
/// let root = CancellationToken::new();
/// let child = root.child_token();
/// let worker = std::thread::spawn(move || {
///     fastexec::block_on(child.cancelled());
///     "stopped"
/// });
/// root.cancel();
/// assert_eq!(worker.join().unwrap(), "stopped");
/// ```
#[derive(Clone)]
pub struct CancellationToken {
    node: Arc<Node>,
}

/// The state one token and its clones share.
struct Node {
    /// Written under `children`'s lock; read without it.
    cancelled: AtomicBool,
    /// Wakes the `cancelled()` futures.
    /// Wakers of this token's `cancelled` futures.
    waiters: WaitList,
    /// Weak handles to the children; emptied when this node is cancelled.
    children: Mutex<Slab<Weak<Node>>>,
    /// Where this node is linked in its parent, if it is.
    parent: Option<ParentLink>,
}

/// A child's place in its parent's slab.
struct ParentLink {
    node: Arc<Node>,
    index: usize,
}

impl CancellationToken {
    /// A new root token, not cancelled.
    ///
    /// ```
    /// let token = fastexec::cancel::CancellationToken::new();
    /// assert!(!token.is_cancelled());
    /// ```
    pub fn new() -> Self {
        Self {
            node: Arc::new(Node::unlinked(false)),
        }
    }

    /// A token that is cancelled when `self` is (and, transitively, when
    /// any ancestor is); cancelling it leaves `self` alone. If `self` is
    /// already cancelled, the child starts cancelled.
    ///
    /// ```
    /// let parent = fastexec::cancel::CancellationToken::new();
    /// let child = parent.child_token();
    /// child.cancel();
    /// assert!(!parent.is_cancelled());
    /// let other = parent.child_token();
    /// parent.cancel();
    /// assert!(other.is_cancelled());
    /// ```
    pub fn child_token(&self) -> Self {
        let mut children = lock(&self.node.children);
        // Relaxed: the flag is written under the lock we hold.
        if self.node.cancelled.load(Ordering::Relaxed) {
            return Self {
                node: Arc::new(Node::unlinked(true)),
            };
        }
        let node = Arc::new_cyclic(|weak| Node {
            cancelled: AtomicBool::new(false),
            waiters: WaitList::new(),
            children: Mutex::new(Slab::new()),
            parent: Some(ParentLink {
                node: Arc::clone(&self.node),
                index: children.insert(weak.clone()),
            }),
        });
        Self { node }
    }

    /// Cancels this token and every token below it, and wakes every
    /// `cancelled()` future of them. Does nothing if already cancelled.
    ///
    /// # Panics
    ///
    /// If a waker of a `cancelled()` future panics when woken: with that
    /// panic, once the whole tree is cancelled and every other waker woken.
    ///
    /// ```
    /// let token = fastexec::cancel::CancellationToken::new();
    /// token.cancel();
    /// token.cancel();
    /// assert!(token.is_cancelled());
    /// ```
    pub fn cancel(&self) {
        // An explicit stack rather than recursion: trees may be deep.
        let mut pending = vec![Arc::clone(&self.node)];
        let mut panic = FirstPanic::default();
        while let Some(node) = pending.pop() {
            pending.extend(node.cancel_self(&mut panic));
        }
        panic.resume();
    }

    /// Whether this token has been cancelled. Once true, it stays true, and
    /// everything the cancelling thread did before `cancel` is visible.
    ///
    /// ```
    /// let token = fastexec::cancel::CancellationToken::new();
    /// assert!(!token.is_cancelled());
    /// token.cancel();
    /// assert!(token.is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.node.is_cancelled()
    }

    /// A future that completes once this token is cancelled (at once if it
    /// already is).
    ///
    /// ```
    /// let token = fastexec::cancel::CancellationToken::new();
    /// token.cancel();
    /// fastexec::block_on(token.cancelled());
    /// ```
    pub fn cancelled(&self) -> WaitForCancellation<'_> {
        WaitForCancellation {
            token: self,
            slot: Slot::default(),
        }
    }

    /// A guard that cancels this token when dropped, unless disarmed.
    ///
    /// ```
    /// let token = fastexec::cancel::CancellationToken::new();
    /// let observer = token.clone();
    /// drop(token.drop_guard());
    /// assert!(observer.is_cancelled());
    /// ```
    pub fn drop_guard(self) -> DropGuard {
        DropGuard { token: Some(self) }
    }
}

impl Default for CancellationToken {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken")
            .field("is_cancelled", &self.is_cancelled())
            .finish()
    }
}

impl Node {
    fn unlinked(cancelled: bool) -> Self {
        Self {
            cancelled: AtomicBool::new(cancelled),
            waiters: WaitList::new(),
            children: Mutex::new(Slab::new()),
            parent: None,
        }
    }

    fn is_cancelled(&self) -> bool {
        // Acquire: pairs with the Release store in `cancel_self`.
        self.cancelled.load(Ordering::Acquire)
    }

    /// Sets the flag and wakes the waiters (keeping a panic from a waker in
    /// `panic`); returns the live children still to cancel (none if this
    /// node was already cancelled).
    fn cancel_self(&self, panic: &mut FirstPanic) -> Vec<Arc<Node>> {
        let children = {
            let mut children = lock(&self.children);
            // Relaxed: the flag is only written under this lock.
            if self.cancelled.load(Ordering::Relaxed) {
                return Vec::new();
            }
            // Release: pairs with the Acquire load in `is_cancelled`, so a
            // waiter that sees the flag sees what preceded the cancel.
            self.cancelled.store(true, Ordering::Release);
            std::mem::take(&mut *children)
        };
        // After the store: a future that registered its waker and then saw
        // the flag unset is woken here.
        self.waiters.wake_all(panic);
        children
            .into_iter()
            .filter_map(|(_, child)| child.upgrade())
            .collect()
    }
}

impl Drop for Node {
    /// Unlinks this node from its parent, and every ancestor that this drop
    /// frees from its own parent, in a loop: letting each freed ancestor's
    /// drop do it would recurse once per level, and a chain of child tokens
    /// of which only the deepest is held can be deeper than a stack.
    fn drop(&mut self) {
        let mut link = self.parent.take();
        while let Some(ParentLink { node, index }) = link {
            // Gone already if the parent was cancelled (its slab emptied).
            lock(&node.children).try_remove(index);
            // The last handle to the parent: take its link before it drops
            // (its own drop then has nothing to unlink).
            link = Arc::into_inner(node).and_then(|mut parent| parent.parent.take());
        }
    }
}

/// The future of [`CancellationToken::cancelled`].
#[must_use = "futures do nothing unless polled"]
pub struct WaitForCancellation<'a> {
    token: &'a CancellationToken,
    slot: Slot,
}

impl Future for WaitForCancellation<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let token = this.token;
        // Registers, then checks the flag again: a cancel between the first
        // check and the registration is seen by the second.
        token
            .node
            .waiters
            .poll_until(&mut this.slot, cx, || token.is_cancelled())
    }
}

impl Drop for WaitForCancellation<'_> {
    fn drop(&mut self) {
        self.token.node.waiters.unregister(&mut self.slot);
    }
}

impl fmt::Debug for WaitForCancellation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitForCancellation")
            .field("token", self.token)
            .finish()
    }
}

/// Cancels its token when dropped; made by
/// [`CancellationToken::drop_guard`].
#[derive(Debug)]
#[must_use = "dropping the guard at once cancels the token"]
pub struct DropGuard {
    token: Option<CancellationToken>,
}

impl DropGuard {
    /// Gives the token back without cancelling it.
    ///
    /// ```
    /// let token = fastexec::cancel::CancellationToken::new();
    /// let token = token.drop_guard().disarm();
    /// assert!(!token.is_cancelled());
    /// ```
    pub fn disarm(mut self) -> CancellationToken {
        self.token
            .take()
            .expect("a guard holds its token until dropped")
    }
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if let Some(token) = &self.token {
            token.cancel();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn linked_children(token: &CancellationToken) -> usize {
        lock(&token.node.children).len()
    }

    #[test]
    fn dropped_children_unlink_from_their_parent() {
        let parent = CancellationToken::new();
        // Fewer rounds under Miri (`scripts/miri`): each one is the same.
        for _ in 0..if cfg!(miri) { 100 } else { 10_000 } {
            let child = parent.child_token();
            let clone = child.clone();
            drop(child);
            assert_eq!(linked_children(&parent), 1, "a clone keeps the link");
            drop(clone);
        }
        assert_eq!(linked_children(&parent), 0);
    }

    #[test]
    fn a_child_outlived_by_its_grandchild_stays_linked() {
        let root = CancellationToken::new();
        let grandchild = root.child_token().child_token();
        assert_eq!(linked_children(&root), 1);
        drop(grandchild);
        assert_eq!(linked_children(&root), 0);
    }

    #[test]
    fn cancelling_empties_the_slab_and_later_children_are_not_linked() {
        let parent = CancellationToken::new();
        let children: Vec<_> = (0..100).map(|_| parent.child_token()).collect();
        parent.cancel();
        assert_eq!(linked_children(&parent), 0);
        let late = parent.child_token();
        assert!(late.is_cancelled());
        assert_eq!(linked_children(&parent), 0);
        drop(children);
        assert_eq!(linked_children(&parent), 0);
    }
}
