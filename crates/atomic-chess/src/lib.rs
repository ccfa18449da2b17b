//! Atomic chess rules exactly as lichess plays them.
//!
//! Bitboards with compile-time attack tables (fancy magics for sliders), a 96-byte
//! `Copy` [`Position`] for copy-make search, legal move generation with atomic
//! semantics (explosions, touching kings, no king captures), FEN and UCI with lichess's
//! conventions, lichess's game-end rules and [`perft`].
//!
//! ```
//! use atomic_chess::{perft, Position};
//!
//! let pos = Position::startpos();
//! assert_eq!(pos.legal_moves().len(), 20);
//! let m = pos.parse_uci("e2e4").unwrap();
//! let next = pos.play(m).unwrap();
//! assert_eq!(next.to_fen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
//! assert_eq!(perft(&pos, 3), 8902);
//! ```
//!
//! The rules follow scalachess (lichess's engine); see `docs/RULES.md` in the
//! repository for the design and the test suite.

pub mod attacks;
mod bitboard;
mod board;
mod color;
mod error;
mod fen;
mod game;
mod movegen;
mod moves;
mod outcome;
mod perft;
mod position;
mod role;
mod square;
mod zobrist;

pub use bitboard::Bitboard;
pub use board::Board;
pub use color::Color;
pub use error::{FenError, FenField, GameError, PlayError, UciError, UciErrorKind};
pub use game::Game;
pub use moves::{Move, MoveList};
pub use outcome::{Outcome, Termination};
pub use perft::{divide, perft};
pub use position::Position;
pub use role::{Piece, Role};
pub use square::{ParseSquareError, Square};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert!(size_of::<Position>() <= 128);
        assert_eq!(size_of::<Move>(), 4);
    }
}
