//! Move ordering of the alpha-beta search: the table's move, then captures that do not lose
//! material by their blast balance, queen promotions, the two killer moves of the ply, quiet
//! moves by their history score, and captures that lose material last.
//!
//! Good ordering is what makes alpha-beta cheap: a cut-off found by the first move skips the
//! rest. In atomic a capture's worth is its blast balance (everything in the explosion counts,
//! not just the victim), which `eval::blast_balance` gives directly.

use atomic_chess::{Color, Move, Position, Role};

use crate::search::eval;

/// Deepest ply the search tracks killers for.
pub const MAX_PLY: usize = 128;

const TABLE_MOVE: i32 = 4_000_000;
const GOOD_CAPTURE: i32 = 3_000_000;
const PROMOTION: i32 = 2_900_000;
const KILLER: i32 = 2_800_000;
const BAD_CAPTURE: i32 = -3_000_000;
/// History scores stay within ± this, below the killers.
const HISTORY_MAX: i32 = 1_000_000;

/// Continuation histories are kept within ± this.
const CONT_MAX: i32 = 16_000;
/// (piece, destination) pairs: the key of a move in the continuation histories.
pub const PIECE_TO: usize = 2 * 6 * 64;
/// "No move" in the move stack (the root's parent, a null move).
pub const NO_PIECE_TO: usize = PIECE_TO;

/// Killer moves per ply, the history table (side, from, to) and the continuation histories
/// (the move one and two plies before, as (piece, destination), then this move's).
pub struct Ordering {
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
    /// Indexed `previous * PIECE_TO + current`, with a zero row for `NO_PIECE_TO`.
    cont: [Vec<i16>; 2],
    /// Weight of the continuation histories in the ordering key (0 = off).
    pub cont_weight: i32,
}

impl Default for Ordering {
    fn default() -> Self {
        Ordering {
            killers: vec![[None; 2]; MAX_PLY],
            history: vec![0; 2 * 64 * 64],
            cont: [
                vec![0; (PIECE_TO + 1) * PIECE_TO],
                vec![0; (PIECE_TO + 1) * PIECE_TO],
            ],
            cont_weight: 0,
        }
    }
}

fn index(side: Color, m: Move) -> usize {
    (side as usize * 64 + m.from().index()) * 64 + m.to().index()
}

/// A move's (piece, destination) key for the continuation histories.
pub fn piece_to(side: Color, m: Move) -> usize {
    (side as usize * 6 + m.role().index()) * 64 + m.to().index()
}

impl Ordering {
    /// A new game: forget everything.
    pub fn clear(&mut self) {
        self.killers.fill([None; 2]);
        self.history.fill(0);
        for c in &mut self.cont {
            c.fill(0);
        }
    }

    /// A new search: killers are positional, so they go; the history fades.
    pub fn new_search(&mut self) {
        self.killers.fill([None; 2]);
        for h in self.history.iter_mut() {
            *h /= 8;
        }
        // Off, they are never written: skip the 1.2 M entries.
        if self.cont_weight != 0 {
            for c in &mut self.cont {
                for h in c.iter_mut() {
                    *h /= 2;
                }
            }
        }
    }

    /// The ordering key of `m` at a node `ply` plies deep (higher first); `prev` holds the
    /// (piece, destination) keys of the moves one and two plies before.
    pub fn key(
        &self,
        pos: &Position,
        m: Move,
        table_move: Option<Move>,
        ply: usize,
        prev: [usize; 2],
    ) -> i32 {
        if Some(m) == table_move {
            return TABLE_MOVE;
        }
        if m.is_capture() {
            let balance = eval::blast_balance(pos, m);
            return if balance >= 0 {
                GOOD_CAPTURE + balance
            } else {
                BAD_CAPTURE + balance
            };
        }
        if m.promotion() == Some(Role::Queen) {
            return PROMOTION;
        }
        let killers = &self.killers[ply.min(MAX_PLY - 1)];
        if killers[0] == Some(m) {
            return KILLER;
        }
        if killers[1] == Some(m) {
            return KILLER - 1;
        }
        self.history[index(pos.turn(), m)] + self.cont_weight * self.cont_score(pos.turn(), m, prev)
    }

    /// The sum of the continuation histories of the quiet move `m` after `prev`.
    pub fn cont_score(&self, side: Color, m: Move, prev: [usize; 2]) -> i32 {
        if self.cont_weight == 0 {
            return 0;
        }
        let cur = piece_to(side, m);
        i32::from(self.cont[0][prev[0] * PIECE_TO + cur])
            + i32::from(self.cont[1][prev[1] * PIECE_TO + cur])
    }

    /// A quiet move caused a cut-off: it becomes the ply's first killer and gains history;
    /// the quiet moves tried before it (`failed`) lose some.
    pub fn reward(
        &mut self,
        side: Color,
        m: Move,
        failed: &[Move],
        depth: i32,
        ply: usize,
        prev: [usize; 2],
    ) {
        let killers = &mut self.killers[ply.min(MAX_PLY - 1)];
        if killers[0] != Some(m) {
            killers[1] = killers[0];
            killers[0] = Some(m);
        }
        let bonus = (depth * depth).min(400);
        let h = &mut self.history[index(side, m)];
        *h = (*h + bonus).min(HISTORY_MAX);
        for &q in failed {
            let h = &mut self.history[index(side, q)];
            *h = (*h - bonus).max(-HISTORY_MAX);
        }
        if self.cont_weight == 0 {
            return;
        }
        for (k, &p) in prev.iter().enumerate() {
            if p == NO_PIECE_TO {
                continue;
            }
            let row = p * PIECE_TO;
            update(&mut self.cont[k][row + piece_to(side, m)], bonus);
            for &q in failed {
                update(&mut self.cont[k][row + piece_to(side, q)], -bonus);
            }
        }
    }
}

/// Moves a continuation history entry towards ± `CONT_MAX` by `bonus` (gravity: the closer
/// to the bound, the smaller the step).
fn update(entry: &mut i16, bonus: i32) {
    let e = i32::from(*entry);
    let b = bonus * 32;
    *entry = (e + b - e * b.abs() / CONT_MAX).clamp(-CONT_MAX, CONT_MAX) as i16;
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: [usize; 2] = [NO_PIECE_TO; 2];

    #[test]
    fn table_move_then_winning_captures_then_killers_then_history() {
        // The pawn takes on d5 and the blast takes the knight and the bishop next to it.
        let pos = Position::from_fen("4k3/8/2nb4/3p4/4P3/8/8/4K3 w - - 0 1").unwrap();
        let capture = pos.parse_uci("e4d5").unwrap();
        let quiet = pos.parse_uci("e1f1").unwrap();
        let other = pos.parse_uci("e1d1").unwrap();
        let mut o = Ordering::default();
        assert!(o.key(&pos, capture, None, 0, NONE) > o.key(&pos, quiet, None, 0, NONE));
        assert_eq!(o.key(&pos, quiet, Some(quiet), 0, NONE), TABLE_MOVE);
        o.reward(Color::White, quiet, &[other], 4, 3, NONE);
        assert_eq!(o.key(&pos, quiet, None, 3, NONE), KILLER);
        assert_eq!(o.key(&pos, quiet, None, 2, NONE), 16);
        assert_eq!(o.key(&pos, other, None, 2, NONE), -16);
        o.new_search();
        assert_eq!(o.key(&pos, quiet, None, 3, NONE), 2);
    }
}
