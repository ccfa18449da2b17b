//! The static evaluation's features: a linear model over counts that know atomic chess.
//!
//! The evaluation is `Σ weight × count` over the features below, each weight a pair (middle
//! game, endgame) blended by the game phase. The weights are Rust constants
//! (`eval_weights.rs`) fitted by `examples/tune_eval.rs` to Fairy-Stockfish's scores and
//! the game results of `labelled.csv` (docs/JOURNAL.md, "Session 3: evaluation"). One function,
//! [`extract`], computes the features both for the engine (a sink that sums the weights, no
//! allocation) and for the tuner (a sink that records them), so the two cannot disagree.
//!
//! Most features are per side: added with count `+n` for the side to move and `-n` for the
//! other. The last group describes the side to move's situation alone: a quiet leaf of the
//! quiescence search is one where the side to move has no capture worth making, while the
//! enemy's captures (blast threats on our king, our pieces it can win) were never searched.

use atomic_chess::{Bitboard, Color, Position, Role, Square, attacks};

/// Material count per role, pawn to queen.
pub const MATERIAL: usize = 0;
/// Piece-square tables per role (pawn..king), 32 entries each: the square seen from the
/// piece's own side, mirrored onto files a–d (`rank * 4 + min(file, 7 - file)`).
pub const PST: usize = MATERIAL + 5;
/// Knight mobility (attacked squares not holding an own piece), one entry per count 0..=8.
pub const MOB_KNIGHT: usize = PST + 6 * 32;
/// Bishop mobility, counts 0..=13.
pub const MOB_BISHOP: usize = MOB_KNIGHT + 9;
/// Rook mobility, counts 0..=14.
pub const MOB_ROOK: usize = MOB_BISHOP + 14;
/// Queen mobility, counts 0..=27.
pub const MOB_QUEEN: usize = MOB_ROOK + 15;
/// Squares next to the king attacked by the enemy, per count 0..=8.
pub const KING_ATTACKED: usize = MOB_QUEEN + 28;
/// Own pieces next to the own king and not next to the enemy king (each is a square whose
/// capture blows the king up), per count 0..=8.
pub const KING_TARGETS: usize = KING_ATTACKED + 9;
/// Empty squares next to the king the king could flee to (not attacked, or next to the enemy
/// king: kings may touch), per count 0..=8.
pub const KING_EVASIONS: usize = KING_TARGETS + 9;
/// Fairy-Stockfish's atomic king danger `20 × attacked / (evasions + 1) + 40 × explosions`,
/// linear (÷ 8) and squared (÷ 256): a king with attacked neighbours and nowhere to go is in
/// much more than twice the danger of one with half of that.
pub const KING_DANGER: usize = KING_EVASIONS + 9;
/// Isolated pawns (no own pawn on a neighbouring file). There is no doubled-pawn term: a pawn
/// that captures explodes, so atomic pawns never double.
pub const PAWN_ISOLATED: usize = KING_DANGER + 2;
/// Passed pawns per rank seen from their own side (0..=7; 1..=6 occur).
pub const PAWN_PASSED: usize = PAWN_ISOLATED + 1;
/// Side to move only: blast threats against its king (enemy captures that blow it up), one
/// entry per count 1, 2, 3 or more. One is usually parried, two rarely.
pub const STM_BLAST_THREATS: usize = PAWN_PASSED + 8;
/// Side to move only: the best blast balance among the enemy's captures of our pieces
/// (other than blast threats), in pawns: entry `min(gain / 100, 9)` for a gain > 0.
pub const STM_HANGING_MAX: usize = STM_BLAST_THREATS + 3;
/// Side to move only: how many of our pieces the enemy can take with a gain, 1, 2, 3 or more.
pub const STM_HANGING_COUNT: usize = STM_HANGING_MAX + 10;
/// Side to move only: the kings touch (neither can then be blown up by a capture next to it).
pub const STM_KINGS_TOUCH: usize = STM_HANGING_COUNT + 3;
/// Side to move only: a constant (the tempo).
pub const STM_TEMPO: usize = STM_KINGS_TOUCH + 1;
/// Enemy roles (pawn..queen) attacking a square next to the king: 1 per role that does.
pub const KING_ATTACKER_ROLES: usize = STM_TEMPO + 1;
/// Distance (king steps, 1..=7) from the king to the nearest enemy queen.
pub const QUEEN_DISTANCE: usize = KING_ATTACKER_ROLES + 5;
/// Side to move only: empty squares the enemy can move a piece to from which it would attack
/// one of our blast targets (a blast threat next move), per count 1, 2, 3 or more.
pub const STM_THREAT_MOVES_AGAINST: usize = QUEEN_DISTANCE + 8;
/// Side to move only: the same against the enemy king (our blast threats next move).
pub const STM_THREAT_MOVES_FOR: usize = STM_THREAT_MOVES_AGAINST + 3;
/// Number of features.
pub const FEATURES: usize = STM_THREAT_MOVES_FOR + 3;

