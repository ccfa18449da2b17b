//! The one search interface: a [`Searcher`] runs the search its [`SearchConfig`] names, and
//! every search, whichever engine ran it, answers with the same [`SearchResult`] and
//! [`SearchStats`].
//!
//! The two engines are peers beneath it: `alphabeta` (iterative-deepening principal variation
//! search, the default) and `mcts` (PUCT Monte-Carlo tree search with a solver), both
//! implementing [`Engine`] (in `engine`, with the types they share). Each keeps its memory
//! (transposition table or tree) between searches and is made on first use, so a searcher
//! configured for one never pays for the other. What is left to the searcher is what both
//! share: the random numbers of randomised openings, the MultiPV count and the counters.

use std::sync::atomic::AtomicBool;

use atomic_chess::{Color, Game, Position};

use super::alphabeta::AlphaBeta;
use super::engine::{
    Algorithm, Engine, Limits, SearchConfig, SearchInfo, SearchResult, SearchStats,
};
use super::mcts::Mcts;

/// Runs searches with the configured engine and keeps its memory between them, so the work
/// on the moves actually played is reused.
pub struct Searcher {
    config: SearchConfig,
    /// Lines reported at the end of a search (UCI `MultiPV`).
    multipv: usize,
    /// State of the random numbers of randomised openings (SplitMix64).
    rng: u64,
    stats: SearchStats,
    /// The engine of [`Algorithm::Mcts`], made on first use.
    mcts: Option<Mcts>,
    /// The engine of [`Algorithm::AlphaBeta`], made on first use.
    alphabeta: Option<AlphaBeta>,
}

impl Searcher {
    /// A searcher with empty memory.
    pub fn new(config: SearchConfig) -> Searcher {
        Searcher {
            rng: config.seed,
            config,
            multipv: 1,
            stats: SearchStats::default(),
            mcts: None,
            alphabeta: None,
        }
    }

    /// Changes the configuration. A new `hash_mb`, new parameters or another evaluation drop
    /// what was learnt (the table keeps evaluations, the corrections fit them).
    pub fn set_config(&mut self, config: SearchConfig) {
        let same_evaluation = config.same_evaluation(&self.config);
        if let Some(mcts) = self.mcts.as_mut() {
            mcts.set_config(&config);
        }
        if let Some(alphabeta) = self.alphabeta.as_mut() {
            alphabeta.set_config(&config);
        }
        if config.params != self.config.params || !same_evaluation {
            self.clear();
        }
        if config.seed != self.config.seed {
            self.rng = config.seed;
        }
        self.config = config;
    }

    /// The current configuration.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// Number of lines reported at the end of a search (UCI `MultiPV`).
    pub fn set_multipv(&mut self, lines: usize) {
        self.multipv = lines.max(1);
    }

    /// Forgets what was learnt (a new game) and restarts the random numbers from the seed.
    pub fn clear(&mut self) {
        if let Some(mcts) = self.mcts.as_mut() {
            mcts.clear();
        }
        if let Some(alphabeta) = self.alphabeta.as_mut() {
            alphabeta.clear();
        }
        self.rng = self.config.seed;
    }

    /// Counters of the last search.
    pub fn stats(&self) -> SearchStats {
        self.stats
    }

    /// Playouts the root already had when the last search started (MCTS tree reuse).
    pub fn reused_playouts(&self) -> u64 {
        self.stats.reused
    }

    /// Makes the configured search's engine if it does not exist yet and readies its memory
    /// (the alpha-beta table's pages), so that the next search does not wait for either. The UCI
    /// front calls it between searches (`isready`, `ucinewgame`).
    pub fn prepare(&mut self) {
        self.engine().prepare();
    }

    /// The configured search's engine, made if it does not exist yet.
    fn engine(&mut self) -> &mut dyn Engine {
        let config = &self.config;
        match config.algorithm {
            Algorithm::Mcts => self.mcts.get_or_insert_with(|| Mcts::new(config)),
            Algorithm::AlphaBeta => self.alphabeta.get_or_insert_with(|| AlphaBeta::new(config)),
        }
    }

