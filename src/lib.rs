//! atomic-bot: an Atomic chess engine and lichess bot.
//!
//! Layers point one way: the rules (`atomic_chess`) ← [`search`] ← [`uci`] and [`lichess`]
//! (which never import each other) ← `main`. [`config`] and [`fakelichess`] (the local
//! lichess-compatible server used by `atomic-bot demo` and the tests) belong to the bot side.
//! [`arena`] (the bot against any UCI engine on that server), [`balanced`] (the vchess Balanced
//! starts ranked, and played in the demo), [`datagen`] (training positions from self-play) and
//! [`train`] (the evaluation network's trainer) sit on top, beside `main`.

pub mod arena;
pub mod balanced;
pub mod config;
pub mod datagen;
pub mod fakelichess;
pub mod heartbeat;
pub mod hosting;
pub mod lichess;
pub mod metrics;
pub mod search;
pub mod telemetry;
pub mod train;
pub mod uci;
