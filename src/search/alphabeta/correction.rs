//! Correction histories: running averages of how far searches of a node ended from its static
//! evaluation, keyed by what the evaluation tends to misjudge the same way every time it meets
//! it (the pawn structure; each side's pieces other than pawns), and added to the evaluation
//! of later nodes with the same key.
//!
//! Why: the static evaluation is a linear model fitted once, off-line; the search learns, in
//! this game, that (say) this pawn chain is worth more than the model says. Pruning decisions
//! (reverse futility, null move, futility) read the corrected value, so they err less often.
//! The quiescence search stands pat on the corrected value too (`AbCorrQsearch`).
//!
//! Tried and removed (session 11, docs/JOURNAL.md): a history keyed by the two moves that led to
//! the node, one keyed by the material counts, and entries that accumulate the residual instead
//! of blending towards it; none scored better against Fairy-Stockfish.

use atomic_chess::{Color, Position, Role};

use crate::search::SearchParams;
use crate::search::eval::MATE_BOUND;
use crate::search::mix64 as mix;

/// Entries per table and side to move (a power of two).
const SIZE: usize = 16_384;
/// Entries are centipawns times this.
const GRAIN: i32 = 256;
/// Weight of one update is `min(depth + 1, MAX_WEIGHT) / WEIGHT_SCALE`.
const WEIGHT_SCALE: i32 = 256;
const MAX_WEIGHT: i32 = 16;

/// The tables, indexed by side to move and key.
pub struct Correction {
    pawn: Box<[[i32; SIZE]; 2]>,
    /// By side to move, then by the colour whose pieces make the key.
    pieces: Box<[[[i32; SIZE]; 2]; 2]>,
}

impl Default for Correction {
    fn default() -> Self {
        Correction {
            pawn: Box::new([[0; SIZE]; 2]),
            pieces: Box::new([[[0; SIZE]; 2]; 2]),
        }
    }
}

fn index(key: u64) -> usize {
    key as usize & (SIZE - 1)
}

/// Odd multipliers per role for the piece keys: one independent multiply per bitboard, then
/// one mix (the keys are computed at every quiescence leaf, so no chain of mixes).
const ROLE_MUL: [u64; 6] = [
    0x9e37_79b9_7f4a_7c15,
    0xc2b2_ae3d_27d4_eb4f,
    0x1656_67b1_9e37_79f9,
    0x27d4_eb2f_1656_67c5,
    0x94d0_49bb_1331_11eb,
    0xbf58_476d_1ce4_e5b9,
];

/// The table indices of a position, with its side to move: pawns, White's pieces, Black's
/// pieces. Computed once per node, for the evaluation and the update.
#[derive(Clone, Copy)]
pub struct Keys {
    stm: usize,
    pawn: usize,
    pieces: [usize; 2],
}

impl Keys {
    pub fn of(pos: &Position) -> Keys {
        let b = pos.board();
        let pawns = b.by_role(Role::Pawn);
        let side_key = |c: Color, roles: &[Role]| {
            let ours = b.by_color(c);
            let sum = roles.iter().fold(0u64, |k, &r| {
                k.wrapping_add((ours & b.by_role(r)).0.wrapping_mul(ROLE_MUL[r.index()]))
            });
            index(mix(sum ^ c.index() as u64))
        };
        let white_pawns = (pawns & b.by_color(Color::White)).0;
        let black_pawns = (pawns & b.by_color(Color::Black)).0;
        let pieces = [
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
            Role::King,
        ];
        Keys {
            stm: pos.turn().index(),
            pawn: index(mix(
                white_pawns.wrapping_mul(ROLE_MUL[0]) ^ black_pawns.wrapping_mul(ROLE_MUL[5])
            )),
            pieces: [
                side_key(Color::White, &pieces),
                side_key(Color::Black, &pieces),
            ],
        }
    }
}

impl Correction {
    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        // In place: a new allocation would page-fault its way in again during the search.
        for side in self.pawn.iter_mut() {
            side.fill(0);
        }
        for side in self.pieces.iter_mut() {
            for colour in side.iter_mut() {
                colour.fill(0);
            }
        }
    }

    /// The correction (centipawns) to add to the static evaluation of `pos`, with the weights
    /// (pawns, pieces) in percent.
    pub fn correction(&self, k: Keys, weights: [i32; 2]) -> i32 {
        let stm = k.stm;
        let pawn = i64::from(self.pawn[stm][k.pawn]) * i64::from(weights[0]);
        let pieces = (i64::from(self.pieces[stm][0][k.pieces[0]])
            + i64::from(self.pieces[stm][1][k.pieces[1]]))
            * i64::from(weights[1])
            / 2;
        ((pawn + pieces) / (100 * i64::from(GRAIN))) as i32
    }

    /// `raw`, the static evaluation of the position whose keys are `k`, plus its correction.
    pub fn corrected(&self, raw: i32, k: Keys, params: &SearchParams) -> i32 {
        let c = self.correction(k, [params.ab_corr_pawn, params.ab_corr_pieces]);
        (raw + c).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
    }

    /// Moves the entries of the position with keys `k` towards `diff` (the searched value minus the corrected
    /// evaluation), by more for a deeper search; each entry stays within `max` centipawns.
    pub fn update(&mut self, k: Keys, diff: i32, depth: i32, max: i32) {
        debug_assert!(diff.abs() < 2 * MATE_BOUND);
        let stm = k.stm;
        let weight = (depth + 1).clamp(1, MAX_WEIGHT);
        let target = diff.clamp(-max, max) * GRAIN;
        let limit = max * GRAIN;
        let blend = |e: &mut i32| {
            let v = (i64::from(*e) * i64::from(WEIGHT_SCALE - weight)
                + i64::from(target) * i64::from(weight))
                / i64::from(WEIGHT_SCALE);
            *e = (v as i32).clamp(-limit, limit);
        };
        blend(&mut self.pawn[stm][k.pawn]);
        blend(&mut self.pieces[stm][0][k.pieces[0]]);
        blend(&mut self.pieces[stm][1][k.pieces[1]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_updates_converge_on_the_difference_and_stay_within_the_cap() {
        let pos = Position::from_fen("r3k2r/ppp2ppp/8/3p4/3P4/8/PPP2PPP/R3K2R w KQkq - 0 1")
            .expect("fen");
        let mut c = Correction::default();
        assert_eq!(c.correction(Keys::of(&pos), [100, 100]), 0);
        for _ in 0..400 {
            c.update(Keys::of(&pos), 40, 8, 64);
        }
        assert!((38..=40).contains(&c.correction(Keys::of(&pos), [100, 0])));
        assert!((38..=40).contains(&c.correction(Keys::of(&pos), [0, 100])));
        assert_eq!(c.correction(Keys::of(&pos), [0, 0]), 0);
        for _ in 0..400 {
            c.update(Keys::of(&pos), -500, 12, 64);
        }
        assert!(
            (-64..=-62).contains(&c.correction(Keys::of(&pos), [100, 0])),
            "capped at 64"
        );
        // The other side to move has its own entries.
        let black = Position::from_fen("r3k2r/ppp2ppp/8/3p4/3P4/8/PPP2PPP/R3K2R b KQkq - 0 1")
            .expect("fen");
        assert_eq!(c.correction(Keys::of(&black), [100, 100]), 0);
        c.clear();
        assert_eq!(c.correction(Keys::of(&pos), [100, 100]), 0);
    }
}
