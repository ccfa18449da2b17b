//! The inputs: which features of each perspective a piece lights, and the pieces that differ
//! between two boards.
//!
//! From perspective `p`, a piece of colour `c` and role `r` on square `s` is input
//! `((c != p) · 6 + r) · 64 + s'`, with `s' = s` for White and the rank mirrored (`s ^ 56`)
//! for Black: each side sees the board from its own side, so the network learns one
//! evaluation for both colours and a position and its colour-flipped mirror get the same
//! value.
//!
//! A network may also key its inputs by the perspective's own king ([`KingLayout`]): the 768
//! inputs are repeated once per king bucket, the bucket is that of the king's square (seen
//! from the perspective's side), and when the king stands on files e–h the whole board is
//! mirrored across the d/e line, so that every king stands on files a–d. Why: in atomic a
//! unit next to a king decides the game (a capture there blows the king up), and a plain 768
//! network can only learn "this piece is near that king" through the hidden layer; keyed by
//! the king, each input says it directly. The cost: a king move that changes bucket or side
//! refreshes that perspective's accumulator instead of updating it.

use arrayvec::ArrayVec;
use atomic_chess::{Board, Color, Role, Square};

/// How a network keys its inputs by the perspective's king (the file header's `kings` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KingLayout {
    /// 768 inputs a perspective, the king a unit like any other (`kings` = 0).
    Plain,
    /// Eight king buckets ([`MIRRORED8`]), the board mirrored to put the king on files a–d:
    /// 8 · 768 inputs a perspective (`kings` = 1).
    Mirrored8,
}

/// Inputs of one bucket: colour (ours, theirs) × role × square.
pub const BUCKET_INPUTS: usize = 768;

/// The buckets of [`KingLayout::Mirrored8`] by the king's square, from the perspective's side
/// and after the mirror (files e–h never occur): the back rank and the second rank in two
/// halves each (wing a–b, centre c–d), ranks 3–4 and ranks 5–8 likewise.
pub const MIRRORED8: [u8; 64] = mirrored8();

const fn mirrored8() -> [u8; 64] {
    let mut table = [0u8; 64];
    let mut sq = 0;
    while sq < 64 {
        let (rank, file) = (sq / 8, sq % 8);
        // Files e-h map as their mirror images d-a.
        let file = if file >= 4 { 7 - file } else { file };
        let row = match rank {
            0 => 0,
            1 => 1,
            2 | 3 => 2,
            _ => 3,
        };
        table[sq] = (row * 2 + if file >= 2 { 1 } else { 0 }) as u8;
        sq += 1;
    }
    table
}

impl KingLayout {
    /// The layout a header's `kings` value names.
    pub fn from_id(id: u32) -> Option<KingLayout> {
        match id {
            0 => Some(KingLayout::Plain),
            1 => Some(KingLayout::Mirrored8),
            _ => None,
        }
    }

    /// The header's `kings` value.
    pub fn id(self) -> u32 {
        match self {
            KingLayout::Plain => 0,
            KingLayout::Mirrored8 => 1,
        }
    }

    /// King buckets (1 for the plain layout).
    pub fn buckets(self) -> usize {
        match self {
            KingLayout::Plain => 1,
            KingLayout::Mirrored8 => 8,
        }
    }

    /// Inputs per perspective.
    pub fn inputs(self) -> usize {
        BUCKET_INPUTS * self.buckets()
    }

    /// The key of a perspective whose king stands on `king` (`None`: no king, bucket 0).
    #[inline]
    pub fn key(self, perspective: Color, king: Option<Square>) -> KingKey {
        match (self, king) {
            (KingLayout::Plain, _) | (_, None) => KingKey::PLAIN,
            (KingLayout::Mirrored8, Some(k)) => {
                let own = k.index() ^ if perspective == Color::White { 0 } else { 56 };
                let flip = if own & 7 >= 4 { 7 } else { 0 };
                KingKey {
                    base: MIRRORED8[own ^ flip] as usize * BUCKET_INPUTS,
                    flip,
                }
            }
        }
    }

    /// The key of `perspective` on `board`.
    #[inline]
    pub fn key_on(self, perspective: Color, board: &Board) -> KingKey {
        match self {
            KingLayout::Plain => KingKey::PLAIN,
            _ => self.key(perspective, board.king_of(perspective)),
        }
    }
}

/// What a perspective's king contributes to every input index: its bucket's first input and
/// whether the board is mirrored across the d/e line (a square XOR of 7) or not (0). Two
/// boards with the same key have the same inputs for the same pieces, so one accumulator can
/// be updated into the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KingKey {
    base: usize,
    flip: usize,
}

impl KingKey {
    /// The key of the plain layout (and of a board without the perspective's king).
    pub const PLAIN: KingKey = KingKey { base: 0, flip: 0 };

    /// The keyed input of `plain`, an input of the plain layout from the same perspective
    /// (`0..768`, its square in the low six bits).
    #[inline]
    pub fn apply(self, plain: usize) -> usize {
        self.base + (plain ^ self.flip)
    }
}

/// The input lit by a `color` `role` on `sq`, from `perspective`'s side, under `key`.
#[inline]
pub fn index(perspective: Color, key: KingKey, color: Color, role: Role, sq: Square) -> usize {
    let s = match perspective {
        Color::White => sq.index(),
        Color::Black => sq.index() ^ 56,
    };
    key.apply((usize::from(color != perspective) * 6 + role.index()) * 64 + s)
}

