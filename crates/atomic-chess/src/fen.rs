//! FEN parsing and formatting with lichess's conventions.
//!
//! * Reading is strict about syntax (every error names the field and the reason) and
//!   tolerant about content lichess tolerates: a missing king is a finished game, not
//!   an error. Trailing fields may be omitted (defaults `w - - 0 1`).
//! * Castling letters `KQkq` are kept only when the king stands on e1/e8 and the rook
//!   in its corner; otherwise the right is dropped.
//! * Any well-formed en-passant square is accepted, but it is kept (and written back)
//!   only if an en-passant capture onto it is legal, as lichess writes FENs.

use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::error::{FenError, FenField};
use crate::position::{CASTLING_CORNERS, Position};
use crate::role::{Piece, Role};
use crate::square::Square;

fn err(field: FenField, reason: impl Into<String>) -> FenError {
    FenError {
        field,
        reason: reason.into(),
    }
}

/// Shortens user text quoted in error messages.
fn quote(s: &str) -> String {
    let short: String = s.chars().take(24).collect();
    format!("{short:?}")
}

fn parse_board(text: &str) -> Result<Board, FenError> {
    let mut board = Board::empty();
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return Err(err(
            FenField::Board,
            format!("expected 8 ranks separated by '/', found {}", ranks.len()),
        ));
    }
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - i as u8;
        let mut file: u32 = 0;
        for c in rank_text.chars() {
            if let Some(d) = c.to_digit(10) {
                if !(1..=8).contains(&d) {
                    return Err(err(
                        FenField::Board,
                        format!("rank {}: digit {d} is not 1-8", rank + 1),
                    ));
                }
                file += d;
            } else if let Some(p) = Piece::from_char(c) {
                if file >= 8 {
                    return Err(err(
                        FenField::Board,
                        format!("rank {} has more than 8 squares", rank + 1),
                    ));
                }
                board.put(Square::from_coords(file as u8, rank), p);
                file += 1;
            } else {
                return Err(err(
                    FenField::Board,
                    format!("rank {}: unexpected character {c:?}", rank + 1),
                ));
            }
            if file > 8 {
                return Err(err(
                    FenField::Board,
                    format!("rank {} has more than 8 squares", rank + 1),
                ));
            }
        }
        if file != 8 {
            return Err(err(
                FenField::Board,
                format!("rank {} has {file} squares, expected 8", rank + 1),
            ));
        }
    }
    for color in Color::ALL {
        let kings = board.by_piece(Piece {
            color,
            role: Role::King,
        });
        if kings.more_than_one() {
            return Err(err(
                FenField::Board,
                format!("{} kings for {color:?}, at most one allowed", kings.count()),
            ));
        }
    }
    if (board.by_role(Role::Pawn) & Bitboard(0xff00_0000_0000_00ff)).any() {
        return Err(err(
            FenField::Board,
            "a pawn stands on the first or last rank",
        ));
    }
    Ok(board)
}

fn parse_castling(text: &str, board: &Board) -> Result<Bitboard, FenError> {
    if text == "-" {
        return Ok(Bitboard::EMPTY);
    }
    if text.is_empty() || text.len() > 4 {
        return Err(err(
            FenField::Castling,
            format!("expected '-' or up to 4 of KQkq, found {}", quote(text)),
        ));
    }
    let mut rights = Bitboard::EMPTY;
    let mut seen = Bitboard::EMPTY;
    for c in text.chars() {
        let (color, rook) = match c {
            'K' => (Color::White, Square::H1),
            'Q' => (Color::White, Square::A1),
            'k' => (Color::Black, Square::H8),
            'q' => (Color::Black, Square::A8),
            _ => {
                return Err(err(
                    FenField::Castling,
                    format!("unexpected character {c:?}, expected '-' or letters of KQkq"),
                ));
            }
        };
        if seen.contains(rook) {
            return Err(err(FenField::Castling, format!("letter {c:?} repeated")));
        }
        seen = seen.with(rook);
        let king_home = color.fold(Square::E1, Square::E8);
        let has_king = board
            .by_piece(Piece {
                color,
                role: Role::King,
            })
            .contains(king_home);
        let has_rook = board
            .by_piece(Piece {
                color,
                role: Role::Rook,
            })
            .contains(rook);
        // A right whose king or rook is not at home is dropped, not an error.
        if has_king && has_rook {
            rights = rights.with(rook);
        }
    }
    Ok(rights & CASTLING_CORNERS)
}

