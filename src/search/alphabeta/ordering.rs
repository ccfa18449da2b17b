//! Move ordering of the alpha-beta search: the table's move, then captures that do not lose
//! material by their blast balance, queen promotions, the two killer moves of the ply, quiet
//! moves by their history score, and captures that lose material last.
//!
//! A quiet move's history score is the butterfly history (side, from, to) plus, when the
//! continuation history is on, what the same piece going to the same square did after each of
//! the two moves before it (the previous move's and our own last one's continuation entries):
//! a reply that refuted a given move elsewhere in the tree is likely to refute it here.
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
/// Continuation-history entries tend to ± this (each update moves an entry towards it by the
/// bonus scaled by the distance still left: no entry saturates or overflows).
const CONT_MAX: i32 = 16_384;

/// A move's coordinate in the continuation history: the side that played it, its piece and its
/// destination (768 of them).
pub type Cont = u16;
/// No move (the root's parents, a null move): no continuation entry is read or written.
pub const NO_CONT: Cont = Cont::MAX;
const CONTS: usize = 2 * 6 * 64;

/// The coordinate of `m` played by `side`.
pub fn cont_of(side: Color, m: Move) -> Cont {
    ((side as usize * 6 + m.role() as usize) * 64 + m.to().index()) as Cont
}

/// The continuation coordinates of the two moves before a node: the previous move's (the
/// opponent's) and the one before it (our own last move).
pub type Prev = [Cont; 2];

/// Killer moves per ply, the history table (side, from, to) and the continuation history
/// (previous move's coordinate, this move's coordinate).
pub struct Ordering {
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
    /// `i16`: the entries stay within ±[`CONT_MAX`], and half the bytes keep more of the
    /// table (1.2 MB a thread) in the cache.
    cont: Vec<i16>,
}

