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

    /// Changes the configuration. A new `hash_mb` or new parameters drop what was learnt.
    pub fn set_config(&mut self, config: SearchConfig) {
        if let Some(mcts) = self.mcts.as_mut() {
            mcts.set_config(&config);
        }
        if let Some(alphabeta) = self.alphabeta.as_mut() {
            alphabeta.set_config(&config);
        }
        if config.params != self.config.params {
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

    /// Searches the game's current position. Blocking; returns when a limit is hit, `stop`
    /// becomes true, or (unless `limits.infinite`) the root is proven or has a single move.
    pub fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let random = self.randomizes(game.position()).then(|| self.next_random());
        let lines = self.multipv;
        let config = &self.config;
        let engine: &mut dyn Engine = match config.algorithm {
            Algorithm::Mcts => self.mcts.get_or_insert_with(|| Mcts::new(config)),
            Algorithm::AlphaBeta => self.alphabeta.get_or_insert_with(|| AlphaBeta::new(config)),
        };
        let result = engine.search(game, limits, stop, lines, random, on_info);
        self.stats = engine.stats();
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
