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

/// Killer moves per ply and the history table (side, from, to).
pub struct Ordering {
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
}

impl Default for Ordering {
    fn default() -> Self {
        Ordering {
            killers: vec![[None; 2]; MAX_PLY],
            history: vec![0; 2 * 64 * 64],
        }
    }
}

fn index(side: Color, m: Move) -> usize {
    (side as usize * 64 + m.from().index()) * 64 + m.to().index()
}

impl Ordering {
    /// A new game: forget everything.
    pub fn clear(&mut self) {
        self.killers.fill([None; 2]);
        self.history.fill(0);
    }

    /// A new search: killers are positional, so they go; the history fades.
    pub fn new_search(&mut self) {
        self.killers.fill([None; 2]);
        for h in &mut self.history {
            *h /= 8;
        }
    }

    /// The ordering key of `m` at a node `ply` plies deep (higher first).
    pub fn key(&self, pos: &Position, m: Move, table_move: Option<Move>, ply: usize) -> i32 {
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
        self.history[index(pos.turn(), m)]
    }

    /// A quiet move caused a cut-off: it becomes the ply's first killer and gains history;
    /// the quiet moves tried before it (`failed`) lose some.
    pub fn reward(&mut self, side: Color, m: Move, failed: &[Move], depth: i32, ply: usize) {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_move_then_winning_captures_then_killers_then_history() {
        // The pawn takes on d5 and the blast takes the knight and the bishop next to it.
        let pos = Position::from_fen("4k3/8/2nb4/3p4/4P3/8/8/4K3 w - - 0 1").unwrap();
        let capture = pos.parse_uci("e4d5").unwrap();
        let quiet = pos.parse_uci("e1f1").unwrap();
        let other = pos.parse_uci("e1d1").unwrap();
        let mut o = Ordering::default();
        assert!(o.key(&pos, capture, None, 0) > o.key(&pos, quiet, None, 0));
        assert_eq!(o.key(&pos, quiet, Some(quiet), 0), TABLE_MOVE);
        o.reward(Color::White, quiet, &[other], 4, 3);
        assert_eq!(o.key(&pos, quiet, None, 3), KILLER);
        assert_eq!(o.key(&pos, quiet, None, 2), 16);
        assert_eq!(o.key(&pos, other, None, 2), -16);
        o.new_search();
        assert_eq!(o.key(&pos, quiet, None, 3), 2);
    }
}
