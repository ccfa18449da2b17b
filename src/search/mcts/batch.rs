//! Batched leaf parallelism, the search with `threads > 1`.
//!
//! Every change to the tree stays on the search thread; only the expensive and pure part of a
//! playout's last step runs in parallel. A batch goes in three steps:
//!
//! 1. *Select* (search thread): up to `batch_size` descents from the root by PUCT, as playouts
//!    descend. Each path gets a *virtual loss* (a visit with the value 0 for the player who moved
//!    into each node), so the next descent of the batch prefers other lines. A descent ends at a
//!    node never evaluated, at an evaluated leaf to expand, or at a proven node. One that ends
//!    at a node already taken by the batch (a collision) is dropped (its virtual loss stays, so
//!    the next descent goes elsewhere); a few collisions end the batch.
//! 2. *Work* (all threads): the jobs (terminal checks and quiescence evaluation of a new leaf;
//!    move generation, priors and the children's proofs of a node to expand, plus the
//!    evaluation of the child a playout enters first) are taken one at a time from a shared
//!    counter by the search thread and the workers, each with its own scratch buffers
//!    (`pool.rs`).
//! 3. *Apply* (search thread): the virtual losses are undone exactly (each touched node's visits
//!    and mean restored in reverse order), then the playouts are completed in batch order as
//!    sequential playouts would be: children added, the leaf's value stored and backed up. A
//!    path that now crosses a node proven by an earlier playout of the batch ends there with
//!    the exact value, as a playout would.
//!
//! Refining a node's priors (`PriorEvalVisits`: a static evaluation per child) took 27 % of a
//! one-thread bench's time, so it is parallel work too, one batch late: a node that reaches the
//! visits on a path of this batch is refined by a job of the next one, whose application
//! starts by storing the new priors. The search thread refines what is still waiting at the
//! end of the search and before pruning the tree (pruning moves nodes).
//!
//! An expansion playout evaluates the child it enters in the same job, as a sequential playout
//! does: ending it at the expanded node instead would back up a value already counted, and half
//! of the playouts would learn nothing. The worker foresees which child selection picks in a
//! fresh block (the first created proven won, else the first unproven: the highest prior); the
//! search thread checks its own selection and evaluates another child itself if they differ.
//!
//! Nothing depends on which thread did a job, so a search with a fixed thread count, seed and
//! node limit is deterministic.

use std::collections::VecDeque;
use std::ops::Range;

use atomic_chess::Position;

use super::Mcts;
use super::leaf::evaluate_leaf;
use super::pool::{Crew, Job, Pool, REFINES_PER_THREAD, Scratch, Work};
use crate::search::tree::{Node, NodeId, Proof, ROOT};

/// One playout of a batch.
#[derive(Clone, Debug)]
struct Entry {
    /// Its path in `Batch::paths`.
    path: Range<usize>,
    /// Its job in the pool (none for a path ending at a proven node).
    job: Option<usize>,
}

/// The search thread's scratch state of a batch, kept between batches to avoid allocations.
#[derive(Debug, Default)]
pub(super) struct Batch {
    entries: Vec<Entry>,
    /// The paths of the entries, one after another.
    paths: Vec<NodeId>,
    /// Each node touched by a virtual loss, with its visits and mean before.
    saved: Vec<(NodeId, u32, f32)>,
    /// The nodes the batch's jobs evaluate or expand.
    taken: Vec<NodeId>,
    /// Jobs in use.
    jobs: usize,
    /// Nodes whose priors are to be refined, with their positions, oldest first.
    refines: VecDeque<(NodeId, Position)>,
    /// The refinements in this batch's jobs: node and job.
    refining: Vec<(NodeId, usize)>,
}

impl Mcts {
    /// Up to `size` playouts as one batch on the crew's threads (see the module doc).
    pub(super) fn batch(
        &mut self,
        root_pos: &Position,
        base_keys: usize,
        crew: &mut Crew,
        size: usize,
    ) {
        let mut batch = std::mem::take(&mut self.batch);
        batch.entries.clear();
        batch.paths.clear();
        batch.saved.clear();
        batch.taken.clear();
        batch.refining.clear();
        batch.jobs = 0;
        self.select_batch(root_pos, base_keys, crew.pool, &mut batch, size);
        let refines = batch
            .refines
            .len()
            .min(REFINES_PER_THREAD * (crew.workers.len() + 1));
        for (id, pos) in batch.refines.drain(..refines) {
            let index = batch.jobs;
            batch.jobs += 1;
            batch.refining.push((id, index));
            let mut job = crew.pool.job(index);
            job.work = Work::Refine;
            job.pos = pos;
            job.moves.clear();
            let node = *self.tree.get(id);
            job.moves
                .extend(self.tree.children(&node).iter().filter_map(|c| c.mv));
        }
        crew.run(batch.jobs);
        for &(id, visits, q) in batch.saved.iter().rev() {
            let node = self.tree.get_mut(id);
            node.visits = visits;
            node.q = q;
        }
        for &(id, index) in &batch.refining {
            let job = crew.pool.job(index);
            let node = *self.tree.get(id);
            if job.refined.len() == usize::from(node.children) {
                for (cid, &prior) in node.child_ids().zip(job.refined.iter()) {
                    self.tree.get_mut(cid).prior = prior;
                }
            }
        }
        for entry in &batch.entries {
            self.path.clear();
            self.path
                .extend_from_slice(&batch.paths[entry.path.clone()]);
            let job = entry.job.map(|i| crew.pool.job(i));
            let (value, changed) = self.complete(
                root_pos,
                job.as_deref(),
                &mut crew.scratch,
                &mut batch.refines,
            );
            let depth = (self.path.len() - 1) as u32;
            self.stats.playouts += 1;
            self.stats.depth_sum += u64::from(depth);
            self.stats.max_depth = self.stats.max_depth.max(depth);
            self.backup(value, changed);
        }
        self.batch = batch;
    }

