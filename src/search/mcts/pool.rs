//! The threads of a batched search (`batch.rs`): a pool of jobs, the expensive and pure part of
//! a playout's last step (a leaf's evaluation, an expansion, a refinement of priors), taken by
//! the search thread and its workers alike, and the signals that hand a batch out and wait for
//! it. Nothing here touches the tree.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::Thread;

use atomic_chess::{Move, MoveList, Position};

use super::expand::new_children;
use super::leaf::{Leaf, evaluate_leaf};
use crate::search::SearchParams;
use crate::search::eval::{Evaluator, QStats};
use crate::search::nnue::Network;
use crate::search::policy;
use crate::search::tree::{Node, Proof};

/// Playouts per batch and thread.
const BATCH_PER_THREAD: usize = 8;
/// Refinements of priors per batch and thread, at most (a batch asks for about one per eight
/// playouts; the rest wait for the next batch).
pub(super) const REFINES_PER_THREAD: usize = BATCH_PER_THREAD;
/// Rounds a worker polls for the next batch before it sleeps. The search thread's part of a
/// batch (selection and application) takes microseconds, so a short spin saves most wake-ups.
const SPIN_ROUNDS: u32 = 1000;

/// What a descent ended at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Work {
    /// A node never evaluated.
    Evaluate,
    /// An evaluated leaf to expand (with evaluation-refined priors or not); the child a playout
    /// enters is then evaluated too.
    Expand { with_eval: bool },
    /// The priors of an expanded node's children, refined with the evaluation term.
    Refine,
}

/// The expensive, pure part of one playout, done by whichever thread takes it.
pub(super) struct Job {
    pub(super) work: Work,
    /// The position at the descent's last node.
    pub(super) pos: Position,
    /// The end of the path's repetition keys (the position's own key last): enough for the
    /// position and a child.
    pub(super) keys: Vec<u64>,
    /// The evaluation of the leaf (`Evaluate`), or of the entered child (`Expand`, unless that
    /// child is created proven).
    pub(super) leaf: Leaf,
    /// `Expand`: the children (empty without legal moves).
    pub(super) children: Vec<Node>,
    /// `Expand`: the index in `children` of the child a playout enters.
    pub(super) child: Option<usize>,
    /// `Refine`: the moves of the children, in their order.
    pub(super) moves: Vec<Move>,
    /// `Refine`: their new priors.
    pub(super) refined: policy::Priors,
}

impl Job {
    fn new() -> Job {
        Job {
            work: Work::Evaluate,
            pos: Position::startpos(),
            keys: Vec::new(),
            leaf: Leaf {
                proof: None,
                value: 0.5,
            },
            children: Vec::new(),
            child: None,
            moves: Vec::new(),
            refined: policy::Priors::default(),
        }
    }

    fn run(&mut self, params: &SearchParams, scratch: &mut Scratch) {
        match self.work {
            Work::Evaluate => {
                self.leaf = evaluate_leaf(
                    &self.keys,
                    &self.pos,
                    params,
                    &mut scratch.qstats,
                    &mut scratch.evaluator,
                );
            }
            Work::Expand { with_eval } => {
                self.children.clear();
                self.child = None;
                self.pos.legal_moves_into(&mut scratch.moves);
                if scratch.moves.is_empty() {
                    return;
                }
                new_children(
                    &self.pos,
                    &scratch.moves,
                    params,
                    with_eval,
                    &mut scratch.priors,
                    &mut self.children,
                );
                let i = first_choice(&self.children);
                self.child = Some(i);
                let child = self.children[i];
                if child.proof == Proof::Unknown
                    && let Some(m) = child.mv
                {
                    let mut pos = self.pos;
                    pos.play_unchecked(m);
                    self.keys.push(pos.zobrist());
                    self.leaf = evaluate_leaf(
                        &self.keys,
                        &pos,
                        params,
                        &mut scratch.qstats,
                        &mut scratch.evaluator,
                    );
                    self.keys.pop();
                }
            }
            Work::Refine => policy::priors(&self.pos, &self.moves, params, true, &mut self.refined),
        }
    }
}

/// The child that PUCT selects in a freshly created block: the first created proven won for
/// its mover, else the first unproven one (the highest prior), else the first.
fn first_choice(children: &[Node]) -> usize {
    children
        .iter()
        .position(|c| matches!(c.proof, Proof::Loss(_)))
        .or_else(|| children.iter().position(|c| c.proof == Proof::Unknown))
        .unwrap_or(0)
}

/// Scratch buffers of one thread.
#[derive(Default)]
pub(super) struct Scratch {
    priors: policy::Priors,
    moves: MoveList,
    pub(super) qstats: QStats,
    /// Repetition keys of a child the search thread evaluates itself.
    pub(super) keys: Vec<u64>,
    /// This thread's evaluation (its own accumulators for a network).
    pub(super) evaluator: Evaluator,
}

impl Scratch {
    /// Scratch buffers evaluating with `network` (or linearly).
    fn new(network: Option<&Arc<Network>>) -> Scratch {
        Scratch {
            evaluator: Evaluator::new(network),
            ..Scratch::default()
        }
    }
}

