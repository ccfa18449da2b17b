//! Moves: 4 bytes, carrying everything play and search need without a board lookup.

use std::fmt;

use crate::role::Role;
use crate::square::Square;

const CAPTURE: u8 = 1 << 3;
const EN_PASSANT: u8 = 1 << 4;
const CASTLE: u8 = 1 << 5;
const PROMO_MASK: u8 = 0b111;

/// A move. For castling, `from`/`to` are the king's squares (e1g1, e1c1, ...).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Move {
    from: Square,
    to: Square,
    role: Role,
    /// bits 0-2: promotion role index (0 = none); bit 3: capture; bit 4: en passant;
    /// bit 5: castling.
    flags: u8,
}

/// A list of moves with room for any legal position (the known maximum is 218).
pub type MoveList = arrayvec::ArrayVec<Move, 256>;

impl Move {
    /// A normal move or capture of `role` (promotion only for pawns reaching the last rank).
    #[inline]
    pub const fn normal(
        role: Role,
        from: Square,
        to: Square,
        capture: bool,
        promotion: Option<Role>,
    ) -> Move {
        let promo = match promotion {
            Some(r) => r as u8,
            None => 0,
        };
        Move {
            from,
            to,
            role,
            flags: promo | if capture { CAPTURE } else { 0 },
        }
    }

    /// An en-passant capture; `to` is the square the pawn passed over (the blast centre).
    #[inline]
    pub const fn en_passant(from: Square, to: Square) -> Move {
        Move {
            from,
            to,
            role: Role::Pawn,
            flags: CAPTURE | EN_PASSANT,
        }
    }

    /// Castling, given as the king's start and destination (e1g1, e1c1, e8g8, e8c8).
    #[inline]
    pub const fn castle(king_from: Square, king_to: Square) -> Move {
        Move {
            from: king_from,
            to: king_to,
            role: Role::King,
            flags: CASTLE,
        }
    }

    /// The square the piece leaves.
    #[inline]
    pub fn from(self) -> Square {
        self.from
    }

    /// The square the piece goes to (the king's destination for castling).
    #[inline]
    pub fn to(self) -> Square {
        self.to
    }

    /// The promotion role, if any.
    #[inline]
    pub fn promotion(self) -> Option<Role> {
        match self.flags & PROMO_MASK {
            0 => None,
            i => Some(Role::ALL[i as usize]),
        }
    }

    /// Whether the move captures (en passant included): it causes an explosion.
    #[inline]
    pub fn is_capture(self) -> bool {
        self.flags & CAPTURE != 0
    }

    /// Whether the move is an en-passant capture.
    #[inline]
    pub fn is_en_passant(self) -> bool {
        self.flags & EN_PASSANT != 0
    }

    /// Whether the move is castling.
    #[inline]
    pub fn is_castle(self) -> bool {
        self.flags & CASTLE != 0
    }

    /// The moving piece's role (the king for castling, the pawn for promotions).
    #[inline]
    pub fn role(self) -> Role {
        self.role
    }

    /// The victim's square: `to`, except for en passant, where it is the square
    /// beside the capturing pawn.
    #[inline]
    pub fn capture_square(self) -> Option<Square> {
        if self.is_en_passant() {
            Some(Square::from_coords(self.to.file(), self.from.rank()))
        } else if self.is_capture() {
            Some(self.to)
        } else {
            None
        }
    }

    /// For castling, the rook's start square (h1/a1/h8/a8); `None` otherwise.
    pub fn castle_rook_from(self) -> Option<Square> {
        if !self.is_castle() {
            return None;
        }
        let file = if self.to.file() > self.from.file() {
            7
        } else {
            0
        };
        Some(Square::from_coords(file, self.from.rank()))
    }
}

impl Move {
    /// The move packed into 32 bits, never 0 (so 0 can stand for "no move"): compact storage
    /// for a transposition table. [`Move::from_bits`] inverts it.
    #[inline]
    pub const fn to_bits(self) -> u32 {
        self.from.index() as u32
            | (self.to.index() as u32) << 6
            | (self.role as u32) << 12
            | (self.flags as u32) << 16
            | 1 << 31
    }

    /// The move of [`Move::to_bits`]; `None` for 0 or bits no move packs to.
    #[inline]
    pub fn from_bits(bits: u32) -> Option<Move> {
        if bits >> 31 != 1 || bits & 0x7f80_0000 != 0 {
            return None;
        }
        let role = *Role::ALL.get(((bits >> 12) & 0xf) as usize)?;
        let flags = ((bits >> 16) & 0x7f) as u8;
        if flags & PROMO_MASK > Role::Queen as u8 || flags >> 6 != 0 {
            return None;
        }
        Some(Move {
            from: Square::new(bits & 0x3f),
            to: Square::new((bits >> 6) & 0x3f),
            role,
            flags,
        })
    }
}

/// UCI notation: `e2e4`, `e7e8q`; castling as the king's two-square move `e1g1`.
impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if let Some(p) = self.promotion() {
            write!(f, "{}", p.char())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Position;

    #[test]
    fn bits_round_trip_for_every_kind_of_move() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            // Castling both ways, promotions with and without capture, en passant.
            "r3k2r/1P4P1/8/3pP3/8/8/1p4p1/R3K2R w KQkq d6 0 1",
            "r3k2r/1P4P1/8/8/3Pp3/8/1p4p1/R3K2R b KQkq d3 0 1",
        ] {
            let pos = Position::from_fen(fen).expect("valid FEN");
            for &m in &pos.legal_moves() {
                assert_ne!(m.to_bits(), 0);
                assert_eq!(Move::from_bits(m.to_bits()), Some(m), "{fen}: {m}");
            }
        }
        assert_eq!(Move::from_bits(0), None);
        assert_eq!(Move::from_bits(u32::MAX), None);
    }
}
