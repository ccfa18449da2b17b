//! The lichess bot: HTTP client, ND-JSON streams, models, challenge policy, game tasks and the
//! supervisor that ties them together.
//!
//! Layout (data flows top to bottom):
//! - [`supervisor`]: account check, the event stream (watchdog, reconnect, dedup), challenge
//!   decisions, one task per game, shutdown.
//! - [`game`]: one game: its stream, position rebuilt from the move list, the move picker on a
//!   blocking thread, move POST, offers, chat, PGN.
//! - [`clock`]: a game's clock as the input of the one time manager (`search::time`).
//! - [`correspondence`]: correspondence games: think time, check-ins, parked games.
//! - [`challenge`]: the pure accept/decline policy.
//! - [`matchmaking`]: challenging other bots when idle; [`chat_commands`]: `!eval` and friends.
//! - [`online`]: lichess's tablebase, opening explorer and cloud eval, asked before the search.
//! - [`client`] / [`ndjson`] / [`model`] / [`lenient`]: HTTP discipline, line reading, JSON
//!   types and the rules that read them (strict for what the bot needs, lenient otherwise).

pub mod app;
pub mod challenge;
pub mod chat_commands;
pub mod client;
pub mod clock;
pub mod correspondence;
pub mod game;
pub mod lenient;
pub mod matchmaking;
pub mod model;
pub mod ndjson;
pub mod online;
pub mod pgn;
pub mod picker;
pub mod supervisor;
