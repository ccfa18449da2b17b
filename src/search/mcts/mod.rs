//! The Monte-Carlo tree search proper.
//!
//! One playout: walk down from the root by PUCT, play the moves on a copy of the root position,
//! stop at a node never evaluated (or a proven one), evaluate it (terminal checks, then the
//! quiescence search mapped to a win probability; no random playouts), and back the value up.
//! A node is expanded (its children created with their priors) on its second visit, so leaves
//! cost one evaluation and no memory.
//!
//! The solver: a node whose side to move can blow up the enemy king is a proven win at its first
//! visit; children that blow up the king are created as proven; mates, stalemates, repetitions,
//! the fifty-move rule and insufficient material are detected when a node is evaluated; proofs
//! propagate up in every backup (a child lost for its mover proves the parent won, all children
//! won for their movers prove it lost). Selection never enters a proven-lost child, the root
//! plays the shortest proven win at once and a proven loss only when every move is lost.
//!
//! Threads: with `threads > 1` the playouts run in batches (`batch.rs`): the search thread
//! selects several paths at once, spread by virtual losses, all threads do the leaves' pure
//! work (terminal checks, quiescence, move generation, priors, proofs of new children), and
//! the search thread applies the results in order. Every tree change above (solver, backups,
//! pruning, reuse) stays on the search thread.
//!
//! Files: this one holds the engine and its search loop; `arena.rs` the tree kept between
//! searches and pruned when full, `playout.rs` one playout (selection, backup, proofs),
//! `leaf.rs` a leaf's first visit (terminal checks, quiescence), `expand.rs` the children and
//! their priors, `stop.rs` the solver's and the clock's stops, `root.rs` the move chosen and
//! the lines reported, `batch.rs` the batched playouts of `threads > 1` and `pool.rs` the
//! threads that do their jobs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use atomic_chess::{Game, Move, Position};

mod arena;
mod batch;
mod expand;
mod leaf;
mod playout;
mod pool;
mod root;
mod stop;

use super::engine::{Engine, Limits, SearchConfig, SearchInfo, SearchResult, SearchStats};
use super::eval::{self, Evaluator, QStats};
use super::policy;
use super::tree::{Node, NodeId, Proof, ROOT, Tree};

/// Interval between periodic `info` reports.
const INFO_INTERVAL: Duration = Duration::from_secs(1);
/// How long an infinite search with a full tree sleeps between looks at its stop flag.
const FULL_TREE_NAP: Duration = Duration::from_micros(200);
/// The clock is read once per this many playouts.
const TIME_CHECK_INTERVAL: u64 = 16;

/// The Monte-Carlo tree search. Holds the tree between searches, so the subtree of the moves
/// actually played is reused.
pub struct Mcts {
    config: SearchConfig,
    tree: Tree,
    /// The position at the tree's root, if the tree holds a search.
    root_pos: Option<Position>,
    /// Lines reported at the end of the current search (MultiPV).
    lines: usize,
    stats: SearchStats,
    qstats: QStats,
    /// The leaves' evaluation (with the search thread's accumulators for a network).
    evaluator: Evaluator,
    /// The tree ran out of memory during this search.
    full: bool,
    /// Pruning cannot make room in this search (a tiny `Hash`).
    unprunable: bool,
    // Scratch buffers, kept to avoid allocations in the playout loop.
    path: Vec<NodeId>,
    keys: Vec<u64>,
    priors: policy::Priors,
    /// Scratch list of a node's child moves, for `refine_priors`.
    refine_moves: Vec<Move>,
    children: Vec<Node>,
    /// Scratch state of batched playouts (`threads > 1`).
    batch: batch::Batch,
}

impl Engine for Mcts {
    fn set_config(&mut self, config: &SearchConfig) {
        self.resize_for(config);
    }

    fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        lines: usize,
        random: Option<u64>,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        self.lines = lines.max(1);
        self.run_search(game, limits, stop, random, on_info)
    }

    fn clear(&mut self) {
        self.forget();
    }

    fn stats(&self) -> SearchStats {
        self.stats
    }
}

