//! The one search interface: a [`Searcher`] runs the search its [`SearchConfig`] names, and
//! every search, whichever engine ran it, answers with the same [`SearchResult`] and
//! [`SearchStats`].
//!
//! The two engines are peers beneath it: `alphabeta` (iterative-deepening principal variation
//! search, the default) and `mcts` (PUCT Monte-Carlo tree search with a solver). Each keeps its
//! memory (transposition table or tree) between searches, made on first use, so a searcher
//! configured for one never pays for the other. What both share lives here: the choice of a
//! random opening move, the MultiPV count, and the assembly of results and reports.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use atomic_chess::{Color, Game, Move, Position};

use super::alphabeta::AlphaBeta;
use super::mcts::Mcts;
use super::params::SearchParams;

/// Which search a [`Searcher`] runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Algorithm {
    /// Iterative-deepening alpha-beta ([`alphabeta`]).
    #[default]
    AlphaBeta,
    /// The PUCT Monte-Carlo tree search with its solver.
    Mcts,
}

impl Algorithm {
    /// The UCI / configuration name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::AlphaBeta => "alphabeta",
            Algorithm::Mcts => "mcts",
        }
    }

    /// Parses a name (case-insensitive).
    pub fn parse(name: &str) -> Option<Algorithm> {
        match name.trim().to_ascii_lowercase().as_str() {
            "alphabeta" => Some(Algorithm::AlphaBeta),
            "mcts" => Some(Algorithm::Mcts),
            _ => None,
        }
    }
}

/// Everything that configures a [`Searcher`].
#[derive(Clone, Debug)]
pub struct SearchConfig {
    /// The search to run.
    pub algorithm: Algorithm,
    /// Tree (or transposition table) memory cap in MiB (the UCI `Hash` option).
    pub hash_mb: usize,
    /// Search threads. 1: one playout at a time on the calling thread. More: batched leaf
    /// parallelism (`mcts/batch.rs`): the calling thread selects batches of 8 playouts per
    /// thread with virtual losses and applies them, and every thread shares the leaf work
    /// (evaluations, expansions, refined priors). The tree is only ever changed by the calling
    /// thread; a fixed thread count, seed and node limit still give a deterministic search.
    pub threads: usize,
    /// Seed of the random choices (only used when `randomize` is on).
    pub seed: u64,
    /// Pick among near-equal moves at random in the opening, so that the bot cannot be farmed
    /// with one repeated line. Off in tests.
    pub randomize: bool,
    /// Tunable parameters.
    pub params: SearchParams,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            algorithm: Algorithm::default(),
            hash_mb: 128,
            threads: 1,
            seed: 0,
            randomize: false,
            params: SearchParams::default(),
        }
    }
}

/// What to stop on. All optional; a search with none runs until `stop` is set (or the root is
/// proven, or the tree is full).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// May stop after this when the best move is stable.
    pub soft: Option<Duration>,
    /// Never exceed.
    pub hard: Option<Duration>,
    /// Playouts (the `nodes` of `info` lines).
    pub nodes: Option<u64>,
    /// Average selection depth.
    pub depth: Option<u32>,
    /// Stop once a win in at most this many moves is proven.
    pub mate: Option<u32>,
    /// Ignore soft/hard, proofs and a full tree until stopped (ponder / infinite).
    pub infinite: bool,
}

/// A score from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Positive: we win in N moves; negative: we lose in N moves.
    Mate(i32),
}

/// Progress of a search (an `info` line).
#[derive(Clone, Debug)]
pub struct SearchInfo {
    /// Average depth of the playouts.
    pub depth: u32,
    /// Maximum depth of the playouts.
    pub seldepth: u32,
    /// Playouts so far.
    pub nodes: u64,
    /// Playouts per second.
    pub nps: u64,
    /// Time since the search started.
    pub time: Duration,
    /// Score of this line.
    pub score: Score,
    /// Win/draw/loss per mille.
    pub wdl: (u32, u32, u32),
    /// Principal variation.
    pub pv: Vec<Move>,
    /// Permille of the tree memory in use.
    pub hashfull: u32,
    /// 1-based index of this line (MultiPV).
    pub multipv: u32,
}

/// What a search returns.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// `None` only if there is no legal move.
    pub best_move: Option<Move>,
    /// The expected reply, if the tree has one.
    pub ponder_move: Option<Move>,
    /// Final information (score, pv, nodes ...).
    pub info: SearchInfo,
    /// 0..1 from the side to move's point of view (for draw offers).
    pub win_probability: f32,
    /// Set if the solver proved the root.
    pub proven: Option<Proven>,
}

/// A result proven by the solver, from the side to move's point of view. Distances count our
/// own moves, as in `score mate N` (a king-exploding capture available now is `Win(1)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proven {
    /// We win with our N-th move from now.
    Win(u32),
    /// We lose after N moves of ours (`Loss(1)`: whatever we play, the opponent wins next).
    Loss(u32),
    /// Draw.
    Draw,
}

impl Proven {
    /// The exact win probability of a proven result (1, 0 or ½).
    pub fn win_probability(self) -> f32 {
        match self {
            Proven::Win(_) => 1.0,
            Proven::Loss(_) => 0.0,
            Proven::Draw => 0.5,
        }
    }
}

impl SearchInfo {
    /// Playouts or nodes per second after `nodes` in `time`.
    pub(crate) fn rate(nodes: u64, time: Duration) -> u64 {
        (u128::from(nodes) * 1_000_000 / time.as_micros().max(1)) as u64
    }

    /// A win/draw/loss split of a win probability (per mille, no draws: the evaluation does
    /// not predict them).
    pub(crate) fn wdl(probability: f32) -> (u32, u32, u32) {
        let win = ((probability.clamp(0.0, 1.0) * 1000.0).round() as u32).min(1000);
        (win, 0, 1000 - win)
    }
}

impl SearchResult {
    /// The result of a search: the win probability is the proof's when there is one (exact),
    /// `estimate` otherwise.
    pub(crate) fn new(
        best_move: Option<Move>,
        ponder_move: Option<Move>,
        info: SearchInfo,
        proven: Option<Proven>,
        estimate: f32,
    ) -> SearchResult {
        SearchResult {
            best_move,
            ponder_move,
            info,
            win_probability: proven.map_or(estimate, Proven::win_probability),
            proven,
        }
    }
}

/// Counters of the last search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Playouts (the `nodes` of `info`; alpha-beta: its nodes).
    pub playouts: u64,
    /// Positions visited: tree expansions, leaf evaluations and quiescence nodes (alpha-beta:
    /// its tree and quiescence nodes). A signature of the search's behaviour (`atomic-bot
    /// bench` prints it).
    pub positions: u64,
    /// Sum of the playouts' depths (MCTS only).
    pub depth_sum: u64,
    /// Deepest playout (alpha-beta: the selective depth).
    pub max_depth: u32,
    /// Playouts the root already had from earlier searches (MCTS tree reuse).
    pub reused: u64,
    /// Times the full tree was pruned to make room (MCTS only).
    pub prunes: u64,
}

/// What the [`Searcher`] asks of an engine.
pub(super) trait Engine {
    /// Takes a new configuration (the searcher has already cleared the engine if the
    /// parameters changed).
    fn set_config(&mut self, config: &SearchConfig);

    /// Searches the game's position: `lines` is the MultiPV, `random` (a random number) asks
    /// for a random pick among near-equal moves.
    fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        lines: usize,
        random: Option<u64>,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult;

    /// Forgets everything learnt (a new game).
    fn clear(&mut self);

    /// Counters of the last search.
    fn stats(&self) -> SearchStats;
}

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