/// The jobs of a batch, shared by the search thread and its workers, and their signals.
///
/// The search thread publishes a batch as one word, `claim`: the batch number (bits 32–63), the
/// number of jobs (bits 16–31) and the next job to take (bits 0–15). Every thread takes jobs
/// by incrementing the word, and the search thread waits only for the jobs taken to be done,
/// never for a worker to wake up: on a loaded machine it does the whole batch itself rather
/// than wait for a descheduled worker. A new batch is published only once every job of the
/// last one is done, and the batch number in the word makes a worker's stale increment fail.
pub(super) struct Pool {
    params: SearchParams,
    /// The network every thread evaluates with (shared, never copied).
    network: Option<Arc<Network>>,
    jobs: Vec<Mutex<Job>>,
    /// Batch number, job count and next job (see above).
    claim: AtomicU64,
    /// Jobs of the current batch done.
    done: AtomicUsize,
    /// The search is over.
    quit: AtomicBool,
    /// Quiescence positions of the workers.
    qnodes: AtomicU64,
    /// The search thread, woken by whoever finishes a batch's last job.
    main: Thread,
}

impl Pool {
    /// A pool for a search on `threads` threads (the calling one included).
    pub(super) fn new(params: SearchParams, threads: usize, network: Option<Arc<Network>>) -> Pool {
        Pool {
            params,
            network,
            jobs: (0..(BATCH_PER_THREAD + REFINES_PER_THREAD) * threads)
                .map(|_| Mutex::new(Job::new()))
                .collect(),
            claim: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            quit: AtomicBool::new(false),
            qnodes: AtomicU64::new(0),
            main: std::thread::current(),
        }
    }

    /// Quiescence positions visited by the workers (valid once they are gone).
    pub(super) fn quiescence_nodes(&self) -> u64 {
        self.qnodes.load(Ordering::Relaxed)
    }

    /// A worker's life: take jobs while there are any, else poll a little, then sleep until
    /// woken; until `quit`.
    pub(super) fn serve(&self) {
        let mut scratch = Scratch::new(self.network.as_ref());
        let mut idle = 0;
        while !self.quit.load(Ordering::Acquire) {
            if self.take_one(&mut scratch) {
                idle = 0;
            } else if idle < SPIN_ROUNDS {
                idle += 1;
                std::hint::spin_loop();
            } else {
                std::thread::park();
            }
        }
        self.qnodes
            .fetch_add(scratch.qstats.nodes, Ordering::Relaxed);
    }

    /// Takes and runs one job of the current batch, if one is left.
    fn take_one(&self, scratch: &mut Scratch) -> bool {
        let mut word = self.claim.load(Ordering::Acquire);
        loop {
            let count = (word >> 16) & 0xffff;
            let next = word & 0xffff;
            if next >= count {
                return false;
            }
            match self.claim.compare_exchange_weak(
                word,
                word + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // Counted even if the job panics, so the search thread is not left
                    // waiting (it then finds the job's lock poisoned and panics in turn).
                    let _done = Done {
                        pool: self,
                        count: count as usize,
                    };
                    self.job(next as usize).run(&self.params, scratch);
                    return true;
                }
                Err(current) => word = current,
            }
        }
    }

    pub(super) fn job(&self, i: usize) -> std::sync::MutexGuard<'_, Job> {
        self.jobs[i].lock().expect("a search worker panicked")
    }
}

/// Counts a job done when dropped, and wakes the search thread after the batch's last one.
struct Done<'a> {
    pool: &'a Pool,
    count: usize,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        if self.pool.done.fetch_add(1, Ordering::AcqRel) + 1 == self.count {
            self.pool.main.unpark();
        }
    }
}

/// The search thread's side of a pool: the workers' handles and its own scratch buffers.
/// Dropping it ends the workers.
pub(super) struct Crew<'a> {
    pub(super) pool: &'a Pool,
    pub(super) workers: Vec<Thread>,
    pub(super) scratch: Scratch,
    /// Number of the last batch published.
    generation: u64,
}

impl<'a> Crew<'a> {
    /// The search thread's side of `pool`, served by the threads `workers`.
    pub(super) fn new(pool: &'a Pool, workers: Vec<Thread>) -> Crew<'a> {
        Crew {
            pool,
            workers,
            scratch: Scratch::new(pool.network.as_ref()),
            generation: 0,
        }
    }

    /// Playouts per batch.
    pub(super) fn batch_size(&self) -> usize {
        BATCH_PER_THREAD * (self.workers.len() + 1)
    }

    /// Runs the first `count` jobs on every thread; returns when all are done.
    pub(super) fn run(&mut self, count: usize) {
        if count == 0 {
            return;
        }
        let pool = self.pool;
        self.generation = (self.generation + 1) & 0xffff_ffff;
        pool.done.store(0, Ordering::Relaxed);
        pool.claim.store(
            (self.generation << 32) | ((count as u64) << 16),
            Ordering::Release,
        );
        for worker in &self.workers {
            worker.unpark();
        }
        while pool.take_one(&mut self.scratch) {}
        while pool.done.load(Ordering::Acquire) < count {
            std::thread::park();
        }
    }
}

impl Drop for Crew<'_> {
    fn drop(&mut self) {
        self.pool
            .qnodes
            .fetch_add(self.scratch.qstats.nodes, Ordering::Relaxed);
        self.pool.quit.store(true, Ordering::Release);
        for worker in &self.workers {
            worker.unpark();
        }
    }
}