/// Game phase at the start: knights and bishops 1, rooks 2, queens 4.
pub const MAX_PHASE: i32 = 24;
/// Weights are in this fraction of a centipawn, so that features with large counts (mobility,
/// the squared king danger) can have weights below one centipawn.
pub const WEIGHT_SCALE: i32 = 16;

/// The name of each feature group with its first index, for the tuner's report.
pub const GROUPS: [(&str, usize); 21] = [
    ("material", MATERIAL),
    ("pst", PST),
    ("mob_knight", MOB_KNIGHT),
    ("mob_bishop", MOB_BISHOP),
    ("mob_rook", MOB_ROOK),
    ("mob_queen", MOB_QUEEN),
    ("king_attacked", KING_ATTACKED),
    ("king_targets", KING_TARGETS),
    ("king_evasions", KING_EVASIONS),
    ("king_danger", KING_DANGER),
    ("pawn_isolated", PAWN_ISOLATED),
    ("pawn_passed", PAWN_PASSED),
    ("stm_blast_threats", STM_BLAST_THREATS),
    ("stm_hanging_max", STM_HANGING_MAX),
    ("stm_hanging_count", STM_HANGING_COUNT),
    ("stm_kings_touch", STM_KINGS_TOUCH),
    ("stm_tempo", STM_TEMPO),
    ("king_attacker_roles", KING_ATTACKER_ROLES),
    ("queen_distance", QUEEN_DISTANCE),
    ("stm_threat_moves_against", STM_THREAT_MOVES_AGAINST),
    ("stm_threat_moves_for", STM_THREAT_MOVES_FOR),
];

/// Middle-game and endgame weight per feature, in `1 / WEIGHT_SCALE` centipawns.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    /// Weights at full material (phase `MAX_PHASE`).
    pub mg: [i32; FEATURES],
    /// Weights with no pieces left (phase 0).
    pub eg: [i32; FEATURES],
}

/// Receives the features of a position: `count` more of feature `index`.
pub trait FeatureSink {
    /// Adds `count` (negative for the side not to move) of feature `index`.
    fn add(&mut self, index: usize, count: i32);
}

/// Sums the weights of the features (the evaluation itself).
struct Accumulator<'a> {
    weights: &'a Weights,
    mg: i32,
    eg: i32,
}

impl FeatureSink for Accumulator<'_> {
    #[inline(always)]
    fn add(&mut self, index: usize, count: i32) {
        self.mg += self.weights.mg[index] * count;
        self.eg += self.weights.eg[index] * count;
    }
}

/// The evaluation with `weights`, in centipawns from the side to move's point of view.
pub fn evaluate(pos: &Position, weights: &Weights) -> i32 {
    let mut acc = Accumulator {
        weights,
        mg: 0,
        eg: 0,
    };
    let phase = extract(pos, &mut acc);
    (acc.mg * phase + acc.eg * (MAX_PHASE - phase)) / (MAX_PHASE * WEIGHT_SCALE)
}

