//! Legal move generation with atomic semantics, without play-and-check.
//!
//! * Quiet moves cannot remove pieces, so standard chess logic is exact for them once
//!   "check" means atomic check: attacks by enemy non-king pieces, and none at all
//!   while the kings touch. A quiet move must block the single checker (double check:
//!   king moves only) and a pinned piece must stay on its pin line.
//! * King moves go to empty squares only (a king never captures). A king step is legal
//!   when its target touches the enemy king or no enemy non-king piece attacks it with
//!   the king lifted off its square.
//! * Every capture is judged on the board after the blast (blasts remove pinners and
//!   shields alike): illegal when its centre touches our king; legal when the blast
//!   reaches the enemy king; otherwise legal when our king is not attacked by what
//!   survives, or the kings touch.
//! * Castling follows lichess's `castleCheckSafeSquare`: squares next to the enemy king
//!   are safe, the start and passed squares are tested with the king lifted, and the
//!   landing square on the board after castling.

use crate::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, queen_attacks,
    rook_attacks,
};
use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::moves::{Move, MoveList};
use crate::position::Position;
use crate::role::Role;
use crate::square::Square;

/// What every legality test of one generation pass shares.
struct Ctx<'a> {
    pos: &'a Position,
    us: Color,
    ksq: Square,
    tsq: Square,
    occ: Bitboard,
    theirs: Bitboard,
    kings_touch: bool,
}

impl Ctx<'_> {
    fn new(pos: &Position) -> Option<Ctx<'_>> {
        let us = pos.turn;
        let ksq = pos.board.king_of(us)?;
        let tsq = pos.board.king_of(!us)?;
        Some(Ctx {
            pos,
            us,
            ksq,
            tsq,
            occ: pos.board.occupied(),
            theirs: pos.board.by_color(!us),
            kings_touch: king_attacks(ksq).contains(tsq),
        })
    }

    /// Whether a capture by the piece on `from` landing on `to` and taking the piece
    /// on `victim` is legal, given that `to` does not touch our king.
    #[inline]
    fn capture_is_legal(&self, from: Square, to: Square, victim: Square) -> bool {
        let b = &self.pos.board;
        let blast = king_attacks(to) & self.occ & !b.by_role(Role::Pawn);
        if blast.contains(self.tsq) || to == self.tsq {
            return true; // the enemy king explodes: legal whatever happens to ours
        }
        if self.kings_touch {
            return true; // neither king moved or exploded, so no check is possible
        }
        let removed = blast | from.bitboard() | to.bitboard() | victim.bitboard();
        let occ = self.occ & !removed;
        let alive = self.theirs & !removed;
        let ksq = self.ksq;
        (((knight_attacks(ksq) & b.by_role(Role::Knight))
            | (pawn_attacks(self.us, ksq) & b.by_role(Role::Pawn)))
            & alive)
            .is_empty()
            && (bishop_attacks(ksq, occ) & b.bishops_queens() & alive).is_empty()
            && (rook_attacks(ksq, occ) & b.rooks_queens() & alive).is_empty()
    }

    /// Whether `sq` is safe for our king: it touches the enemy king, or no enemy
    /// non-king piece attacks it with occupancy `occ`.
    #[inline]
    fn king_safe(&self, sq: Square, occ: Bitboard) -> bool {
        king_attacks(sq).contains(self.tsq)
            || self
                .pos
                .non_king_attackers(sq, !self.us, self.theirs, occ)
                .is_empty()
    }
}

/// Whether the en-passant capture `from` -> `ep` is legal (the position's ep square
/// must be `ep`). Used to decide whether the ep square exists at all.
pub(crate) fn en_passant_is_legal(pos: &Position, from: Square, ep: Square) -> bool {
    let Some(ctx) = Ctx::new(pos) else {
        return false;
    };
    let victim = Square::from_coords(ep.file(), from.rank());
    !king_attacks(ctx.ksq).contains(ep) && ctx.capture_is_legal(from, ep, victim)
}

#[inline]
fn push_promotions(out: &mut MoveList, from: Square, to: Square, capture: bool) {
    for role in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
        out.push(Move::normal(Role::Pawn, from, to, capture, Some(role)));
    }
}

/// Whether `pos` has a legal move. King steps are tried first with the same test as
/// [`generate`]; only when none is legal are all moves generated.
pub(crate) fn has_any(pos: &Position) -> bool {
    let Some(ctx) = Ctx::new(pos) else {
        return false;
    };
    let occ_without_king = ctx.occ.without(ctx.ksq);
    for to in king_attacks(ctx.ksq) & !ctx.occ {
        if ctx.king_safe(to, occ_without_king) {
            return true;
        }
    }
    let mut moves = MoveList::new();
    generate(pos, &mut moves);
    !moves.is_empty()
}

/// Appends every legal move of `pos` to `out` (which has room for 256).
pub(crate) fn generate(pos: &Position, out: &mut MoveList) {
    generate_some(pos, out, true);
}

/// Appends the legal captures and promotions of `pos` to `out`, in the order in which
/// [`generate`] lists them (a quiescence search needs no other move, and ties in its move
/// ordering are broken by this order).
pub(crate) fn generate_noisy(pos: &Position, out: &mut MoveList) {
    generate_some(pos, out, false);
}