/// A piece: colour, role, square.
pub type Piece = (Color, Role, Square);

/// Pieces on a board: at most 64 (one per square).
pub type Pieces = ArrayVec<Piece, 64>;

/// Every piece of `board`.
pub fn pieces(board: &Board, out: &mut Pieces) {
    out.clear();
    for color in Color::ALL {
        for role in Role::ALL {
            for sq in board.by_color(color) & board.by_role(role) {
                out.push((color, role, sq));
            }
        }
    }
}

/// The pieces of `from` not on `to` (`removed`) and of `to` not on `from` (`added`), by
/// colour and role: a piece that changes role (a promotion) is one of each. Atomic captures
/// remove up to nine units at once; this needs no knowledge of the move that was played.
pub fn difference(from: &Board, to: &Board, removed: &mut Pieces, added: &mut Pieces) {
    removed.clear();
    added.clear();
    for color in Color::ALL {
        for role in Role::ALL {
            let a = from.by_color(color) & from.by_role(role);
            let b = to.by_color(color) & to.by_role(role);
            for sq in a & !b {
                removed.push((color, role, sq));
            }
            for sq in b & !a {
                added.push((color, role, sq));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomic_chess::Position;

    #[test]
    fn indices_follow_the_documented_layout_and_mirror_for_black() {
        let e2 = Square::new(12);
        let plain = KingKey::PLAIN;
        assert_eq!(index(Color::White, plain, Color::White, Role::Pawn, e2), 12);
        assert_eq!(
            index(Color::Black, plain, Color::White, Role::Pawn, e2),
            6 * 64 + (12 ^ 56)
        );
        assert_eq!(
            index(
                Color::White,
                plain,
                Color::Black,
                Role::King,
                Square::new(63)
            ),
            767
        );
        assert_eq!(
            index(
                Color::Black,
                plain,
                Color::Black,
                Role::Queen,
                Square::new(59)
            ),
            4 * 64 + 3
        );
    }

    #[test]
    fn king_buckets_cover_eight_buckets_and_mirror_files_e_to_h() {
        let layout = KingLayout::Mirrored8;
        assert_eq!(layout.inputs(), 8 * 768);
        assert_eq!(KingLayout::from_id(layout.id()), Some(layout));
        assert_eq!(KingLayout::from_id(2), None);
        let mut seen = [false; 8];
        for sq in 0..64 {
            // A square and its mirror image across the d/e line share a bucket.
            assert_eq!(MIRRORED8[sq], MIRRORED8[sq ^ 7]);
            seen[MIRRORED8[sq] as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
        let (e1, d1, g1, e8) = (
            Square::new(4),
            Square::new(3),
            Square::new(6),
            Square::new(60),
        );
        // White's king on e1 and Black's on e8 have the same key: each sees its own back rank.
        let white = layout.key(Color::White, Some(e1));
        assert_eq!(white, layout.key(Color::Black, Some(e8)));
        assert_eq!(white.flip, 7);
        assert_eq!(layout.key(Color::White, Some(d1)).flip, 0);
        // e1 (mirrored to d1) is a centre square, g1 (mirrored to b1) a wing square.
        assert_eq!(white.base, BUCKET_INPUTS);
        assert_eq!(layout.key(Color::White, Some(g1)).base, 0);
        // Under a mirrored key, a pawn on h2 is the input of a pawn on a2 in its bucket.
        let h2 = Square::new(15);
        assert_eq!(
            index(Color::White, white, Color::White, Role::Pawn, h2),
            BUCKET_INPUTS + 8
        );
        // The plain layout ignores the king.
        assert_eq!(
            KingLayout::Plain.key(Color::White, Some(e1)),
            KingKey::PLAIN
        );
        assert_eq!(layout.key(Color::White, None), KingKey::PLAIN);
        // Every index of every key stays below the layout's inputs.
        for k in 0..64 {
            let key = layout.key(Color::Black, Some(Square::new(k)));
            for s in 0..64 {
                let i = index(Color::Black, key, Color::White, Role::King, Square::new(s));
                assert!(i < layout.inputs());
            }
        }
    }

    #[test]
    fn the_difference_of_a_capture_lists_every_unit_blown_away() {
        // Nxd7 blows up the knight, the pawn on d7 and the bishop c8, the queen d8 and the
        // king's neighbour pieces; pawns around survive.
        let before =
            Position::from_fen("rnbqkbnr/pppppppp/8/2N5/8/8/PPPPPPPP/R1BQKBNR w KQkq - 0 1")
                .expect("fen");
        let mut after = before;
        let m = before
            .legal_moves()
            .iter()
            .copied()
            .find(|m| m.to_string() == "c5d7")
            .expect("Nxd7 is legal");
        after.play_unchecked(m);
        let (mut removed, mut added) = (Pieces::new(), Pieces::new());
        difference(before.board(), after.board(), &mut removed, &mut added);
        assert!(added.is_empty());
        let b = before.board().occupied().count() - after.board().occupied().count();
        assert_eq!(removed.len() as u32, b);
        assert!(removed.len() >= 5, "{removed:?}");
        assert!(removed.contains(&(Color::White, Role::Knight, Square::new(34))));
    }
}
