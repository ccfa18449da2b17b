//! The inputs: which of the 768 features of each perspective a piece lights, and the pieces
//! that differ between two boards.
//!
//! From perspective `p`, a piece of colour `c` and role `r` on square `s` is input
//! `((c != p) · 6 + r) · 64 + s'`, with `s' = s` for White and the rank mirrored (`s ^ 56`)
//! for Black: each side sees the board from its own side, so the network learns one
//! evaluation for both colours and a position and its colour-flipped mirror get the same
//! value.

use arrayvec::ArrayVec;
use atomic_chess::{Board, Color, Role, Square};

/// The input lit by a `color` `role` on `sq`, from `perspective`'s side.
#[inline]
pub fn index(perspective: Color, color: Color, role: Role, sq: Square) -> usize {
    let s = match perspective {
        Color::White => sq.index(),
        Color::Black => sq.index() ^ 56,
    };
    (usize::from(color != perspective) * 6 + role.index()) * 64 + s
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
        assert_eq!(index(Color::White, Color::White, Role::Pawn, e2), 12);
        assert_eq!(
            index(Color::Black, Color::White, Role::Pawn, e2),
            6 * 64 + (12 ^ 56)
        );
        assert_eq!(
            index(Color::White, Color::Black, Role::King, Square::new(63)),
            767
        );
        assert_eq!(
            index(Color::Black, Color::Black, Role::Queen, Square::new(59)),
            4 * 64 + 3
        );
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
