//! The search: a PUCT Monte-Carlo tree search for atomic chess with an MCTS solver, and an
//! iterative-deepening alpha-beta search over the same evaluation (the default: it is the
//! stronger at equal time, docs/ENGINE.md "Session 8").
//!
//! Layout:
//! - [`time`]: the pure time manager (clock → soft and hard limits);
//! - [`params`]: every tunable number, also exposed as UCI spin options;
//! - [`eval`]: atomic knowledge (blast balance, static evaluation, quiescence, priors);
//! - `tree`: the node arena;
//! - `mcts`: the [`Searcher`] (selection, expansion, evaluation, backup, solver, root choice),
//!   which hands the search to [`alphabeta`] when [`SearchConfig::algorithm`] says so;
//! - [`alphabeta`]: principal variation search with a transposition table.
//!
//! The lichess bot and the UCI front both drive the search through the types below only
//! (`/work/search-contract.md`). The search knows nothing about either of them.

use std::time::Duration;

use atomic_chess::Move;

pub mod alphabeta;
pub mod eval;
pub mod eval_weights;
pub mod features;
mod mcts;
pub mod params;
pub mod policy;
pub mod policy_weights;
pub mod time;
mod tree;

pub use mcts::{SearchStats, Searcher};
pub use params::SearchParams;

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

/// The SplitMix64 output function (a bijective 64-bit mix): nearby inputs get unrelated
/// outputs. Shared by the seedable random numbers of both searches and the correction keys.
pub(crate) fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The SplitMix64 increment (2⁶⁴ / φ, odd).
pub(crate) const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
