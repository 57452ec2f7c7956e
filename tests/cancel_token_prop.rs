//! Property test of `CancellationToken` trees.
//!
//! A random forest of tokens is built one token at a time, with random
//! cancels (directly or by dropping a `drop_guard`; some guards disarmed)
//! and random drops of the test's handle to a token in between; then tasks
//! cancel more tokens concurrently (from one to three workers, and from a
//! plain thread) while other tasks create children of random tokens and
//! tasks wait on `cancelled()` for every token. What the module docs
//! promise, checked against a model:
//!
//! * a token is cancelled exactly when it or one of its ancestors was
//!   (cancelling never reaches a parent or a sibling; a token made below a
//!   cancelled one starts cancelled; a token whose every handle was dropped
//!   still passes a cancel on to the descendants that outlive it), after
//!   every step of the first phase and after the concurrent one, for a child
//!   made while its ancestors were being cancelled as for any other;
//! * `cancelled().await` resolves for every cancelled token (the hang guard
//!   fails the test otherwise), whether the waiter listened before or after
//!   the cancel, and has not resolved for a token that is not cancelled.

mod support;

use std::sync::{Arc, Mutex};

use fastexec::cancel::CancellationToken;
use fastexec::Executor;
use proptest::prelude::*;
use support::pause::{pause, wait_out, Pause};

/// What the first phase does to a token once the step of its creation has
/// come.
#[derive(Debug, Clone, Copy)]
enum Act {
    Cancel,
    /// Drops an armed `drop_guard` of a clone (a cancel).
    Guard,
    /// Disarms a `drop_guard` of a clone (no cancel).
    Disarm,
    /// Drops the test's handle; later acts on the token do nothing.
    Drop,
}

#[derive(Debug, Clone)]
struct Case {
    /// Each token's parent, an earlier token, or none (a root).
    parents: Vec<Option<usize>>,
    /// First phase: after creating token `step`, apply `act` to token
    /// `target` (modulo `step + 1`).
    acts: Vec<(usize, usize, Act)>,
    /// Second phase: each canceller task's targets (modulo the number of
    /// tokens), with a pause before each.
    cancellers: Vec<Vec<(usize, Pause)>>,
    /// Second phase: targets a plain thread cancels.
    thread_cancels: Vec<usize>,
    /// Second phase: children made by tasks of these tokens, after a pause.
    late: Vec<(usize, Pause)>,
    /// A pause before each waiter listens (cycled over the tokens).
    waits: Vec<Pause>,
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        3 => Just(Act::Cancel),
        1 => Just(Act::Guard),
        1 => Just(Act::Disarm),
        2 => Just(Act::Drop),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..40, any::<bool>()).prop_flat_map(|(n, deep)| {
        let parents: Vec<_> = (0..n)
            .map(|i| {
                let lowest = if deep { i.saturating_sub(2) } else { 0 };
                (lowest..=i).prop_map(move |p| (p < i).then_some(p))
            })
            .collect();
        let acts = prop::collection::vec((0..n, any::<usize>(), act()), 0..n / 2 + 2);
        let cancellers = prop::collection::vec(prop::collection::vec((0..n, pause()), 0..4), 0..4);
        let thread_cancels = prop::collection::vec(0..n, 0..3);
        let late = prop::collection::vec((0..n, pause()), 0..6);
        let waits = prop::collection::vec(pause(), 1..8);
        (parents, acts, cancellers, thread_cancels, late, waits).prop_map(
            |(parents, acts, cancellers, thread_cancels, late, waits)| Case {
                parents,
                acts,
                cancellers,
                thread_cancels,
                late,
                waits,
            },
        )
    })
}

/// Which tokens the model says are cancelled: cancelled directly, or below
/// one that is.
fn model(parents: &[Option<usize>], direct: &[bool]) -> Vec<bool> {
    let mut cancelled = vec![false; parents.len()];
    for i in 0..parents.len() {
        // Parents come first.
        cancelled[i] = direct[i] || parents[i].is_some_and(|p| cancelled[p]);
    }
    cancelled
}

/// The first phase, checked after every step: the tokens (`None` where the
/// test dropped its handle), each token's parent as made (a parent whose
/// handle was dropped before its child was due makes the child a root), and
/// which tokens were cancelled directly.
type Built = (
    Vec<Option<CancellationToken>>,
    Vec<Option<usize>>,
    Vec<bool>,
);

fn build(case: &Case) -> Result<Built, TestCaseError> {
    let n = case.parents.len();
    let mut tokens: Vec<Option<CancellationToken>> = Vec::new();
    let mut parents = Vec::new();
    let mut direct = vec![false; n];
    for step in 0..n {
        let parent = case.parents[step].filter(|&p| tokens[p].is_some());
        let token = match parent {
            Some(p) => tokens[p].as_ref().unwrap().child_token(),
            None => CancellationToken::new(),
        };
        tokens.push(Some(token));
        parents.push(parent);
        for &(_, target, act) in case.acts.iter().filter(|a| a.0 == step) {
            let target = target % (step + 1);
            let Some(token) = tokens[target].clone() else {
                continue;
            };
            match act {
                Act::Cancel => token.cancel(),
                Act::Guard => drop(token.drop_guard()),
                Act::Disarm => drop(token.drop_guard().disarm()),
                Act::Drop => tokens[target] = None,
            }
            if matches!(act, Act::Cancel | Act::Guard) {
                direct[target] = true;
            }
        }
        let expected = model(&parents, &direct[..=step]);
        for (i, token) in tokens.iter().enumerate() {
            if let Some(token) = token {
                prop_assert_eq!(
                    token.is_cancelled(),
                    expected[i],
                    "step {}: token {}",
                    step,
                    i
                );
            }
        }
    }
    Ok((tokens, parents, direct))
}