    /// Refines now the priors a batch left for the next one.
    pub(super) fn flush_refines(&mut self) {
        while let Some((id, pos)) = self.batch.refines.pop_front() {
            self.refine_priors(id, &pos);
        }
    }

    /// Step 1: the descents, with virtual losses, and their jobs.
    fn select_batch(
        &mut self,
        root_pos: &Position,
        base_keys: usize,
        pool: &Pool,
        batch: &mut Batch,
        size: usize,
    ) {
        let max_collisions = size.div_ceil(4);
        let mut collisions = 0;
        while batch.entries.len() < size && collisions < max_collisions {
            let mut pos = *root_pos;
            self.keys.truncate(base_keys);
            let start = batch.paths.len();
            batch.paths.push(ROOT);
            let mut id = ROOT;
            let work = loop {
                let node = *self.tree.get(id);
                if node.proof != Proof::Unknown && id != ROOT {
                    break None;
                }
                if node.visits == 0 {
                    break Some(Work::Evaluate);
                }
                if !node.is_expanded() {
                    let with_eval = self.config.params.expansion_with_eval(node.visits);
                    break Some(Work::Expand { with_eval });
                }
                let child = self.select(id);
                let Some(m) = self.tree.get(child).mv else {
                    break None;
                };
                pos.play_unchecked(m);
                self.keys.push(pos.zobrist());
                batch.paths.push(child);
                id = child;
            };
            for &n in &batch.paths[start..] {
                let node = self.tree.get_mut(n);
                batch.saved.push((n, node.visits, node.q));
                node.visits += 1;
                node.q -= node.q / node.visits as f32;
            }
            if work.is_some() && batch.taken.contains(&id) {
                batch.paths.truncate(start);
                collisions += 1;
                continue;
            }
            let job = work.map(|work| {
                let index = batch.jobs;
                batch.jobs += 1;
                batch.taken.push(id);
                let mut job = pool.job(index);
                job.work = work;
                job.pos = pos;
                // The repetition window of the position and of a child (one ply more).
                let len = self.keys.len();
                let window = (pos.halfmove_clock() as usize + 1).min(len);
                job.keys.clear();
                job.keys.extend_from_slice(&self.keys[len - window..]);
                index
            });
            batch.entries.push(Entry {
                path: start..batch.paths.len(),
                job,
            });
        }
    }

    /// Step 3 for one playout, whose path is in `self.path`: walks it as a playout would and
    /// stores the job's results. Returns the value to back up and whether an expansion changed
    /// its node's proof (see `playout`).
    fn complete(
        &mut self,
        root_pos: &Position,
        job: Option<&Job>,
        scratch: &mut Scratch,
        refines: &mut VecDeque<(NodeId, Position)>,
    ) -> (f32, bool) {
        let last = self.path.len() - 1;
        for k in 0..last {
            let id = self.path[k];
            let node = *self.tree.get(id);
            if k > 0
                && let Some(exact) = node.proof.value_for_mover()
            {
                // Proven by an earlier playout of the batch.
                self.path.truncate(k + 1);
                return (exact, false);
            }
            if self.config.params.refines_priors_at(node.visits) {
                let mut pos = *root_pos;
                for &n in &self.path[1..=k] {
                    if let Some(m) = self.tree.get(n).mv {
                        pos.play_unchecked(m);
                    }
                }
                refines.push_back((id, pos));
            }
        }
        let id = self.path[last];
        let node = *self.tree.get(id);
        if last > 0
            && let Some(exact) = node.proof.value_for_mover()
        {
            return (exact, false);
        }
        let Some(job) = job else {
            return (node.q, false);
        };
        match job.work {
            Work::Evaluate => {
                self.stats.positions += 1;
                (self.set_leaf(id, job.leaf), false)
            }
            Work::Expand { .. } => self.complete_expansion(id, node, job, scratch),
            Work::Refine => unreachable!("a playout's job evaluates or expands"),
        }
    }

    /// Adds the job's children to `node` (`id`) and enters the child that selection picks.
    fn complete_expansion(
        &mut self,
        id: NodeId,
        node: Node,
        job: &Job,
        scratch: &mut Scratch,
    ) -> (f32, bool) {
        self.stats.positions += 1;
        // Once the arena is full, it stays full for the rest of the batch.
        if self.full || !self.tree.add_children(id, &job.children) {
            self.full = true;
            return (node.q, false);
        }
        self.refresh(id);
        let expanded = *self.tree.get(id);
        let changed = expanded.proof != node.proof;
        if self.config.params.refines_priors_at(node.visits) {
            self.refine_priors(id, &job.pos);
        }
        let child = self.select(id);
        self.path.push(child);
        let child_node = *self.tree.get(child);
        if let Some(exact) = child_node.proof.value_for_mover() {
            return (exact, changed);
        }
        let foreseen = job.child == Some((child - expanded.first) as usize);
        let leaf = match child_node.mv {
            Some(m) if !foreseen => {
                // Selection picked another child than the worker foresaw (the priors were
                // refined, or a re-expanded node's many visits favour exploring): evaluate
                // that one here.
                let mut pos = job.pos;
                pos.play_unchecked(m);
                scratch.keys.clear();
                scratch.keys.extend_from_slice(&job.keys);
                scratch.keys.push(pos.zobrist());
                evaluate_leaf(
                    &scratch.keys,
                    &pos,
                    &self.config.params,
                    &mut scratch.qstats,
                    &mut scratch.evaluator,
                )
            }
            _ => job.leaf,
        };
        self.stats.positions += 1;
        (self.set_leaf(child, leaf), changed)
    }
}