/// Every legal move, or (`quiets` false) only the captures and promotions.
#[inline(always)]
fn generate_some(pos: &Position, out: &mut MoveList, quiets: bool) {
    let Some(ctx) = Ctx::new(pos) else {
        return; // a king has exploded: the game is over, no moves
    };
    let b = &pos.board;
    let us = ctx.us;
    let ksq = ctx.ksq;
    let occ = ctx.occ;
    let ours = b.by_color(us);
    let empty = !occ;

    // Quiet moves: the check evasion mask and the pins.
    let (quiet_mask, pinned) = if ctx.kings_touch {
        (empty, Bitboard::EMPTY)
    } else {
        let checkers = pos.non_king_attackers(ksq, !us, ctx.theirs, occ);
        let mask = match checkers.first() {
            None => empty,
            Some(_) if checkers.more_than_one() => Bitboard::EMPTY,
            Some(c) => between(ksq, c),
        };
        let snipers = ((rook_attacks(ksq, Bitboard::EMPTY) & b.rooks_queens())
            | (bishop_attacks(ksq, Bitboard::EMPTY) & b.bishops_queens()))
            & ctx.theirs;
        let mut pinned = Bitboard::EMPTY;
        for s in snipers {
            let blockers = between(ksq, s) & occ;
            if !blockers.more_than_one() {
                pinned |= blockers & ours;
            }
        }
        (mask, pinned)
    };
    // Captures centred next to our own king would blow it up.
    let targets = ctx.theirs & !king_attacks(ksq);

    // Pawns.
    let pawns = b.by_role(Role::Pawn) & ours;
    let (up, rank3, last): (i32, Bitboard, Bitboard) = match us {
        Color::White => (
            8,
            Bitboard(0x0000_0000_00ff_0000),
            Bitboard(0xff00_0000_0000_0000),
        ),
        Color::Black => (-8, Bitboard(0x0000_ff00_0000_0000), Bitboard(0xff)),
    };
    let shift = |bb: Bitboard| -> Bitboard {
        if up > 0 {
            Bitboard(bb.0 << 8)
        } else {
            Bitboard(bb.0 >> 8)
        }
    };
    let single = shift(pawns) & empty;
    let (single_targets, double) = if quiets {
        (
            single & quiet_mask,
            shift(single & rank3) & empty & quiet_mask,
        )
    } else {
        (single & quiet_mask & last, Bitboard::EMPTY)
    };
    for to in single_targets {
        let from = Square::new((to as i32 - up) as u32);
        if pinned.contains(from) && !line(ksq, from).contains(to) {
            continue;
        }
        if last.contains(to) {
            push_promotions(out, from, to, false);
        } else {
            out.push(Move::normal(Role::Pawn, from, to, false, None));
        }
    }
    for to in double {
        let from = Square::new((to as i32 - 2 * up) as u32);
        if pinned.contains(from) && !line(ksq, from).contains(to) {
            continue;
        }
        out.push(Move::normal(Role::Pawn, from, to, false, None));
    }
    for from in pawns {
        for to in pawn_attacks(us, from) & targets {
            if ctx.capture_is_legal(from, to, to) {
                if last.contains(to) {
                    push_promotions(out, from, to, true);
                } else {
                    out.push(Move::normal(Role::Pawn, from, to, true, None));
                }
            }
        }
    }
    if let Some(ep) = pos.ep
        && !king_attacks(ksq).contains(ep)
    {
        for from in pawn_attacks(!us, ep) & pawns {
            let victim = Square::from_coords(ep.file(), from.rank());
            if ctx.capture_is_legal(from, ep, victim) {
                out.push(Move::en_passant(from, ep));
            }
        }
    }

    // Knights, bishops, rooks, queens.
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for from in b.by_role(role) & ours {
            let attacks = match role {
                Role::Knight => knight_attacks(from),
                Role::Bishop => bishop_attacks(from, occ),
                Role::Rook => rook_attacks(from, occ),
                _ => queen_attacks(from, occ),
            };
            let mut quiet = if quiets {
                attacks & quiet_mask
            } else {
                Bitboard::EMPTY
            };
            if pinned.contains(from) {
                quiet &= line(ksq, from);
            }
            for to in quiet {
                out.push(Move::normal(role, from, to, false, None));
            }
            for to in attacks & targets {
                if ctx.capture_is_legal(from, to, to) {
                    out.push(Move::normal(role, from, to, true, None));
                }
            }
        }
    }

    if !quiets {
        return;
    }
    // King steps (never captures).
    let occ_without_king = occ.without(ksq);
    for to in king_attacks(ksq) & empty {
        if ctx.king_safe(to, occ_without_king) {
            out.push(Move::normal(Role::King, ksq, to, false, None));
        }
    }

    // Castling.
    let rights = pos.castling & b.by_role(Role::Rook) & ours;
    if rights.any() {
        for rook in rights {
            let (king_to, rook_to) = if rook.file() == 7 {
                (
                    Square::from_coords(6, rook.rank()),
                    Square::from_coords(5, rook.rank()),
                )
            } else {
                (
                    Square::from_coords(2, rook.rank()),
                    Square::from_coords(3, rook.rank()),
                )
            };
            if ksq != Square::from_coords(4, rook.rank()) || between(ksq, rook).intersects(occ) {
                continue;
            }
            // The start square and the passed square (where the rook lands), with the
            // king lifted so that sliders x-ray through e1.
            let safe_before =
                ctx.king_safe(ksq, occ_without_king) && ctx.king_safe(rook_to, occ_without_king);
            if !safe_before {
                continue;
            }
            let occ_after = (occ_without_king.without(rook)).with(king_to).with(rook_to);
            if ctx.king_safe(king_to, occ_after) {
                out.push(Move::castle(ksq, king_to));
            }
        }
    }
}