impl Mcts {
    /// A search with an empty tree.
    pub fn new(config: &SearchConfig) -> Mcts {
        Mcts {
            tree: Tree::new(config.hash_mb),
            config: config.clone(),
            root_pos: None,
            lines: 1,
            stats: SearchStats::default(),
            qstats: QStats::default(),
            evaluator: Evaluator::new(config.network.as_ref()),
            full: false,
            unprunable: false,
            path: Vec::new(),
            keys: Vec::new(),
            priors: policy::Priors::default(),
            refine_moves: Vec::new(),
            children: Vec::new(),
            batch: batch::Batch::default(),
        }
    }

    /// Changes the configuration. A new `hash_mb` drops the tree.
    fn resize_for(&mut self, config: &SearchConfig) {
        if config.hash_mb != self.config.hash_mb {
            self.tree.resize(config.hash_mb);
            self.root_pos = None;
        }
        self.config = config.clone();
        if !self.evaluator.is_for(config.network.as_ref()) {
            self.evaluator = Evaluator::new(config.network.as_ref());
        }
    }

    /// Forgets the tree (a new game).
    fn forget(&mut self) {
        self.tree.clear();
        self.root_pos = None;
    }

    /// Searches the game's current position. Blocking; returns when a limit is hit, `stop`
    /// becomes true, or (unless `limits.infinite`) the root is proven or, under a clock, has a
    /// single move ([`Limits::plays_a_single_move_at_once`]).
    /// `random` picks the move among near-equal ones (randomised openings).
    fn run_search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        random: Option<u64>,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let start = Instant::now();
        let root_pos = *game.position();
        self.stats = SearchStats::default();
        self.qstats = QStats::default();
        self.full = false;
        self.unprunable = false;
        self.prepare_root(game);
        self.stats.reused = u64::from(self.tree.get(ROOT).visits);

        // Repetition keys: the game's reversible history, then the root, then the path.
        self.keys.clear();
        self.keys.extend_from_slice(game.history_keys());
        if self.keys.last() != Some(&root_pos.zobrist()) {
            self.keys.push(root_pos.zobrist());
        }
        let base_keys = self.keys.len();

        let root_moves = root_pos.legal_moves();
        if root_moves.is_empty() {
            let proof =
                if root_pos.is_check() || root_pos.board().king_of(root_pos.turn()).is_none() {
                    Proof::Loss(0)
                } else {
                    Proof::Draw
                };
            self.tree.get_mut(ROOT).proof = proof;
            return self.finish(start, on_info, None);
        }
        // The searcher gives a restricted search a fresh tree and forgets it afterwards.
        let root_moves = limits.root_moves(&root_moves);
        if !self.tree.get(ROOT).is_expanded() {
            let value = 1.0
                - eval::win_probability(
                    eval::qsearch_root_with(
                        &root_pos,
                        &root_moves,
                        &self.config.params,
                        &mut self.qstats,
                        &mut self.evaluator,
                    ),
                    self.config.params.eval_scale,
                );
            let root = self.tree.get_mut(ROOT);
            *root = Node::new(None, 1.0);
            root.visits = 1;
            root.q = value;
            // The root always fits: a fresh or at most half-full arena has room for 256 nodes.
            self.expand(ROOT, &root_pos, &root_moves);
        }
        self.refresh(ROOT);

