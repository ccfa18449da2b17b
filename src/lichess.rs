//! The lichess bot.
pub mod chat_commands;
pub mod matchmaking;
