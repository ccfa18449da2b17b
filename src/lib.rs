//! atomic-bot: an Atomic chess engine and lichess bot.

pub mod config;
pub mod fakelichess;
pub mod heartbeat;
pub mod hosting;
pub mod lichess;
pub mod metrics;
pub mod telemetry;
