//! The helper threads of lazy SMP: with `Threads` = N, N − 1 helpers search the main thread's
//! root over the shared transposition table while the main thread searches it too. A helper
//! reports nothing and decides nothing; what it finds reaches the main thread through the
//! table (cut-offs, moves to try first, stored evaluations), which is the whole point: the
//! threads fill the table together, so the main thread reaches each depth sooner.
//!
//! Why the helpers do not simply repeat the main thread: the odd-numbered ones start one ply
//! deeper (depth 2, then 3, ...), so at any time about half the helpers work an iteration
//! ahead of the others; and every helper has its own histories and timing, so the searches
//! drift apart within a few iterations. Helpers never stop the search: the main thread sets
//! their stop flag when it is done (for whatever reason: time, nodes, `stop`, depth), and
//! they are joined before the search returns.
//!
//! Finished iterations are shared ([`Deepest`], `AbSmpShare`, on by default): whichever
//! thread finishes a depth first records it, and every thread still inside that depth (or a
//! shallower one) leaves it at its next look at the clock (within 1 024 nodes) and goes on
//! from the next; the main thread reports the recorded iteration as its own (its best move,
//! score and line), times the search by it and plays it if the search ends there. So the
//! search reaches a depth when its fastest thread does, not when the main thread does.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering as AtomicOrdering};

use atomic_chess::{Move, Position};

use super::{Ctx, MATE, MATE_BOUND, RootMove, Worker};

/// The deepest iteration any thread of a search has finished (`AbSmpShare`): its depth, to be
/// polled from the recursion without a lock, and its root moves, best first, taken under the
/// lock only when an iteration ends (a few dozen times a search).
///
/// Why: with one shared table every thread searches nearly the same tree, and whichever
/// finishes a depth first has done that depth for all; the others' partial trees are in the
/// table, so moving them on to the next depth loses little and the search reaches each depth
/// when its fastest thread does.
pub(super) struct Deepest {
    depth: AtomicI32,
    moves: Mutex<(i32, Vec<RootMove>)>,
}

impl Deepest {
    pub(super) fn new() -> Deepest {
        Deepest {
            depth: AtomicI32::new(0),
            moves: Mutex::new((0, Vec::new())),
        }
    }

    /// The deepest finished depth (0: none yet).
    pub(super) fn depth(&self) -> i32 {
        self.depth.load(AtomicOrdering::Acquire)
    }

    /// Records an iteration of `depth` that a thread finished with these root moves (best
    /// first), unless a deeper one is already recorded.
    pub(super) fn offer(&self, depth: i32, moves: &[RootMove]) {
        if depth <= self.depth() {
            return;
        }
        let mut best = self
            .moves
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if depth > best.0 {
            best.0 = depth;
            best.1.clear();
            best.1.extend_from_slice(moves);
            self.depth.store(depth, AtomicOrdering::Release);
        }
    }

    /// The deepest finished iteration: its depth and root moves, best first.
    pub(super) fn get(&self) -> (i32, Vec<RootMove>) {
        self.moves
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Runs `main` (the main thread's search) on the calling thread with `helpers` searching
/// `root` alongside on threads of their own (each `prepare`d for this search), stops them when
/// `main` returns, joins them and returns `main`'s answer. A helper whose thread cannot be
/// started is left out (the search runs on fewer threads).
pub(super) fn alongside<T>(
    helpers: &mut [Worker],
    ctx: &Ctx,
    root: &Position,
    moves: &[Move],
    max_depth: i32,
    main: impl FnOnce() -> T,
) -> T {
    let done = AtomicBool::new(false);
    let helper_ctx = Ctx {
        stop: &done,
        hard: None,
        // A helper stops at the node limit by itself too: the main thread may be descheduled
        // while it runs (a busy machine), and its stop would come late.
        nodes: ctx.nodes,
        table: ctx.table,
        total: ctx.total,
        deepest: ctx.deepest,
    };
    std::thread::scope(|scope| {
        for (i, helper) in helpers.iter_mut().enumerate() {
            let ctx = &helper_ctx;
            let _ = std::thread::Builder::new()
                .name(format!("alphabeta-helper-{}", i + 1))
                .spawn_scoped(scope, move || {
                    helper.help(ctx, root, moves, i + 1, max_depth);
                });
        }
        // Set on the way out even if `main` panics: the scope would otherwise wait forever
        // for helpers that never stop.
        let _stop_helpers = SetOnDrop(&done);
        main()
    })
}

/// Sets its flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, AtomicOrdering::Relaxed);
    }
}

impl Worker {
    /// When another thread finished the iteration this one abandoned (`overtaken`), clears
    /// the abandonment and returns that thread's iteration (depth, root moves best first).
    pub(super) fn take_over(&mut self, deepest: &Deepest) -> Option<(i32, Vec<RootMove>)> {
        if !self.overtaken {
            return None;
        }
        self.aborted = false;
        self.overtaken = false;
        Some(deepest.get())
    }

    /// Helper number `index` (from 1): iterative deepening of `root` with one line, no
    /// reports and no time, from depth 1 (even `index`) or 2 (odd) up to `max_depth`, until
    /// its stop flag is set. Publishes all its nodes before returning.
    fn help(&mut self, ctx: &Ctx, root: &Position, moves: &[Move], index: usize, max_depth: i32) {
        // A helper may stop anywhere: only the main thread must finish an iteration.
        self.first_iteration = false;
        self.set_root_moves(ctx, root, moves, |_| 0);
        let mut depth = (1 + (index % 2) as i32).min(max_depth);
        let mut previous: Option<i32> = None;
        while depth <= max_depth {
            self.root_depth = depth;
            let score = match previous {
                Some(prev) if depth >= 5 && prev.abs() < MATE_BOUND => {
                    self.aspiration(ctx, root, depth, prev)
                }
                _ => self.root(ctx, root, depth, -MATE, MATE, 1),
            };
            if let Some((done, moves)) = ctx.deepest.and_then(|d| self.take_over(d)) {
                // Another thread finished this depth: go on from the next, from its score.
                previous = moves.first().map(|r| r.score);
                depth = done.max(depth) + 1;
                continue;
            }
            if self.aborted {
                break;
            }
            previous = Some(score);
            let shared = ctx.deepest.map_or(0, |d| {
                d.offer(depth, &self.root_moves);
                d.depth()
            });
            depth = depth.max(shared) + 1;
        }
        self.publish(ctx);
    }
}
