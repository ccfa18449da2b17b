//! atomic-bot: an Atomic chess engine and lichess bot.

pub mod config;
pub mod fakelichess;
pub mod lichess;
