//! Shallow searches of positions for another engine: the MCTS values a new leaf by an
//! alpha-beta search a few plies deep (`MctsLeafDepth`) instead of the quiescence search
//! alone (issue 33, "an MCTS over alpha-beta leaves").
//!
//! Each leaf is searched by the same recursion as the alpha-beta engine's (`node.rs`: table
//! cut-offs, pruning, extensions, the corrected evaluation and the quiescence search below),
//! with one [`Worker`] and a transposition table of its own that live as long as the MCTS:
//! the searches of neighbouring leaves share the table, the histories and the correction
//! histories. Nothing is allocated per leaf: the worker's buffers are made once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use atomic_chess::{Move, Position};

use super::table::Table;
use super::{Ctx, Worker};
use crate::search::eval::MATE;
use crate::search::nnue::Network;
use crate::search::params::SearchParams;

/// A shallow alpha-beta search of single positions, its table and its thread's state kept
/// between calls.
pub struct LeafSearch {
    table: Table,
    /// The table's size in MiB.
    hash_mb: usize,
    worker: Worker,
    /// The worker's published node count (its `Ctx` wants one; nothing else reads it).
    total: AtomicU64,
}

impl LeafSearch {
    /// A leaf search with a table of about `hash_mb` MiB, searching with `params` on
    /// `network` (or the linear evaluation).
    pub fn new(hash_mb: usize, params: &SearchParams, network: Option<&Arc<Network>>) -> Self {
        let mut worker = Worker::new(params);
        worker.evaluator = crate::search::eval::Evaluator::new(network);
        LeafSearch {
            table: Table::new(hash_mb),
            hash_mb,
            worker,
            total: AtomicU64::new(0),
        }
    }

    /// The table's size in MiB.
    pub fn hash_mb(&self) -> usize {
        self.hash_mb
    }

    /// Readies the leaf search for the leaves of a new search of the MCTS: new parameters and
    /// evaluation, older table entries give way, killers go and the history fades, counters
    /// start at 0.
    pub fn new_search(&mut self, params: &SearchParams, network: Option<&Arc<Network>>) {
        let worker = &mut self.worker;
        worker.set_params(params);
        if !worker.evaluator.is_for(network) {
            worker.evaluator = crate::search::eval::Evaluator::new(network);
        }
        self.table.new_search();
        worker.ordering.new_search();
        worker.nodes = 0;
        worker.qstats = Default::default();
        worker.published = 0;
        worker.seldepth = 0;
        self.total = AtomicU64::new(0);
    }

    /// Forgets the table and the histories (a new game).
    pub fn clear(&mut self) {
        self.table.clear();
        self.worker.ordering.clear();
        self.worker.correction.clear();
    }

    /// Positions searched since [`LeafSearch::new_search`] (quiescence included).
    pub fn nodes(&self) -> u64 {
        self.worker.nodes()
    }

    /// The best move the table holds for `pos`: what the last search of it (or of a line
    /// through it) found, if its entry is still there.
    pub fn table_move(&self, pos: &Position) -> Option<Move> {
        self.table.probe(pos.zobrist()).and_then(|e| e.mv)
    }

    /// The value of `pos` for its side to move (centipawns; mate scores as the alpha-beta
    /// search's) by a search `depth` plies deep, and the best move it found. `keys` ends with
    /// the repetition keys of the position's line, its own key last. `None` if `stop` was set
    /// during the search (the value would be unfinished).
    pub fn search(
        &mut self,
        pos: &Position,
        keys: &[u64],
        depth: i32,
        stop: &AtomicBool,
    ) -> Option<(i32, Option<Move>)> {
        let worker = &mut self.worker;
        worker.keys.clear();
        worker.keys.extend_from_slice(keys);
        worker.evaluator.reset(pos);
        worker.aborted = false;
        // The stop flag is read every `CHECK_INTERVAL` nodes, which is only possible outside
        // a first iteration.
        worker.first_iteration = false;
        worker.root_depth = depth;
        let ctx = Ctx {
            stop,
            hard: None,
            nodes: None,
            table: &self.table,
            total: &self.total,
        };
        let score = worker.node(&ctx, pos, depth, -MATE, MATE, 0, false, false);
        if worker.aborted {
            return None;
        }
        let best = (worker.pv_len[0] > 0).then_some(worker.pv[0][0]).flatten();
        Some((score, best))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::eval::MATE_BOUND;

    /// A king-exploding capture is found at every depth, and a quiet position gets an
    /// ordinary score with a legal best move; a set stop flag gives no value.
    #[test]
    fn searches_find_wins_and_score_quiet_positions() {
        let params = SearchParams::default();
        let mut search = LeafSearch::new(1, &params, None);
        search.new_search(&params, None);
        let stop = AtomicBool::new(false);
        // Black's knight takes f2 next to the white king (tests/data/tactics.epd, pub-m1-001).
        let win =
            Position::from_fen("1r2k3/6p1/p3pp1r/1p1p3p/3PP1nP/2P2PP1/P1Q2N2/R1B1KB1R b KQ - 1 14")
                .expect("valid FEN");
        for depth in 1..=3 {
            let (score, _) = search
                .search(&win, &[win.zobrist()], depth, &stop)
                .expect("not stopped");
            assert!(score >= MATE_BOUND, "depth {depth}: {score}");
        }
        let quiet = Position::startpos();
        let (score, best) = search
            .search(&quiet, &[quiet.zobrist()], 3, &stop)
            .expect("not stopped");
        assert!(score.abs() < 300, "{score}");
        assert!(quiet.legal_moves().contains(&best.expect("a best move")));
        assert!(search.nodes() > 20);
        let stopped = AtomicBool::new(true);
        // Stopped searches notice only every `CHECK_INTERVAL` nodes: search deep enough.
        assert!(
            search
                .search(&quiet, &[quiet.zobrist()], 8, &stopped)
                .is_none()
        );
    }
}
