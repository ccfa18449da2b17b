//! Perft: counts leaf nodes of the legal move tree (bulk-counted at the last ply).
//! A position with an exploded king has no moves, so it contributes nothing below it.

use crate::moves::{Move, MoveList};
use crate::position::Position;

/// The number of legal move sequences of length `depth` from `pos`.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut moves = MoveList::new();
    pos.legal_moves_into(&mut moves);
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|&m| {
            let mut next = *pos;
            next.play_unchecked(m);
            perft(&next, depth - 1)
        })
        .sum()
}

/// Perft split by root move, in generation order (for `go perft` and debugging).
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut next = *pos;
            next.play_unchecked(m);
            (m, perft(&next, depth.saturating_sub(1)))
        })
        .collect()
}
