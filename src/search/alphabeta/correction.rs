//! Correction histories: running averages of how far searches of a node ended from its static
//! evaluation, keyed by what the evaluation tends to misjudge the same way every time it meets
//! it (the pawn structure; each side's pieces other than pawns; the material, counted; the two
//! moves that led to the node), and added to the evaluation of later nodes with the same key.
//!
//! Why: the static evaluation is a linear model fitted once, off-line; the search learns, in
//! this game, that (say) this pawn chain is worth more than the model says. Pruning decisions
//! (reverse futility, null move, futility) read the corrected value, so they err less often.
//! The move-pair ("continuation") history catches what a structure key cannot: the same
//! attacking manoeuvre (a knight landing next to the king after a queen move) misjudged the
//! same way wherever the other men stand. The quiescence search knows no moves, so its leaves
//! get the structure corrections only.

use atomic_chess::{Color, Position, Role};

use super::ordering::PIECE_TO;
use crate::search::SearchParams;
use crate::search::eval::{self, MATE_BOUND};

/// Entries per table and side to move (a power of two).
const SIZE: usize = 16_384;
/// Entries are centipawns times this.
const GRAIN: i32 = 256;
/// Weight of one update is `min(depth + 1, MAX_WEIGHT) / WEIGHT_SCALE`.
const WEIGHT_SCALE: i32 = 256;
const MAX_WEIGHT: i32 = 16;
/// Rows of the move-pair table: every (piece, destination) and "no move".
const PAIRS: usize = PIECE_TO + 1;
/// `Keys::cont` when the moves are not known (quiescence leaves).
const NO_CONT: usize = usize::MAX;

/// The tables, indexed by side to move and key.
pub struct Correction {
    pawn: Box<[[i32; SIZE]; 2]>,
    /// By side to move, then by the colour whose pieces make the key.
    pieces: Box<[[[i32; SIZE]; 2]; 2]>,
    /// By side to move: the count of each role of each side.
    material: Box<[[i32; SIZE]; 2]>,
    /// By side to move, then the (piece, destination) of the moves two plies and one ply
    /// before, `earlier * PAIRS + previous`.
    cont: [Vec<i32>; 2],
}

impl Default for Correction {
    fn default() -> Self {
        Correction {
            pawn: Box::new([[0; SIZE]; 2]),
            pieces: Box::new([[[0; SIZE]; 2]; 2]),
            material: Box::new([[0; SIZE]; 2]),
            cont: [vec![0; PAIRS * PAIRS], vec![0; PAIRS * PAIRS]],
        }
    }
}

/// A 64-bit mix (the finaliser of splitmix64): nearby bitboards get unrelated keys.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
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
    material: usize,
    /// Index in the move-pair table, or `NO_CONT`.
    cont: usize,
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
            material: {
                // Four bits per (colour, role) count except kings: 40 bits, then one mix.
                let mut sig = 0u64;
                for color in [Color::White, Color::Black] {
                    for role in [
                        Role::Pawn,
                        Role::Knight,
                        Role::Bishop,
                        Role::Rook,
                        Role::Queen,
                    ] {
                        let n = (b.by_color(color) & b.by_role(role)).0.count_ones();
                        sig = (sig << 4) | u64::from(n.min(15));
                    }
                }
                index(mix(sig))
            },
            cont: NO_CONT,
        }
    }

    /// The keys with the move pair that led to the position: the (piece, destination) of the
    /// move one ply and two plies before (`ordering::NO_PIECE_TO` for none or a null move).
    pub fn with_moves(self, previous: usize, earlier: usize) -> Keys {
        debug_assert!(previous < PAIRS && earlier < PAIRS);
        Keys {
            cont: earlier * PAIRS + previous,
            ..self
        }
    }
}

