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

mod alphabeta;
pub mod blast;
mod engine;
pub mod eval;
pub mod eval_weights;
pub mod features;
mod mcts;
pub mod params;
pub mod policy;
pub mod policy_features;
pub mod policy_weights;
mod searcher;
pub mod time;
mod tree;

pub use engine::{
    Algorithm, Limits, Proven, Score, SearchConfig, SearchInfo, SearchResult, SearchStats,
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