impl Position {
    /// Reads a FEN. See the module docs for the conventions.
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let fields: Vec<&str> = fen.split_ascii_whitespace().collect();
        if fields.is_empty() {
            return Err(err(FenField::Whole, "empty"));
        }
        if fields.len() > 6 {
            return Err(err(
                FenField::Whole,
                format!("expected at most 6 fields, found {}", fields.len()),
            ));
        }
        let board = parse_board(fields[0])?;
        let turn = match fields.get(1).copied().unwrap_or("w") {
            "w" => Color::White,
            "b" => Color::Black,
            other => {
                return Err(err(
                    FenField::Turn,
                    format!("expected 'w' or 'b', found {}", quote(other)),
                ));
            }
        };
        let castling = parse_castling(fields.get(2).copied().unwrap_or("-"), &board)?;
        let ep_text = fields.get(3).copied().unwrap_or("-");
        let ep = if ep_text == "-" {
            None
        } else {
            let sq: Square = ep_text.parse().map_err(|_| {
                err(
                    FenField::EnPassant,
                    format!("expected '-' or a square like e3, found {}", quote(ep_text)),
                )
            })?;
            Some(sq)
        };
        let halfmove = match fields.get(4) {
            None => 0,
            Some(t) => t.parse::<u32>().map_err(|_| {
                err(
                    FenField::Halfmove,
                    format!("expected a non-negative integer, found {}", quote(t)),
                )
            })?,
        };
        let fullmove = match fields.get(5) {
            None => 1,
            Some(t) => t.parse::<u32>().map_err(|_| {
                err(
                    FenField::Fullmove,
                    format!("expected a positive integer, found {}", quote(t)),
                )
            })?,
        }
        .max(1);
        let mut pos = Position {
            board,
            castling,
            zobrist: 0,
            fullmove,
            halfmove,
            turn,
            ep: None,
        };
        pos.zobrist = pos.compute_zobrist();
        if let Some(ep) = ep {
            // Keep it only where a double push could have produced it: the pawn that
            // pushed stands in front of it, the square and the one behind are empty.
            let (ep_rank, pawn_delta) = turn.fold((5u8, -8i32), (2u8, 8i32));
            let pusher = ep.offset(pawn_delta);
            let origin = ep.offset(-pawn_delta);
            let plausible = ep.rank() == ep_rank
                && pusher.is_some_and(|s| {
                    pos.board
                        .by_piece(Piece {
                            color: !turn,
                            role: Role::Pawn,
                        })
                        .contains(s)
                })
                && !pos.board.occupied().contains(ep)
                && origin.is_some_and(|s| !pos.board.occupied().contains(s));
            if plausible {
                pos.set_ep_if_legal(ep);
            }
        }
        Ok(pos)
    }

    /// Writes the FEN; the en-passant square appears only when an en-passant capture is
    /// legal (lichess's convention).
    pub fn to_fen(&self) -> String {
        let mut s = String::with_capacity(90);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match self.board.piece_at(Square::from_coords(file, rank)) {
                    Some(p) => {
                        if empty > 0 {
                            s.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        s.push(p.char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                s.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                s.push('/');
            }
        }
        s.push(' ');
        s.push(self.turn.char());
        s.push(' ');
        let mut any = false;
        for (sq, c) in [
            (Square::H1, 'K'),
            (Square::A1, 'Q'),
            (Square::H8, 'k'),
            (Square::A8, 'q'),
        ] {
            if self.castling.contains(sq) {
                s.push(c);
                any = true;
            }
        }
        if !any {
            s.push('-');
        }
        s.push(' ');
        match self.ep {
            Some(sq) => s.push_str(&sq.to_string()),
            None => s.push('-'),
        }
        s.push_str(&format!(" {} {}", self.halfmove, self.fullmove));
        s
    }
}