/// Builds the tokens (checking each step), then runs the second phase and
/// checks the tokens, the late children and the waiters against the model.
fn check(case: &Case, executor: &'static Executor) -> Result<(), TestCaseError> {
    let (tokens, mut parents, mut direct) = build(case)?;
    let n = tokens.len();
    let live: Vec<usize> = (0..n).filter(|&i| tokens[i].is_some()).collect();
    if live.is_empty() {
        return Ok(());
    }
    let tokens = Arc::new(tokens);
    // Second phase. Targets name live tokens only (the test can cancel no
    // other): `t % live.len()`.
    let pick = |t: usize| live[t % live.len()];
    let cancellers: Vec<Vec<(usize, Pause)>> = case
        .cancellers
        .iter()
        .map(|c| c.iter().map(|&(t, p)| (pick(t), p)).collect())
        .collect();
    let thread_cancels: Vec<usize> = case.thread_cancels.iter().map(|&t| pick(t)).collect();
    let late: Vec<(usize, Pause)> = case.late.iter().map(|&(t, p)| (pick(t), p)).collect();
    for &target in cancellers
        .iter()
        .flatten()
        .map(|(t, _)| t)
        .chain(&thread_cancels)
    {
        direct[target] = true;
    }
    let waits = case.waits.clone();
    let phase_tokens = tokens.clone();
    let phase_live = live.clone();
    let (late_tokens, resolved_early, waiters) = support::with_timeout(move || {
        let tokens = phase_tokens;
        // Every live token gets a waiter, spawned outside the `block_on`
        // below, which would otherwise wait for the waiters of the tokens
        // that stay uncancelled.
        let done = Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for (k, &i) in phase_live.iter().enumerate() {
            let token = tokens[i].clone().unwrap();
            let (pause, done) = (waits[k % waits.len()], done.clone());
            waiters.push((
                i,
                token.clone(),
                executor.spawn(async move {
                    wait_out(pause).await;
                    token.cancelled().await;
                    done.lock().unwrap().push(i);
                }),
            ));
        }
        executor.block_on(async move {
            let thread_tokens: Vec<CancellationToken> = thread_cancels
                .iter()
                .map(|&t| tokens[t].clone().unwrap())
                .collect();
            let thread = std::thread::spawn(move || {
                thread_tokens.iter().for_each(CancellationToken::cancel)
            });
            let mut jobs = Vec::new();
            for targets in cancellers {
                let targets: Vec<(CancellationToken, Pause)> = targets
                    .into_iter()
                    .map(|(t, p)| (tokens[t].clone().unwrap(), p))
                    .collect();
                jobs.push(fastexec::spawn(async move {
                    for (token, pause) in targets {
                        wait_out(pause).await;
                        token.cancel();
                    }
                }));
            }
            let mut makers = Vec::new();
            for (t, pause) in late {
                let parent = tokens[t].clone().unwrap();
                makers.push(fastexec::spawn(async move {
                    wait_out(pause).await;
                    (t, parent.child_token())
                }));
            }
            for job in jobs {
                job.await.unwrap();
            }
            thread.join().unwrap();
            let mut late_tokens = Vec::new();
            for maker in makers {
                late_tokens.push(maker.await.unwrap());
            }
            let resolved_early = done.lock().unwrap().clone();
            (late_tokens, resolved_early, waiters)
        })
    });
    let late_base = n;
    for (t, _) in &late_tokens {
        parents.push(Some(*t));
        direct.push(false);
    }
    let expected = model(&parents, &direct);
    for &i in &live {
        prop_assert_eq!(
            tokens[i].as_ref().unwrap().is_cancelled(),
            expected[i],
            "token {}",
            i
        );
    }
    for (k, (t, token)) in late_tokens.iter().enumerate() {
        prop_assert_eq!(
            token.is_cancelled(),
            expected[late_base + k],
            "late child {} of token {}",
            k,
            t
        );
    }
    for &i in &resolved_early {
        prop_assert!(
            expected[i],
            "token {i}'s waiter resolved, token not cancelled"
        );
    }
    // Every cancelled token's waiter resolves; the others' once their
    // token is cancelled now.
    let late_waited: Vec<(bool, CancellationToken)> = late_tokens
        .iter()
        .enumerate()
        .map(|(k, (_, token))| (expected[late_base + k], token.clone()))
        .collect();
    support::with_timeout(move || {
        executor.block_on(async move {
            for (i, token, waiter) in waiters {
                if !expected[i] {
                    token.cancel();
                }
                waiter.await.unwrap();
            }
            for (cancelled, token) in late_waited {
                if !cancelled {
                    token.cancel();
                }
                token.cancelled().await;
            }
        })
    });
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn token_trees_cancel_exactly_their_descendants_one_worker(case in case()) {
        check(&case, support::shared_executor(1))?;
    }

    #[test]
    fn token_trees_cancel_exactly_their_descendants_two_workers(case in case()) {
        check(&case, support::shared_executor(2))?;
    }

    #[test]
    fn token_trees_cancel_exactly_their_descendants_three_workers(case in case()) {
        check(&case, support::shared_executor(3))?;
    }
}