impl Default for Ordering {
    fn default() -> Self {
        Ordering {
            killers: vec![[None; 2]; MAX_PLY],
            history: vec![0; 2 * 64 * 64],
            cont: vec![0; CONTS * CONTS],
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
        self.cont.fill(0);
    }

    /// A new search: killers are positional, so they go; the history fades.
    pub fn new_search(&mut self) {
        self.killers.fill([None; 2]);
        for h in &mut self.history {
            *h /= 8;
        }
        for h in &mut self.cont {
            *h /= 2;
        }
    }

    /// The continuation entry of `current` after `prev`, if there was a move before.
    fn cont_index(prev: Cont, current: Cont) -> Option<usize> {
        (prev != NO_CONT).then(|| prev as usize * CONTS + current as usize)
    }

    /// A quiet move's history score: butterfly plus continuation (see the module).
    fn quiet_score(&self, side: Color, m: Move, prev: &Prev) -> i32 {
        self.history[index(side, m)] + self.cont_score(side, m, prev)
    }

    /// The continuation entries of `m` after `prev`, summed (within ±2 [`CONT_MAX`]).
    fn cont_score(&self, side: Color, m: Move, prev: &Prev) -> i32 {
        let current = cont_of(side, m);
        prev.iter()
            .filter_map(|&p| Self::cont_index(p, current))
            .map(|i| i32::from(self.cont[i]))
            .sum()
    }

    /// Moves a continuation entry by `bonus` towards ±[`CONT_MAX`] (gravity).
    fn cont_update(&mut self, prev: &Prev, current: Cont, bonus: i32) {
        for &p in prev {
            if let Some(i) = Self::cont_index(p, current) {
                let h = i32::from(self.cont[i]);
                self.cont[i] = (h + bonus - h * bonus.abs() / CONT_MAX) as i16;
            }
        }
    }

    /// The ordering key of `m` at a node `ply` plies deep after the moves `prev` (higher
    /// first).
    pub fn key(
        &self,
        pos: &Position,
        m: Move,
        table_move: Option<Move>,
        ply: usize,
        prev: &Prev,
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
        self.quiet_score(pos.turn(), m, prev)
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
        prev: &Prev,
    ) {
        let killers = &mut self.killers[ply.min(MAX_PLY - 1)];
        if killers[0] != Some(m) {
            killers[1] = killers[0];
            killers[0] = Some(m);
        }
        let bonus = (depth * depth).min(400);
        let h = &mut self.history[index(side, m)];
        *h = (*h + bonus).min(HISTORY_MAX);
        self.cont_update(prev, cont_of(side, m), bonus);
        for &q in failed {
            let h = &mut self.history[index(side, q)];
            *h = (*h - bonus).max(-HISTORY_MAX);
            self.cont_update(prev, cont_of(side, q), -bonus);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomic_chess::Square;

    const NONE: Prev = [NO_CONT; 2];

    #[test]
    fn table_move_then_winning_captures_then_killers_then_history() {
        // The pawn takes on d5 and the blast takes the knight and the bishop next to it.
        let pos = Position::from_fen("4k3/8/2nb4/3p4/4P3/8/8/4K3 w - - 0 1").unwrap();
        let capture = pos.parse_uci("e4d5").unwrap();
        let quiet = pos.parse_uci("e1f1").unwrap();
        let other = pos.parse_uci("e1d1").unwrap();
        let mut o = Ordering::default();
        assert!(o.key(&pos, capture, None, 0, &NONE) > o.key(&pos, quiet, None, 0, &NONE));
        assert_eq!(o.key(&pos, quiet, Some(quiet), 0, &NONE), TABLE_MOVE);
        o.reward(Color::White, quiet, &[other], 4, 3, &NONE);
        assert_eq!(o.key(&pos, quiet, None, 3, &NONE), KILLER);
        assert_eq!(o.key(&pos, quiet, None, 2, &NONE), 16);
        assert_eq!(o.key(&pos, other, None, 2, &NONE), -16);
        o.new_search();
        assert_eq!(o.key(&pos, quiet, None, 3, &NONE), 2);
    }

    #[test]
    fn every_side_piece_and_square_has_its_own_coordinate() {
        let mut seen = vec![false; CONTS];
        for side in [Color::White, Color::Black] {
            for role in Role::ALL {
                for to in 0..64 {
                    let from = Square::new(if to == 0 { 1 } else { 0 });
                    let m = Move::normal(role, from, Square::new(to), false, None);
                    let c = cont_of(side, m) as usize;
                    assert!(c < CONTS && !seen[c], "{side:?} {role:?} {to}");
                    seen[c] = true;
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn the_continuation_history_ranks_a_reply_by_what_it_did_after_the_same_moves() {
        let pos = Position::from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1").unwrap();
        let reply = pos.parse_uci("a1a7").unwrap();
        let failed = pos.parse_uci("a1a8").unwrap();
        // Black's previous move: e7e5 or d7d5 (squares 52 to 36, 51 to 35).
        let pawn =
            |from, to| Move::normal(Role::Pawn, Square::new(from), Square::new(to), false, None);
        let after_e5: Prev = [cont_of(Color::Black, pawn(52, 36)), NO_CONT];
        let after_d5: Prev = [cont_of(Color::Black, pawn(51, 35)), NO_CONT];
        let mut o = Ordering::default();
        o.reward(Color::White, reply, &[failed], 4, 10, &after_e5);
        // The butterfly history moved both moves alike in every context; the continuation
        // entry only after the same previous move.
        let gain =
            |o: &Ordering, m, prev| o.key(&pos, m, None, 2, prev) - o.key(&pos, m, None, 2, &NONE);
        assert_eq!(gain(&o, reply, &after_e5), 16);
        assert_eq!(gain(&o, failed, &after_e5), -16);
        assert_eq!(gain(&o, reply, &after_d5), 0);
        let our_last_move_too: Prev = [after_d5[0], after_e5[0]];
        assert_eq!(gain(&o, reply, &our_last_move_too), 16);
        // Gravity: however often a move is rewarded, its entries stay within the bound.
        for depth in 1..40 {
            o.reward(Color::White, reply, &[failed], depth, 10, &after_e5);
            o.reward(Color::White, reply, &[failed], depth, 10, &after_e5);
        }
        assert!((1..=CONT_MAX).contains(&gain(&o, reply, &after_e5)));
        assert!((-CONT_MAX..=-1).contains(&gain(&o, failed, &after_e5)));
        assert_eq!(
            o.cont_score(Color::White, reply, &after_e5),
            gain(&o, reply, &after_e5)
        );
        o.clear();
        assert_eq!(o.cont_score(Color::White, reply, &after_e5), 0);
    }
}