        let single = root_moves.len() == 1 && limits.plays_a_single_move_at_once();
        let threads = self.config.threads.max(1);
        if threads == 1 {
            self.run(
                &root_pos, base_keys, limits, stop, on_info, start, single, None,
            );
        } else {
            let pool = pool::Pool::new(
                self.config.params.clone(),
                threads,
                self.config.network.clone(),
            );
            std::thread::scope(|scope| {
                let workers = (1..threads)
                    .map(|_| scope.spawn(|| pool.serve()).thread().clone())
                    .collect();
                // Dropping the crew (also on a panic) lets the workers go.
                let mut crew = pool::Crew::new(&pool, workers);
                self.run(
                    &root_pos,
                    base_keys,
                    limits,
                    stop,
                    on_info,
                    start,
                    single,
                    Some(&mut crew),
                );
            });
            self.qstats.nodes += pool.quiescence_nodes();
        }
        self.finish(start, on_info, random)
    }

    /// The playout loop of [`Mcts::run_search`]: one playout at a time, or with a crew of
    /// worker threads, one batch of playouts at a time (`batch.rs`).
    #[expect(
        clippy::too_many_arguments,
        reason = "the state of one search, passed once"
    )]
    fn run(
        &mut self,
        root_pos: &Position,
        base_keys: usize,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo),
        start: Instant,
        single: bool,
        mut crew: Option<&mut pool::Crew>,
    ) {
        let mut last_info = start;
        let mut watch = stop::Watch::default();
        let mut proven_at = None;
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if self.full && self.make_room(limits, start, stop) {
                self.full = false;
            }
            if !limits.infinite && (single || self.full || self.root_settled(&mut proven_at)) {
                break;
            }
            if limits.nodes.is_some_and(|n| self.stats.playouts >= n) {
                break;
            }
            if let Some(mate) = limits.mate
                && let Proof::Win(d) = self.tree.get(ROOT).proof
                && u32::from(d).div_ceil(2) <= mate
            {
                break;
            }
            if let Some(depth) = limits.depth
                && self.stats.playouts > 0
                && self.stats.depth_sum / self.stats.playouts >= u64::from(depth)
            {
                break;
            }
            // Not before the first playouts: a root preparation that used up a tiny budget
            // must still leave a searched move, not an unvisited (arbitrary) one. A batch is
            // a few dozen playouts: the clock is read after each.
            if self.stats.playouts > 0
                && (crew.is_some() || self.stats.playouts.is_multiple_of(TIME_CHECK_INTERVAL))
            {
                let now = Instant::now();
                if !limits.infinite
                    && self.out_of_time(limits, now.duration_since(start), &mut watch)
                {
                    break;
                }
                if now.duration_since(last_info) >= INFO_INTERVAL {
                    last_info = now;
                    let info = self.line_info(start, self.best_child(ROOT, None), 1);
                    on_info(&info);
                }
            }
            if self.full {
                // Only reached when infinite: nothing more to learn, wait for `stop` without
                // burning the CPU. A short nap: the flag is polled, so the nap is the latency.
                std::thread::sleep(FULL_TREE_NAP);
                continue;
            }
            match crew.as_deref_mut() {
                None => self.playout(root_pos, base_keys),
                Some(crew) => {
                    // Never past a node limit.
                    let left = limits.nodes.map_or(u64::MAX, |n| n - self.stats.playouts);
                    let size = crew
                        .batch_size()
                        .min(usize::try_from(left).unwrap_or(usize::MAX));
                    self.batch(root_pos, base_keys, crew, size);
                }
            }
        }
        self.flush_refines();
    }
}

#[cfg(test)]
mod tests {
    use atomic_chess::{Game, Position};

    use super::*;
    use crate::search::engine::Algorithm;

    /// Over a long game the tree stays within `Hash`: the searches reuse the subtree of the
    /// moves played and fill the arena (a 1 MiB tree holds about 29 000 nodes), and between
    /// searches the arena never holds more than `Hash` MiB, reserved or used.
    #[test]
    fn the_tree_stays_within_hash_across_a_long_game() {
        let config = SearchConfig {
            hash_mb: 1,
            algorithm: Algorithm::Mcts,
            ..SearchConfig::default()
        };
        let mut mcts = Mcts::new(&config);
        let mut game = Game::new(Position::startpos());
        let limits = Limits {
            nodes: Some(2_000),
            ..Limits::default()
        };
        let stop = AtomicBool::new(false);
        let (mut plies, mut reused, mut filled) = (0, 0, 0);
        while plies < 120 && game.outcome().is_none() {
            let r = mcts.search(&game, &limits, &stop, 1, None, &mut |_| {});
            assert!(
                mcts.tree.reserved_bytes() <= 1 << 20,
                "ply {plies}: {} bytes",
                mcts.tree.reserved_bytes()
            );
            assert!(mcts.tree.len() <= mcts.tree.capacity());
            reused += u64::from(mcts.stats.reused > 0);
            filled += u64::from(mcts.tree.permille_full() > 500 || mcts.stats.prunes > 0);
            game.play(r.best_move.expect("a move in an unfinished game"))
                .expect("a legal move");
            plies += 1;
        }
        assert!(plies >= 40, "the game lasted {plies} plies only");
        assert!(
            reused > plies / 2,
            "{reused} of {plies} searches reused a subtree"
        );
        assert!(
            filled > 0,
            "no search came near a full tree: the test checks nothing"
        );
    }
}