impl Correction {
    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        // In place: a new allocation would page-fault its way in again during the search.
        for side in self.pawn.iter_mut().chain(self.material.iter_mut()) {
            side.fill(0);
        }
        for side in self.pieces.iter_mut() {
            for colour in side.iter_mut() {
                colour.fill(0);
            }
        }
        for side in &mut self.cont {
            side.fill(0);
        }
    }

    /// The correction (centipawns) to add to the static evaluation of `pos`, with the weights
    /// (pawns, pieces, move pair, material) in percent.
    pub fn correction(&self, k: Keys, weights: [i32; 4]) -> i32 {
        let stm = k.stm;
        let pawn = i64::from(self.pawn[stm][k.pawn]) * i64::from(weights[0]);
        let pieces = (i64::from(self.pieces[stm][0][k.pieces[0]])
            + i64::from(self.pieces[stm][1][k.pieces[1]]))
            * i64::from(weights[1])
            / 2;
        let cont = if k.cont == NO_CONT {
            0
        } else {
            i64::from(self.cont[stm][k.cont]) * i64::from(weights[2])
        };
        let material = i64::from(self.material[stm][k.material]) * i64::from(weights[3]);
        ((pawn + pieces + cont + material) / (100 * i64::from(GRAIN))) as i32
    }

    /// The static evaluation of `pos` (whose keys are `k`) plus its correction with the
    /// weights of `params`.
    pub fn corrected_eval(&self, pos: &Position, k: Keys, params: &SearchParams) -> i32 {
        let c = self.correction(
            k,
            [
                params.ab_corr_pawn,
                params.ab_corr_pieces,
                params.ab_corr_cont,
                params.ab_corr_material,
            ],
        );
        (eval::static_eval(pos) + c).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
    }

    /// Moves the entries of `pos` towards `diff` (the searched value minus the corrected
    /// evaluation), by more for a deeper search; each entry stays within `max` centipawns.
    /// `accumulate`: adds a share of `diff` to each entry instead (the entries together are
    /// then a linear model fitted to the residual by gradient steps, and the corrected
    /// evaluation converges on the searched value, where blending stops short of it).
    pub fn update(&mut self, k: Keys, diff: i32, depth: i32, max: i32, accumulate: bool) {
        debug_assert!(diff.abs() < 2 * MATE_BOUND);
        let stm = k.stm;
        let weight = (depth + 1).clamp(1, MAX_WEIGHT);
        let target = diff.clamp(-max, max) * GRAIN;
        let limit = max * GRAIN;
        let blend = |e: &mut i32| {
            let v = if accumulate {
                i64::from(*e) + i64::from(target) * i64::from(weight) / i64::from(WEIGHT_SCALE)
            } else {
                (i64::from(*e) * i64::from(WEIGHT_SCALE - weight)
                    + i64::from(target) * i64::from(weight))
                    / i64::from(WEIGHT_SCALE)
            };
            *e = (v as i32).clamp(-limit, limit);
        };
        blend(&mut self.pawn[stm][k.pawn]);
        blend(&mut self.pieces[stm][0][k.pieces[0]]);
        blend(&mut self.pieces[stm][1][k.pieces[1]]);
        blend(&mut self.material[stm][k.material]);
        if k.cont != NO_CONT {
            blend(&mut self.cont[stm][k.cont]);
        }
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
        assert_eq!(c.correction(Keys::of(&pos), [100, 100, 100, 100]), 0);
        for _ in 0..400 {
            c.update(Keys::of(&pos), 40, 8, 64, false);
        }
        assert!((38..=40).contains(&c.correction(Keys::of(&pos), [100, 0, 0, 0])));
        assert!((38..=40).contains(&c.correction(Keys::of(&pos), [0, 100, 0, 0])));
        assert!((38..=40).contains(&c.correction(Keys::of(&pos), [0, 0, 0, 100])));
        assert_eq!(c.correction(Keys::of(&pos), [0, 0, 0, 0]), 0);
        for _ in 0..400 {
            c.update(Keys::of(&pos), -500, 12, 64, false);
        }
        assert!(
            (-64..=-62).contains(&c.correction(Keys::of(&pos), [100, 0, 0, 0])),
            "capped at 64"
        );
        // The other side to move has its own entries.
        let black = Position::from_fen("r3k2r/ppp2ppp/8/3p4/3P4/8/PPP2PPP/R3K2R b KQkq - 0 1")
            .expect("fen");
        assert_eq!(c.correction(Keys::of(&black), [100, 100, 100, 100]), 0);
        c.clear();
        assert_eq!(c.correction(Keys::of(&pos), [100, 100, 100, 100]), 0);
    }

    #[test]
    fn the_move_pair_entry_is_read_only_with_the_same_moves() {
        let pos = Position::from_fen("r3k2r/ppp2ppp/8/3p4/3P4/8/PPP2PPP/R3K2R w KQkq - 0 1")
            .expect("fen");
        let mut c = Correction::default();
        let with = Keys::of(&pos).with_moves(5, 700);
        for _ in 0..400 {
            c.update(with, -30, 8, 64, false);
        }
        assert!((-30..=-28).contains(&c.correction(with, [0, 0, 100, 0])));
        // Without moves (a quiescence leaf) or after other moves: the structure entries only.
        assert_eq!(c.correction(Keys::of(&pos), [0, 0, 100, 0]), 0);
        assert_eq!(
            c.correction(Keys::of(&pos).with_moves(700, 5), [0, 0, 100, 0]),
            0
        );
        let no_move = super::super::ordering::NO_PIECE_TO;
        assert_eq!(
            c.correction(Keys::of(&pos).with_moves(no_move, no_move), [0, 0, 100, 0]),
            0
        );
        assert!((-30..=-28).contains(&c.correction(Keys::of(&pos), [100, 0, 0, 0])));
    }

    #[test]
    fn accumulated_entries_correct_the_whole_error_where_blended_ones_stop_short() {
        let pos = Position::from_fen("r3k2r/ppp2ppp/8/3p4/3P4/8/PPP2PPP/R3K2R w KQkq - 0 1")
            .expect("fen");
        let k = Keys::of(&pos);
        let weights = [100, 100, 0, 100];
        // The search keeps finding 60 cp more than the static evaluation.
        let run = |accumulate: bool| {
            let mut c = Correction::default();
            for _ in 0..2000 {
                let diff = 60 - c.correction(k, weights);
                c.update(k, diff, 8, 128, accumulate);
            }
            c.correction(k, weights)
        };
        assert!((57..=60).contains(&run(true)), "{}", run(true));
        let blended = run(false);
        assert!((20..=45).contains(&blended), "{blended}");
    }
}
