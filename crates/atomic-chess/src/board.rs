//! Piece placement: one bitboard per role and one per colour.

use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::role::{Piece, Role};
use crate::square::Square;

/// Where the pieces stand. 64 bytes; kept free of redundant mailbox data so that
/// [`crate::Position`] stays small enough for copy-make.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Board {
    by_role: [Bitboard; 6],
    by_color: [Bitboard; 2],
}

impl Board {
    /// An empty board.
    pub const fn empty() -> Board {
        Board {
            by_role: [Bitboard::EMPTY; 6],
            by_color: [Bitboard::EMPTY; 2],
        }
    }

    /// The standard starting placement.
    pub const fn startpos() -> Board {
        Board {
            by_role: [
                Bitboard(0x00ff_0000_0000_ff00),
                Bitboard(0x4200_0000_0000_0042),
                Bitboard(0x2400_0000_0000_0024),
                Bitboard(0x8100_0000_0000_0081),
                Bitboard(0x0800_0000_0000_0008),
                Bitboard(0x1000_0000_0000_0010),
            ],
            by_color: [Bitboard(0xffff), Bitboard(0xffff_0000_0000_0000)],
        }
    }

    /// The pieces of colour `c`.
    #[inline]
    pub fn by_color(&self, c: Color) -> Bitboard {
        self.by_color[c.index()]
    }

    /// The pieces of role `r`, both colours.
    #[inline]
    pub fn by_role(&self, r: Role) -> Bitboard {
        self.by_role[r.index()]
    }

    /// The pieces equal to `p`.
    #[inline]
    pub fn by_piece(&self, p: Piece) -> Bitboard {
        self.by_role[p.role.index()] & self.by_color[p.color.index()]
    }

    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    /// The role of the piece on `sq`, if any.
    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        if !self.occupied().contains(sq) {
            return None;
        }
        Role::ALL
            .into_iter()
            .find(|r| self.by_role[r.index()].contains(sq))
    }

    /// The colour of the piece on `sq`, if any.
    #[inline]
    pub fn color_at(&self, sq: Square) -> Option<Color> {
        if self.by_color[0].contains(sq) {
            Some(Color::White)
        } else if self.by_color[1].contains(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    /// The piece on `sq`, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let color = self.color_at(sq)?;
        let role = self.role_at(sq)?;
        Some(Piece { color, role })
    }

    /// The square of `c`'s king (the lowest one if a bad set-up had several).
    #[inline]
    pub fn king_of(&self, c: Color) -> Option<Square> {
        (self.by_role[Role::King.index()] & self.by_color[c.index()]).first()
    }

    /// Kings, bishops, ... of both colours: the sliders that move like a bishop.
    #[inline]
    pub(crate) fn bishops_queens(&self) -> Bitboard {
        self.by_role[Role::Bishop.index()] | self.by_role[Role::Queen.index()]
    }

    /// The sliders that move like a rook.
    #[inline]
    pub(crate) fn rooks_queens(&self) -> Bitboard {
        self.by_role[Role::Rook.index()] | self.by_role[Role::Queen.index()]
    }

    /// Puts `p` on the empty square `sq`.
    #[inline]
    pub(crate) fn put(&mut self, sq: Square, p: Piece) {
        let b = sq.bitboard();
        self.by_role[p.role.index()] |= b;
        self.by_color[p.color.index()] |= b;
    }

    /// Removes `p` from `sq`, where it stands.
    #[inline]
    pub(crate) fn remove(&mut self, sq: Square, p: Piece) {
        let b = !sq.bitboard();
        self.by_role[p.role.index()] &= b;
        self.by_color[p.color.index()] &= b;
    }
}
