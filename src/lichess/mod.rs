//! The lichess bot: HTTP client, ND-JSON streams, models, challenge policy, game tasks and the
//! supervisor that ties them together.
//!
//! Layout (data flows top to bottom):
//! - [`supervisor`]: account check, the event stream (watchdog, reconnect, dedup), challenge
//!   decisions, one task per game, shutdown.
//! - [`game`]: one game: its stream, position rebuilt from the move list, clock budget, the
//!   move picker on a blocking thread, move POST, offers, chat, PGN.
//! - [`challenge`]: the pure accept/decline policy.
//! - [`matchmaking`]: challenging other bots when idle; [`chat_commands`]: `!eval` and friends.
//! - [`client`] / [`ndjson`] / [`model`]: HTTP discipline, line reading, JSON types.

pub mod app;
pub mod challenge;
pub mod chat_commands;
pub mod client;
pub mod game;
pub mod matchmaking;
pub mod model;
pub mod ndjson;
pub mod pgn;
pub mod picker;
pub mod supervisor;