    /// Searches the game's current position. Blocking; returns when a limit is hit, `stop`
    /// becomes true, or (unless `limits.infinite`) the root is proven or, under a clock, has a
    /// single move ([`Limits::plays_a_single_move_at_once`]).
    pub fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let random = self.randomizes(game.position()).then(|| self.next_random());
        let lines = self.multipv;
        // An MCTS root expanded over some moves only must neither be reused nor reuse a tree
        // grown over all of them: a restricted search starts and leaves the tree empty.
        let fresh_tree = self.config.algorithm == Algorithm::Mcts && !limits.searchmoves.is_empty();
        let engine = self.engine();
        if fresh_tree {
            engine.clear();
        }
        let result = engine.search(game, limits, stop, lines, random, on_info);
        let stats = engine.stats();
        if fresh_tree {
            engine.clear();
        }
        self.stats = stats;
        result
    }

    /// Whether the move from `pos` is picked at random among near-equal ones (`Randomize`, in
    /// the first `RandomPlies` plies of the game), whichever the search.
    fn randomizes(&self, pos: &Position) -> bool {
        let ply =
            (pos.fullmove_number().saturating_sub(1)) * 2 + u32::from(pos.turn() == Color::Black);
        self.config.randomize && ply < self.config.params.random_plies
    }

    fn next_random(&mut self) -> u64 {
        // SplitMix64: tiny, seedable, good enough for picking among a few moves.
        self.rng = self.rng.wrapping_add(super::GOLDEN_GAMMA);
        super::mix64(self.rng)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use atomic_chess::{Move, Role, Square};

    use super::*;
    use crate::search::nnue::Network;

    /// Positions with tactics on the board: an opening, a middlegame with captures about, an
    /// ending with promotions near.
    const FENS: &[&str] = &[
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rn2k2r/pp5p/2p3pn/1B1p4/Pb1PPp2/2N5/1PP3PP/R1B1K2R w KQkq - 0 14",
        "8/2P3k1/8/8/3n4/8/5pK1/8 b - - 0 1",
    ];

    #[test]
    fn both_engines_search_with_a_random_network_on_one_and_two_threads() {
        let network = Arc::new(Network::random(64, 4, 17));
        for algorithm in [Algorithm::AlphaBeta, Algorithm::Mcts] {
            for threads in [1, 2] {
                let config = SearchConfig {
                    algorithm,
                    hash_mb: 8,
                    threads,
                    network: Some(Arc::clone(&network)),
                    ..SearchConfig::default()
                };
                let mut searcher = Searcher::new(config);
                for fen in FENS {
                    let pos = Position::from_fen(fen).expect("fen");
                    let limits = Limits {
                        nodes: Some(3000),
                        ..Limits::default()
                    };
                    let result = searcher.search(
                        &Game::new(pos),
                        &limits,
                        &AtomicBool::new(false),
                        &mut |_| {},
                    );
                    let mv = result.best_move.expect("a move");
                    assert!(
                        pos.is_legal(mv),
                        "{mv} in {fen} ({algorithm:?}, {threads} threads)"
                    );
                    assert!(searcher.stats().positions > 100);
                }
            }
        }
        // The network is shared, never copied: the test's handle and the searchers' (dropped).
        assert_eq!(Arc::strong_count(&network), 1);
    }

    #[test]
    fn searchmoves_restricts_the_root_of_both_engines_and_leaves_no_restricted_tree() {
        // In the middlegame, h2h3 and g2g4 are nobody's best move; the illegal e1e5 is ignored.
        let pos = Position::from_fen(FENS[1]).expect("fen");
        let game = Game::new(pos);
        let only: Vec<Move> = ["h2h3", "g2g4"]
            .iter()
            .map(|m| pos.parse_uci(m).expect("legal"))
            .collect();
        let illegal = Move::normal(Role::King, Square::E1, Square::E5, false, None);
        for algorithm in [Algorithm::AlphaBeta, Algorithm::Mcts] {
            let mut searcher = Searcher::new(SearchConfig {
                algorithm,
                hash_mb: 8,
                ..SearchConfig::default()
            });
            let free = Limits {
                nodes: Some(4000),
                ..Limits::default()
            };
            let best = |searcher: &mut Searcher, limits: &Limits| {
                let result = searcher.search(&game, limits, &AtomicBool::new(false), &mut |_| {});
                result.best_move.expect("a move")
            };
            let unrestricted = best(&mut searcher, &free);
            assert!(
                !only.contains(&unrestricted),
                "{algorithm:?}: {unrestricted}"
            );
            let mut searchmoves = only.clone();
            searchmoves.push(illegal);
            let restricted = Limits {
                searchmoves,
                ..free.clone()
            };
            let mv = best(&mut searcher, &restricted);
            assert!(only.contains(&mv), "{algorithm:?}: {mv}");
            // The next, free search of the same position reuses no MCTS tree grown over two
            // moves: it is the first search again. (Alpha-beta keeps its table, which may
            // change a 4 000-node search: cleared here.)
            if algorithm == Algorithm::AlphaBeta {
                searcher.clear();
            }
            assert_eq!(best(&mut searcher, &free), unrestricted, "{algorithm:?}");
            // Nothing legal among searchmoves: every move.
            let none_legal = Limits {
                searchmoves: vec![illegal],
                ..free.clone()
            };
            searcher.clear();
            assert_eq!(
                best(&mut searcher, &none_legal),
                unrestricted,
                "{algorithm:?}"
            );
        }
    }

    #[test]
    fn a_network_changes_the_search_and_switching_back_restores_the_linear_one() {
        let pos = Position::from_fen(FENS[1]).expect("fen");
        let limits = Limits {
            depth: Some(5),
            ..Limits::default()
        };
        let run = |searcher: &mut Searcher| {
            searcher.clear();
            searcher.search(
                &Game::new(pos),
                &limits,
                &AtomicBool::new(false),
                &mut |_| {},
            );
            searcher.stats().positions
        };
        let linear = SearchConfig {
            hash_mb: 8,
            ..SearchConfig::default()
        };
        let mut searcher = Searcher::new(linear.clone());
        let before = run(&mut searcher);
        searcher.set_config(SearchConfig {
            network: Some(Arc::new(Network::random(32, 2, 3))),
            ..linear.clone()
        });
        let with_network = run(&mut searcher);
        searcher.set_config(linear);
        assert_eq!(run(&mut searcher), before);
        assert_ne!(
            with_network, before,
            "the network's search is the linear one's"
        );
    }
}