/// The weights of [`Weights`] packed one `i64` per feature for the engine's evaluation: the
/// middle-game weight times 2^32 plus the endgame weight. One multiply-add per feature then
/// sums both halves at once (the `mg` and `eg` arrays cost two of each). Exact: the low 32 bits
/// of the sum are the endgame sum (wrapping, as the `i32` sums), and subtracting them leaves
/// the middle-game sum times 2^32, as long as the endgame sum fits an `i32` (it is a few
/// thousand centipawns times `WEIGHT_SCALE`). A test checks it against [`evaluate`].
#[derive(Clone, Debug, PartialEq)]
pub struct PackedWeights {
    packed: [i64; FEATURES],
}

impl PackedWeights {
    /// Packs `weights` (at compile time for the engine's constant weights).
    pub const fn new(weights: &Weights) -> PackedWeights {
        let mut packed = [0i64; FEATURES];
        let mut i = 0;
        while i < FEATURES {
            packed[i] = ((weights.mg[i] as i64) << 32) + weights.eg[i] as i64;
            i += 1;
        }
        PackedWeights { packed }
    }
}

/// Sums the packed weights of the features.
struct PackedAccumulator<'a> {
    weights: &'a PackedWeights,
    sum: i64,
}

impl FeatureSink for PackedAccumulator<'_> {
    #[inline(always)]
    fn add(&mut self, index: usize, count: i32) {
        self.sum = self
            .sum
            .wrapping_add(self.weights.packed[index].wrapping_mul(i64::from(count)));
    }
}

/// [`evaluate`] with packed weights: the same value, computed faster.
pub fn evaluate_packed(pos: &Position, weights: &PackedWeights) -> i32 {
    let mut acc = PackedAccumulator { weights, sum: 0 };
    let phase = extract(pos, &mut acc);
    let eg = acc.sum as i32;
    let mg = (acc.sum.wrapping_sub(i64::from(eg)) >> 32) as i32;
    (mg * phase + eg * (MAX_PHASE - phase)) / (MAX_PHASE * WEIGHT_SCALE)
}

/// Nominal material values for blast balances (pawn..queen, king 0), as in the search.
const VALUE: [i32; 6] = [100, 300, 320, 480, 950, 0];

const FILE_A: u64 = 0x0101_0101_0101_0101;

/// Squares attacked by the pawns `pawns` of `color`.
#[inline]
fn pawn_attack_set(pawns: Bitboard, color: Color) -> Bitboard {
    let p = pawns.0;
    let not_a = p & !FILE_A;
    let not_h = p & !(FILE_A << 7);
    Bitboard(match color {
        Color::White => (not_a << 7) | (not_h << 9),
        Color::Black => (not_a >> 9) | (not_h >> 7),
    })
}

/// The piece-square table index of `sq` for a piece of `color`.
#[inline]
fn pst_index(sq: Square, color: Color) -> usize {
    usize::from(PST_INDEX[color.index()][sq.index()])
}

