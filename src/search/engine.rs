//! What both engines are given and answer, and the [`Engine`] trait the `Searcher` drives
//! them through: the configuration, the limits, the progress reports and the one result type
//! (with its one assembly), the proven results and the counters.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use atomic_chess::{Game, Move, MoveList};

use super::nnue::Network;
use super::params::SearchParams;

/// Which search a `Searcher` runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Algorithm {
    /// Iterative-deepening alpha-beta (the `alphabeta` engine).
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

/// Everything that configures a `Searcher`.
#[derive(Clone, Debug)]
pub struct SearchConfig {
    /// The search to run.
    pub algorithm: Algorithm,
    /// Tree (or transposition table) memory cap in MiB (the UCI `Hash` option).
    pub hash_mb: usize,
    /// Search threads. 1: the search runs on the calling thread alone. More, for the
    /// alpha-beta search: lazy SMP (`alphabeta/helpers.rs`): helper threads search the same
    /// root over the shared transposition table while the calling thread searches, reports and
    /// decides as with one (not deterministic). For the MCTS: batched leaf
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
    /// The network that evaluates (UCI `EvalFile`, `search.eval_file`), shared by every
    /// thread and game; `None`: the linear evaluation. Default: the embedded network
    /// ([`super::nnue::embedded`]).
    pub network: Option<Arc<Network>>,
}

impl SearchConfig {
    /// Whether `self` and `other` evaluate with the same network (the same loaded one), or
    /// both linearly.
    pub fn same_evaluation(&self, other: &SearchConfig) -> bool {
        match (&self.network, &other.network) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
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
            network: Some(super::nnue::embedded::network()),
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
    /// Search only these root moves (UCI `go searchmoves`; the bot's known tablebase
    /// results). Empty, or none of them legal: every legal move.
    pub searchmoves: Vec<Move>,
}

impl Limits {
    /// The root moves to search: `legal` restricted to [`Limits::searchmoves`]
    /// ([`restrict_root`]).
    pub fn root_moves(&self, legal: &MoveList) -> MoveList {
        restrict_root(legal, &self.searchmoves)
    }

    /// Whether a root with a single move to search is answered at once. Under a clock (a soft
    /// limit) the move is forced and the time is better kept for later; under a fixed budget
    /// (`go nodes`, `depth` or `movetime`: analysis, a match at fixed nodes, `searchmoves` with
    /// one move) the move is searched like any other, so that its score and line mean something.
    pub fn plays_a_single_move_at_once(&self) -> bool {
        !self.infinite && self.soft.is_some()
    }
}

/// `legal` restricted to `only` when any of those is legal, else all of `legal` (an empty or
/// wholly illegal restriction never leaves a position without moves).
pub fn restrict_root(legal: &MoveList, only: &[Move]) -> MoveList {
    let mut moves = legal.clone();
    if legal.iter().any(|m| only.contains(m)) {
        moves.retain(|m| only.contains(m));
    }
    moves
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

/// What the `Searcher` asks of an engine.
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

    /// Readies its memory between searches, so that the next search does not wait for it
    /// (the alpha-beta search commits its transposition table's pages).
    fn prepare(&mut self) {}

    /// Counters of the last search.
    fn stats(&self) -> SearchStats;
}
