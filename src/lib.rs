//! atomic-bot: an Atomic chess engine and lichess bot.
//!
//! Layers point one way: the rules (`atomic_chess`) ← [`search`] ← [`uci`] (and the lichess
//! client) ← `main`.

pub mod search;
pub mod uci;
