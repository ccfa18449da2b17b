//! The search: an iterative-deepening alpha-beta search (the default: the stronger at equal
//! time, docs/ENGINE.md) and a PUCT Monte-Carlo tree search with a solver, over one atomic
//! evaluation, behind one interface.
//!
//! The lichess bot and the UCI front drive it through [`Searcher`] and the types re-exported
//! below only; the search knows nothing about either of them. Layout, each module importing
//! only those listed before it (plus the rules crate):
//! - [`params`]: every tunable number, also exposed as UCI spin options;
//! - [`time`]: the pure time manager (clock → soft and hard limits);
//! - [`blast`]: atomic tactics (blast balance, king-exploding captures, blast threats);
//! - [`features`] and [`eval_weights`]: the static evaluation's features and fitted weights;
//! - [`policy_features`] and [`policy_weights`]: the move priors' features and fitted weights;
//! - [`nnue`]: the learned evaluation (network files, accumulators, SIMD kernels);
//! - [`eval`]: the static evaluation, win probabilities and the quiescence search;
//! - [`policy`]: the move priors (softmax of the fitted logits);
//! - `engine`: what an engine is given and answers ([`SearchConfig`], [`Limits`],
//!   [`SearchInfo`], [`SearchResult`], [`Proven`], [`SearchStats`]) and the `Engine` trait;
//! - `alphabeta`: principal variation search with a transposition table, move ordering and
//!   correction histories; `mcts` (with `tree`, the node arena): selection, expansion,
//!   evaluation, backup, the solver and batched leaf parallelism;
//! - `searcher`: the [`Searcher`], which runs the engine [`SearchConfig::algorithm`] names.

mod alphabeta;
pub mod blast;
mod engine;
pub mod eval;
pub mod eval_weights;
pub mod features;
mod mcts;
pub mod nnue;
pub mod params;
pub mod policy;
pub mod policy_features;
pub mod policy_weights;
mod repetition;
mod searcher;
pub mod time;
mod tree;

pub use engine::{
    Algorithm, Limits, Proven, Score, SearchConfig, SearchInfo, SearchResult, SearchStats,
    restrict_root,
};
pub use params::SearchParams;
pub use searcher::Searcher;

/// The SplitMix64 output function (a bijective 64-bit mix): nearby inputs get unrelated
/// outputs. Shared by the seedable random numbers of both searches and the correction keys.
pub(crate) fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The SplitMix64 increment (2⁶⁴ / φ, odd).
pub(crate) const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
