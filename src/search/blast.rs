//! Atomic tactics: what a capture destroys and which captures end the game.
//!
//! In atomic a capture removes the capturer, the victim and every non-pawn piece next to the
//! victim's square, and a king in the blast loses the game. So the "exchange value" of a capture
//! is its *blast balance* (the enemy material in the blast minus ours, the capturer included),
//! and the main danger is an enemy piece attacking one of our pieces that stands next to our
//! king: taking it blows the king up. Fairy-Stockfish's `blast_see` and its explosion-threat
//! king-danger term are the models (see docs/ENGINE.md). Everything here depends on the rules
//! alone: the evaluation, the policy's features and both engines build on it.

use atomic_chess::{Bitboard, Color, Move, MoveList, Position, Role, Square, attacks};

/// Material values in centipawns, indexed by `Role::index()`. The king's value is irrelevant:
/// its loss ends the game and is handled separately.
pub(crate) const VALUE: [i32; 6] = [100, 300, 320, 480, 950, 0];

fn value(role: Role) -> i32 {
    VALUE[role.index()]
}

#[inline]
pub(crate) fn piece_attacks(role: Role, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => attacks::pawn_attacks(color, sq),
        Role::Knight => attacks::knight_attacks(sq),
        Role::Bishop => attacks::bishop_attacks(sq, occupied),
        Role::Rook => attacks::rook_attacks(sq, occupied),
        Role::Queen => attacks::queen_attacks(sq, occupied),
        Role::King => attacks::king_attacks(sq),
    }
}

/// Material of `color` within `squares`.
fn material_in(pos: &Position, color: Color, squares: Bitboard) -> i32 {
    let board = pos.board();
    let ours = board.by_color(color) & squares;
    Role::ALL
        .iter()
        .map(|&role| (ours & board.by_role(role)).count() as i32 * value(role))
        .sum()
}

/// Blast balance of a capture for the side to move: enemy material destroyed minus our own
/// (the capturer always dies). 0 for a quiet move.
pub fn blast_balance(pos: &Position, m: Move) -> i32 {
    if !m.is_capture() {
        return 0;
    }
    let blast = pos.blast_squares(m);
    let us = pos.turn();
    material_in(pos, !us, blast) - material_in(pos, us, blast)
}

/// Whether the capture `m` blows up the enemy king (and so wins at once; a capture that also
/// blows up our own king is not legal).
pub fn wins_at_once(pos: &Position, m: Move) -> bool {
    m.is_capture() && pos.king_explodes(m).1
}

/// Whether the quiet move `m` attacks the enemy king from its destination (a direct check;
/// discovered checks are not seen). Captures never give a direct check in atomic: the capturer
/// is destroyed by its own blast.
pub fn gives_direct_check(pos: &Position, m: Move) -> bool {
    if m.is_capture() || m.is_castle() {
        return false;
    }
    let board = pos.board();
    let Some(their_king) = board.king_of(!pos.turn()) else {
        return false;
    };
    let role = m.promotion().unwrap_or(m.role());
    if role == Role::King {
        return false;
    }
    let after = (board.occupied() & !m.from().bitboard()) | m.to().bitboard();
    piece_attacks(role, pos.turn(), m.to(), after).contains(their_king)
}

/// Whether the move `m` checkmates: a direct check after which the opponent has no legal move.
pub fn mates_at_once(pos: &Position, m: Move) -> bool {
    if !gives_direct_check(pos, m) {
        return false;
    }
    let mut child = *pos;
    child.play_unchecked(m);
    child.is_check() && !child.has_legal_moves()
}

/// Squares from which a piece of the side to move could attack the enemy king: its queen lines
/// on an empty board and its knight squares (pawn checks are within the queen lines). Only a
/// move to one of them can give a direct check, so this filters the moves worth trying with
/// [`mates_at_once`] (it is empty when the enemy king is missing).
pub fn check_squares(pos: &Position) -> Bitboard {
    pos.board()
        .king_of(!pos.turn())
        .map_or(Bitboard::EMPTY, |k| {
            attacks::queen_attacks(k, Bitboard::EMPTY) | attacks::knight_attacks(k)
        })
}

/// Whether one of `moves` wins at once: a king-exploding capture or a checkmate.
pub fn any_wins_or_mates_at_once(pos: &Position, moves: &[Move]) -> bool {
    let checks = check_squares(pos);
    moves
        .iter()
        .any(|&m| wins_at_once(pos, m) || (checks.contains(m.to()) && mates_at_once(pos, m)))
}

/// Squares where an enemy capture would blow up `color`'s king: our own pieces next to our
/// king (and the king itself, a check), minus those next to the enemy king too, since a capture
/// there would blow up both kings and is illegal.
pub(crate) fn blast_targets(pos: &Position, color: Color) -> Bitboard {
    let board = pos.board();
    let Some(king) = board.king_of(color) else {
        return Bitboard::EMPTY;
    };
    let mut targets = (attacks::king_attacks(king) & board.by_color(color)) | king.bitboard();
    if let Some(enemy_king) = board.king_of(!color) {
        targets &= !attacks::king_attacks(enemy_king);
    }
    targets
}

/// Whether the side to move is lost in two plies: the opponent threatens to blow up its king
/// and no legal move stops every such capture. Only called when `moves` is non-empty and none
/// of them wins at once. Cheap when there is no threat (the usual case).
///
/// A threat is an enemy non-king piece attacking one of our pieces next to our king (or the
/// king) that is not also next to the enemy king: exactly the captures that blow up our king
/// and not theirs, which atomic always allows. En-passant threats are not seen, which can only
/// make this miss a loss, never invent one.
pub fn loses_at_once(pos: &Position, moves: &MoveList) -> bool {
    let us = pos.turn();
    if blast_threats(pos, us) == 0 {
        return false;
    }
    !moves.iter().any(|&m| {
        let mut child = *pos;
        child.play_unchecked(m);
        blast_threats(&child, us) == 0
    })
}

/// Number of distinct squares from which `color`'s king can be blown up by one capture.
pub fn blast_threats(pos: &Position, color: Color) -> u32 {
    let board = pos.board();
    let occupied = board.occupied();
    let enemy_non_king = board.by_color(!color) & !board.by_role(Role::King);
    blast_targets(pos, color)
        .filter(|&sq| (pos.attackers_to(sq, !color, occupied) & enemy_non_king).any())
        .count() as u32
}
