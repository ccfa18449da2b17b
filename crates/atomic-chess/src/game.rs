//! A game record: the start position, the moves, and the Zobrist keys needed for
//! threefold repetition.

use crate::error::{GameError, PlayError, UciError};
use crate::moves::Move;
use crate::outcome::{Outcome, Termination};
use crate::position::Position;

/// A game from a start position, with its history.
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    position: Position,
    moves: Vec<Move>,
    /// Keys of every position since the start, current one last.
    keys: Vec<u64>,
    /// Index into `keys` of the first position after the last irreversible move
    /// (pawn move, capture, promotion or castling): earlier positions cannot recur.
    reversible_from: usize,
}

impl Game {
    /// A game starting at `start` with no moves yet.
    pub fn new(start: Position) -> Game {
        Game {
            start,
            position: start,
            moves: Vec::new(),
            keys: vec![start.zobrist()],
            reversible_from: 0,
        }
    }

    /// Replays UCI moves from `start`; the error names the 1-based ply and the move.
    pub fn from_uci_moves<S: AsRef<str>>(start: Position, moves: &[S]) -> Result<Game, GameError> {
        let mut game = Game::new(start);
        for (i, uci) in moves.iter().enumerate() {
            let uci = uci.as_ref();
            game.push_uci(uci).map_err(|source| GameError {
                ply: i + 1,
                uci: uci.chars().take(16).collect(),
                source,
            })?;
        }
        Ok(game)
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The start position.
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// The moves played so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Plays a move after checking that it is legal.
    pub fn play(&mut self, m: Move) -> Result<(), PlayError> {
        let next = self.position.play(m)?;
        self.push_trusted(m, next);
        Ok(())
    }

    /// Parses a UCI move (both castling spellings), checks it and plays it.
    pub fn push_uci(&mut self, uci: &str) -> Result<Move, UciError> {
        let m = self.position.parse_uci(uci)?;
        let mut next = self.position;
        next.play_unchecked(m);
        self.push_trusted(m, next);
        Ok(m)
    }

    fn push_trusted(&mut self, m: Move, next: Position) {
        if m.is_capture() || m.is_castle() || m.role() == crate::Role::Pawn {
            self.reversible_from = self.keys.len();
        }
        self.position = next;
        self.moves.push(m);
        self.keys.push(next.zobrist());
    }

    /// How often the current position has occurred, this time included.
    pub fn repetitions(&self) -> usize {
        let now = self.position.zobrist();
        self.history_keys().iter().filter(|&&k| k == now).count()
    }

    /// Zobrist keys since the last irreversible move, the current position last.
    pub fn history_keys(&self) -> &[u64] {
        &self.keys[self.reversible_from..]
    }

    /// The position's outcome (lichess order), then threefold repetition, which lichess
    /// applies automatically under its default auto-claim setting.
    pub fn outcome(&self) -> Option<Outcome> {
        self.position.outcome().or_else(|| {
            (self.repetitions() >= 3).then_some(Outcome {
                winner: None,
                termination: Termination::ThreefoldRepetition,
            })
        })
    }
}
