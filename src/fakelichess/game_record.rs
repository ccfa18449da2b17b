//! A game as the server keeps it ([`GameRec`]): players, clock, moves, offers, chat and the
//! game streams that follow it, with the accessors that need nothing else. Its rules are in
//! `games.rs`, its clock in `clock.rs`, its documents in `json.rs`.

use std::time::Duration;

use atomic_chess::{Color, Game, Position};
use tokio::time::Instant;

use super::conn::Conn;

/// A game as the server keeps it, with its subscribed game streams.
pub(super) struct GameRec {
    pub(super) id: String,
    pub(super) white: String,
    pub(super) black: String,
    pub(super) rated: bool,
    pub(super) clock: Option<(i64, i64)>,
    /// Correspondence days per turn: the side to move has that long from the last move
    /// (lichess's correspondence clock), `wtime`/`btime` holding the full turn.
    pub(super) days: Option<u32>,
    /// Time that passed on the turn besides `last_change.elapsed()`, so tests can let days go
    /// by without waiting (`FakeLichess::pass_time`); zeroed by every move.
    pub(super) passed_ms: i64,
    pub(super) speed: String,
    /// Variant key of the challenge (the fake always applies atomic rules; a client sees the
    /// key, so tests can check what a bot does with a game of another variant).
    pub(super) variant: String,
    pub(super) created_at: i64,
    /// The starting position (`initialFen`), which takebacks replay from.
    pub(super) start: Position,
    /// `startpos` or the FEN the game started from, as `gameFull.initialFen` reports it.
    pub(super) initial_fen: String,
    pub(super) moves: Vec<String>,
    pub(super) game: Game,
    pub(super) status: String,
    pub(super) winner: Option<Color>,
    pub(super) wtime: i64,
    pub(super) btime: i64,
    pub(super) inc: i64,
    pub(super) last_change: Instant,
    /// lichess's first-move deadline (for `gameState.expiration`).
    pub(super) first_move: Duration,
    pub(super) draw_offer: Option<Color>,
    pub(super) takeback_offer: Option<Color>,
    pub(super) gone: Option<(String, Instant)>,
    pub(super) subs: Vec<Conn>,
    pub(super) chat: Vec<(String, String)>,
}

impl GameRec {
    pub(super) fn color_of(&self, user: &str) -> Option<Color> {
        if self.white == user {
            Some(Color::White)
        } else if self.black == user {
            Some(Color::Black)
        } else {
            None
        }
    }

    pub(super) fn player(&self, c: Color) -> &str {
        match c {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    pub(super) fn is_over(&self) -> bool {
        self.status != "started"
    }

    pub(super) fn broadcast(&mut self, line: &str) {
        self.subs.retain(|c| c.send(line));
    }
}