/// `pst_index` per colour and square, looked up rather than computed (it is needed for every
/// piece of every evaluation).
const PST_INDEX: [[u8; 64]; 2] = {
    let mut table = [[0u8; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let (rank, file) = (sq / 8, sq % 8);
        let mirrored = if file < 7 - file { file } else { 7 - file };
        table[0][sq] = (rank * 4 + mirrored) as u8;
        table[1][sq] = ((7 - rank) * 4 + mirrored) as u8;
        sq += 1;
    }
    table
};

/// What one side's pass leaves for the king and threat terms.
struct SideInfo {
    /// Squares attacked by the side's pawns, knights, bishops, rooks and queens (a king cannot
    /// capture in atomic, so its squares do not count).
    attacks: Bitboard,
    /// The same per attacking role, pawn to queen.
    by_role: [Bitboard; 5],
}

/// The files holding a square of `set`, as full files.
#[inline]
fn file_fill(set: u64) -> u64 {
    let mut x = set;
    x |= x >> 8;
    x |= x >> 16;
    x |= x >> 32;
    (x & 0xff).wrapping_mul(FILE_A)
}

/// `set` spread to the neighbouring files (without the files themselves).
#[inline]
fn neighbour_files(set: u64) -> u64 {
    ((set & !FILE_A) >> 1) | ((set & !(FILE_A << 7)) << 1)
}

/// Material, piece-square, mobility and pawn-structure features of `color`, with sign `sign`.
#[inline]
fn side_features<S: FeatureSink>(
    pos: &Position,
    color: Color,
    sign: i32,
    sink: &mut S,
) -> SideInfo {
    let board = pos.board();
    let occupied = board.occupied();
    let own = board.by_color(color);
    let not_own = !own;
    let pawns = own & board.by_role(Role::Pawn);
    // One loop per role (in the order pawn to queen, each piece's terms then the role's
    // material), so that no piece dispatches on its role.
    if pawns.any() {
        let table = PST + Role::Pawn.index() * 32;
        for sq in pawns {
            sink.add(table + pst_index(sq, color), sign);
        }
        sink.add(MATERIAL, sign * pawns.count() as i32);
    }
    // One call per role, so that each role's attack function is inlined into its own loop.
    macro_rules! role_terms {
        ($role:expr, $mobility:expr, $reach:expr) => {
            piece_terms(
                own & board.by_role($role),
                $role,
                $mobility,
                (color, not_own, sign),
                sink,
                $reach,
            )
        };
    }
    let by_role = [
        pawn_attack_set(pawns, color),
        role_terms!(Role::Knight, MOB_KNIGHT, attacks::knight_attacks),
        role_terms!(Role::Bishop, MOB_BISHOP, |sq| attacks::bishop_attacks(
            sq, occupied
        )),
        role_terms!(Role::Rook, MOB_ROOK, |sq| attacks::rook_attacks(
            sq, occupied
        )),
        role_terms!(Role::Queen, MOB_QUEEN, |sq| attacks::queen_attacks(
            sq, occupied
        )),
    ];
    if let Some(king) = board.king_of(color) {
        sink.add(PST + Role::King.index() * 32 + pst_index(king, color), sign);
    }
    if pawns.any() {
        // Isolated pawns: no own pawn on a neighbouring file.
        let isolated = (pawns.0 & !neighbour_files(file_fill(pawns.0))).count_ones() as i32;
        if isolated > 0 {
            sink.add(PAWN_ISOLATED, sign * isolated);
        }
        // Passed pawns: no enemy pawn ahead on the same or a neighbouring file. `blocked` is
        // every square behind (from our side) an enemy pawn, spread to the neighbouring files.
        let their_pawns = (board.by_color(!color) & board.by_role(Role::Pawn)).0;
        let mut behind = match color {
            Color::White => their_pawns >> 8,
            Color::Black => their_pawns << 8,
        };
        for shift in [8, 16, 32] {
            behind |= match color {
                Color::White => behind >> shift,
                Color::Black => behind << shift,
            };
        }
        let blocked = behind | neighbour_files(behind);
        for sq in Bitboard(pawns.0 & !blocked) {
            let relative = match color {
                Color::White => sq.rank(),
                Color::Black => 7 - sq.rank(),
            };
            sink.add(PAWN_PASSED + relative as usize, sign);
        }
    }
    SideInfo {
        attacks: by_role[0] | by_role[1] | by_role[2] | by_role[3] | by_role[4],
        by_role,
    }
}

/// Piece-square, mobility (first index `mobility`) and material features of `pieces`, all of
/// role `role` and of `side = (colour, squares not holding an own piece, sign)`, whose attacks
/// `reach` gives; returns the squares they attack.
#[inline(always)]
fn piece_terms<S: FeatureSink>(
    pieces: Bitboard,
    role: Role,
    mobility: usize,
    side: (Color, Bitboard, i32),
    sink: &mut S,
    reach: impl Fn(Square) -> Bitboard,
) -> Bitboard {
    let (color, not_own, sign) = side;
    let mut all = Bitboard::EMPTY;
    if pieces.is_empty() {
        return all;
    }
    let table = PST + role.index() * 32;
    for sq in pieces {
        sink.add(table + pst_index(sq, color), sign);
        let squares = reach(sq);
        all |= squares;
        sink.add(mobility + (squares & not_own).count() as usize, sign);
    }
    sink.add(MATERIAL + role.index(), sign * pieces.count() as i32);
    all
}

/// Nominal value (`VALUE`) of the knights, bishops, rooks and queens in `set`.
#[inline]
fn piece_value(pos: &Position, set: Bitboard) -> i32 {
    let board = pos.board();
    [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
        .into_iter()
        .map(|role| (set & board.by_role(role)).count() as i32 * VALUE[role.index()])
        .sum()
}

/// King-safety features of `color` against the enemy attack set `enemy_attacks`; returns the
/// number of blast threats (own pieces next to the king that the enemy attacks).
#[inline]
fn king_features<S: FeatureSink>(
    pos: &Position,
    color: Color,
    sign: i32,
    enemy: &SideInfo,
    sink: &mut S,
) -> (u32, u32) {
    let enemy_attacks = enemy.attacks;
    let board = pos.board();
    let Some(king) = board.king_of(color) else {
        return (0, 0);
    };
    let zone = attacks::king_attacks(king);
    let enemy_zone = board
        .king_of(!color)
        .map_or(Bitboard::EMPTY, attacks::king_attacks);
    let targets = zone & board.by_color(color) & !enemy_zone;
    let attacked = (zone & enemy_attacks).count();
    let evasions = (zone & !board.occupied() & (!enemy_attacks | enemy_zone)).count();
    let explosions = (targets & enemy_attacks).count();
    sink.add(KING_ATTACKED + attacked as usize, sign);
    sink.add(KING_TARGETS + targets.count() as usize, sign);
    sink.add(KING_EVASIONS + evasions as usize, sign);
    let danger = (20 * attacked / (evasions + 1) + 40 * explosions) as i32;
    if danger > 0 {
        sink.add(KING_DANGER, sign * danger / 8);
        sink.add(KING_DANGER + 1, sign * danger * danger / 256);
    }
    for (role, attacked) in enemy.by_role.iter().enumerate() {
        if attacked.intersects(zone) {
            sink.add(KING_ATTACKER_ROLES + role, sign);
        }
    }
    let enemy_pieces = board.by_color(!color);
    let queens = enemy_pieces & board.by_role(Role::Queen);
    if queens.any() {
        let distance = queens
            .map(|q| {
                let files = (i32::from(q.file()) - i32::from(king.file())).abs();
                let ranks = (i32::from(q.rank()) - i32::from(king.rank())).abs();
                files.max(ranks)
            })
            .min()
            .unwrap_or(7);
        sink.add(QUEEN_DISTANCE + distance as usize, sign);
    }
    // Empty squares an enemy piece can move to and from which it would attack a target.
    let occupied = board.occupied();
    let knights = enemy.by_role[1].any();
    let diagonal = (enemy.by_role[2] | enemy.by_role[4]).any();
    let straight = (enemy.by_role[3] | enemy.by_role[4]).any();
    let mut lines_b = Bitboard::EMPTY;
    let mut lines_r = Bitboard::EMPTY;
    let mut lines_n = Bitboard::EMPTY;
    for t in targets {
        if diagonal {
            lines_b |= attacks::bishop_attacks(t, occupied);
        }
        if straight {
            lines_r |= attacks::rook_attacks(t, occupied);
        }
        if knights {
            lines_n |= attacks::knight_attacks(t);
        }
    }
    let threat_moves = ((lines_n & enemy.by_role[1])
        | (lines_b & (enemy.by_role[2] | enemy.by_role[4]))
        | (lines_r & (enemy.by_role[3] | enemy.by_role[4])))
        & !occupied;
    (explosions, threat_moves.count())
}

/// Computes the features of `pos` into `sink` and returns the game phase (0..=`MAX_PHASE`).
pub fn extract<S: FeatureSink>(pos: &Position, sink: &mut S) -> i32 {
    let us = pos.turn();
    let ours = side_features(pos, us, 1, sink);
    let theirs = side_features(pos, !us, -1, sink);
    let (threats, threat_moves_against) = king_features(pos, us, 1, &theirs, sink);
    let (_, threat_moves_for) = king_features(pos, !us, -1, &ours, sink);
    if threat_moves_against > 0 {
        sink.add(
            STM_THREAT_MOVES_AGAINST + threat_moves_against.min(3) as usize - 1,
            1,
        );
    }
    if threat_moves_for > 0 {
        sink.add(
            STM_THREAT_MOVES_FOR + threat_moves_for.min(3) as usize - 1,
            1,
        );
    }
    let board = pos.board();
    if threats > 0 {
        // Exact count: an attacked square next to both kings is not a threat (excluded in
        // `king_features`), and every enemy attack counts only with a non-king attacker.
        sink.add(STM_BLAST_THREATS + threats.min(3) as usize - 1, 1);
    }
    // Our pieces the enemy can take with a gain (their captures were not searched).
    let our_king = board.king_of(us);
    let their_king = board.king_of(!us);
    let their_non_king = board.by_color(!us) & !board.by_role(Role::King);
    let exposed = board.by_color(us) & !board.by_role(Role::King) & theirs.attacks;
    let mut best_gain = 0;
    let mut hanging = 0;
    for sq in exposed {
        let blast = attacks::king_attacks(sq);
        if our_king.is_some_and(|k| blast.contains(k))
            || their_king.is_some_and(|k| blast.contains(k))
        {
            // A blast threat (counted above) or an illegal capture.
            continue;
        }
        // The capturer dies: the cheapest attacking role, and if a piece of that role stands
        // in the blast and attacks, that one (it is lost in the blast anyway).
        let Some(cheapest) = (0..5).find(|&r| theirs.by_role[r].contains(sq)) else {
            continue;
        };
        let victim = board.role_at(sq).map_or(0, |r| VALUE[r.index()]);
        let pieces = blast & !board.by_role(Role::Pawn);
        let adjacent_attacker = match cheapest {
            2 => attacks::bishop_attacks(sq, Bitboard::FULL) & board.by_role(Role::Bishop),
            3 => attacks::rook_attacks(sq, Bitboard::FULL) & board.by_role(Role::Rook),
            4 => blast & board.by_role(Role::Queen),
            _ => Bitboard::EMPTY,
        } & their_non_king;
        let mut gain = victim + piece_value(pos, pieces & board.by_color(us))
            - piece_value(pos, pieces & their_non_king);
        if adjacent_attacker.is_empty() {
            gain -= VALUE[cheapest];
        }
        if gain > 0 {
            hanging += 1;
            best_gain = best_gain.max(gain);
        }
    }
    if hanging > 0 {
        sink.add(STM_HANGING_MAX + (best_gain / 100).min(9) as usize, 1);
        sink.add(STM_HANGING_COUNT + hanging.min(3) - 1, 1);
    }
    if let (Some(a), Some(b)) = (our_king, their_king)
        && attacks::king_attacks(a).contains(b)
    {
        sink.add(STM_KINGS_TOUCH, 1);
    }
    sink.add(STM_TEMPO, 1);
    let phase = ((board.by_role(Role::Knight) | board.by_role(Role::Bishop)).count()
        + 2 * board.by_role(Role::Rook).count()
        + 4 * board.by_role(Role::Queen).count()) as i32;
    phase.min(MAX_PHASE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pst_index_table_mirrors_files_and_flips_ranks_for_black() {
        for sq in (0..64).map(Square::new) {
            let file = sq.file().min(7 - sq.file()) as usize;
            assert_eq!(pst_index(sq, Color::White), sq.rank() as usize * 4 + file);
            assert_eq!(
                pst_index(sq, Color::Black),
                (7 - sq.rank()) as usize * 4 + file
            );
        }
    }
}
