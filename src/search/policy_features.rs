//! The move priors' features: a linear model over what a move does in atomic chess.
//!
//! A move's policy logit is `Σ weight × value` over the features below. The weights are Rust
//! constants (`policy_weights.rs`) fitted by `examples/tune_policy.rs` to Fairy-Stockfish's
//! choices (multinomial logistic regression: the softmax of the logits over the legal moves
//! should give FSF's move a high probability; docs/JOURNAL.md, "Session 5: a fitted policy").
//! Like the evaluation, one function ([`move_features`]) computes the features both for the
//! engine (a sink that sums the weights) and for the tuner (a sink that records them), so the
//! two cannot disagree.
//!
//! Two weight sets are fitted: one without and one with the static evaluation after the move
//! (its last feature). The search expands a node with the first (cheap) and recomputes the
//! priors with the second once the node has earned an evaluation per child
//! (`PriorEvalVisits`). A capture that blows up the enemy king is not part of the model: it
//! gets a fixed logit that dwarfs every other move.

use atomic_chess::{Bitboard, Board, Color, Move, Position, Role, Square, attacks};

use super::blast::{VALUE, blast_balance, blast_targets, blast_threats, piece_attacks};

/// Captures: the blast balance (enemy material destroyed minus ours) in pawns, rounded and
/// clamped to −10..=10, one entry per value.
pub const CAPTURE_BALANCE: usize = 0;
/// Captures: the victim's role (pawn..queen).
pub const CAPTURE_VICTIM: usize = CAPTURE_BALANCE + 21;
/// Captures: the capturer's role (pawn..king; a king never captures, so the last is unused).
pub const CAPTURE_ROLE: usize = CAPTURE_VICTIM + 5;
/// Captures: king-step distance from the blast's centre to the enemy king, 2..=7 (at 1 the
/// capture would blow the king up: a win, outside the model).
pub const CAPTURE_KING_DISTANCE: usize = CAPTURE_ROLE + 6;
/// Piece-square table of the destination per role (the promoted role for a promotion), the
/// square seen from the mover's side and mirrored onto files a–d, 32 entries per role.
pub const TO_SQUARE: usize = CAPTURE_KING_DISTANCE + 6;
/// Piece-square table of the origin per role (the pawn for a promotion).
pub const FROM_SQUARE: usize = TO_SQUARE + 6 * 32;
/// Quiet moves: the moved piece then attacks squares whose capture would blow up the enemy
/// king (a blast threat), 1 or 2 and more such squares.
pub const THREAT: usize = FROM_SQUARE + 6 * 32;
/// Quiet moves: a direct check.
pub const CHECK: usize = THREAT + 2;
/// Quiet moves to a square the enemy attacks: the material the cheapest attacker wins (the
/// moved piece's value minus the attacker's, in pawns, 0..=9; at least 0).
pub const HANGING: usize = CHECK + 1;
/// Quiet moves to an attacked square next to our own king while the kings do not touch (the
/// moved piece becomes a blast target).
pub const HANGING_NEAR_KING: usize = HANGING + 10;
/// The moved piece stood on a square the enemy attacks (it runs away), per role.
pub const ESCAPE: usize = HANGING_NEAR_KING + 1;
/// The moved piece leaves a square next to our king (one blast target fewer).
pub const LEAVES_KING_ZONE: usize = ESCAPE + 6;
/// Quiet moves: a non-king piece steps next to our king (one blast target more).
pub const ENTERS_KING_ZONE: usize = LEAVES_KING_ZONE + 1;
/// A king move onto a square touching the enemy king (touching kings cannot be blown up by
/// each other's captures).
pub const KING_TOUCH: usize = ENTERS_KING_ZONE + 1;
/// Castling.
pub const CASTLE: usize = KING_TOUCH + 1;
/// Promotion to knight, bishop, rook or queen.
pub const PROMOTION: usize = CASTLE + 1;
/// Quiet moves: enemy pieces other than pawns and the king the moved piece then attacks, 1, 2
/// or 3 and more.
pub const ATTACKS: usize = PROMOTION + 4;
/// Under a blast threat against our king: the move leaves none (it parries them all).
pub const PARRIES: usize = ATTACKS + 3;
/// Under a blast threat against our king: the move leaves one (it does not parry).
pub const IGNORES_THREAT: usize = PARRIES + 1;
/// The static evaluation after the move, from the mover's side, in pawns clamped to ±10. Only
/// in the second weight set.
pub const EVAL: usize = IGNORES_THREAT + 1;
/// Number of features.
pub const FEATURES: usize = EVAL + 1;

/// The name of each feature group with its first index, for the tuner's report.
pub const GROUPS: [(&str, usize); 21] = [
    ("capture_balance", CAPTURE_BALANCE),
    ("capture_victim", CAPTURE_VICTIM),
    ("capture_role", CAPTURE_ROLE),
    ("capture_king_distance", CAPTURE_KING_DISTANCE),
    ("to_square", TO_SQUARE),
    ("from_square", FROM_SQUARE),
    ("threat", THREAT),
    ("check", CHECK),
    ("hanging", HANGING),
    ("hanging_near_king", HANGING_NEAR_KING),
    ("escape", ESCAPE),
    ("leaves_king_zone", LEAVES_KING_ZONE),
    ("enters_king_zone", ENTERS_KING_ZONE),
    ("king_touch", KING_TOUCH),
    ("castle", CASTLE),
    ("promotion", PROMOTION),
    ("attacks", ATTACKS),
    ("parries", PARRIES),
    ("ignores_threat", IGNORES_THREAT),
    ("eval", EVAL),
    ("end", FEATURES),
];

/// Largest static evaluation (centipawns) the evaluation feature uses: beyond it the move is
/// decided by other means (a won or lost position).
pub const EVAL_CLAMP: i32 = 1000;

/// Receives the features of a move: `value` more of feature `index`.
pub trait PolicySink {
    /// Adds `value` of feature `index`.
    fn add(&mut self, index: usize, value: f32);
}

/// Sums the weights of the features (the logit itself).
struct Logit<'a> {
    weights: &'a [f32; FEATURES],
    sum: f32,
}

impl PolicySink for Logit<'_> {
    #[inline(always)]
    fn add(&mut self, index: usize, value: f32) {
        self.sum += self.weights[index] * value;
    }
}

/// What the features need about a position, computed once for all its moves.
pub struct PolicyContext {
    us: Color,
    occupied: Bitboard,
    their_king: Option<Square>,
    /// Squares whose capture by us would blow up their king.
    targets: Bitboard,
    /// Enemy pieces worth attacking: neither pawns nor the king.
    their_pieces: Bitboard,
    our_king_zone: Bitboard,
    their_king_zone: Bitboard,
    kings_touch: bool,
    /// Squares the enemy attacks (its king included), with the current occupancy.
    their_attacks: Bitboard,
    /// Our king is under a blast threat.
    threatened: bool,
}

impl PolicyContext {
    /// The context of `pos`, for moves of its side to move.
    pub fn new(pos: &Position) -> PolicyContext {
        let board = pos.board();
        let us = pos.turn();
        let occupied = board.occupied();
        let our_king = board.king_of(us);
        let their_king = board.king_of(!us);
        let their_non_king = board.by_color(!us) & !board.by_role(Role::King);
        let them = board.by_color(!us);
        let diagonal = them & (board.by_role(Role::Bishop) | board.by_role(Role::Queen));
        let straight = them & (board.by_role(Role::Rook) | board.by_role(Role::Queen));
        let mut their_attacks = their_king.map_or(Bitboard::EMPTY, attacks::king_attacks);
        for sq in them & board.by_role(Role::Pawn) {
            their_attacks |= attacks::pawn_attacks(!us, sq);
        }
        for sq in them & board.by_role(Role::Knight) {
            their_attacks |= attacks::knight_attacks(sq);
        }
        for sq in diagonal {
            their_attacks |= attacks::bishop_attacks(sq, occupied);
        }
        for sq in straight {
            their_attacks |= attacks::rook_attacks(sq, occupied);
        }
        PolicyContext {
            us,
            occupied,
            their_king,
            targets: blast_targets(pos, !us),
            their_pieces: their_non_king & !board.by_role(Role::Pawn),
            our_king_zone: our_king.map_or(Bitboard::EMPTY, attacks::king_attacks),
            their_king_zone: their_king.map_or(Bitboard::EMPTY, attacks::king_attacks),
            kings_touch: match (our_king, their_king) {
                (Some(a), Some(b)) => attacks::king_attacks(a).contains(b),
                _ => false,
            },
            their_attacks,
            threatened: blast_threats(pos, us) > 0,
        }
    }

    /// Our king is under a blast threat.
    pub fn threatened(&self) -> bool {
        self.threatened
    }
}

/// Index of `sq` in a 32-entry piece-square table of `color`: seen from its own side, files
/// mirrored onto a–d.
#[inline]
fn table_index(color: Color, sq: Square) -> usize {
    let rank = match color {
        Color::White => sq.rank(),
        Color::Black => 7 - sq.rank(),
    } as usize;
    let file = sq.file() as usize;
    rank * 4 + file.min(7 - file)
}

/// Value of the cheapest non-king piece among `attackers`.
#[inline]
fn cheapest_attacker(board: &Board, attackers: Bitboard) -> Option<i32> {
    [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
    ]
    .into_iter()
    .find(|&role| (attackers & board.by_role(role)).any())
    .map(|role| VALUE[role.index()])
}

fn king_distance(a: Square, b: Square) -> usize {
    let files = (a.file() as i32 - b.file() as i32).unsigned_abs();
    let ranks = (a.rank() as i32 - b.rank() as i32).unsigned_abs();
    files.max(ranks) as usize
}

/// The features of the legal move `m` of `pos` (not a capture that blows up the enemy king),
/// without the evaluation feature. Returns whether a blast threat against our king is open
/// after the move, found out (by playing it) only when one is open before it, else false.
pub fn move_features<S: PolicySink>(
    ctx: &PolicyContext,
    pos: &Position,
    m: Move,
    sink: &mut S,
) -> bool {
    let board = pos.board();
    let us = ctx.us;
    let moved = m.role();
    let role = m.promotion().unwrap_or(moved);
    let (from, to) = (m.from(), m.to());
    sink.add(TO_SQUARE + role.index() * 32 + table_index(us, to), 1.0);
    sink.add(
        FROM_SQUARE + moved.index() * 32 + table_index(us, from),
        1.0,
    );
    if ctx.their_attacks.contains(from) && moved != Role::King {
        sink.add(ESCAPE + moved.index(), 1.0);
    }
    if ctx.our_king_zone.contains(from) && moved != Role::King {
        sink.add(LEAVES_KING_ZONE, 1.0);
    }
    if let Some(promotion) = m.promotion() {
        sink.add(PROMOTION + promotion.index() - 1, 1.0);
    }
    if m.is_capture() {
        let pawns = blast_balance(pos, m) as f32 / 100.0;
        let bucket = pawns.round().clamp(-10.0, 10.0) as i32 + 10;
        sink.add(CAPTURE_BALANCE + bucket as usize, 1.0);
        let victim = m
            .capture_square()
            .and_then(|sq| board.piece_at(sq))
            .map_or(Role::Pawn, |piece| piece.role);
        if victim != Role::King {
            sink.add(CAPTURE_VICTIM + victim.index(), 1.0);
        }
        sink.add(CAPTURE_ROLE + moved.index(), 1.0);
        if let Some(king) = ctx.their_king {
            let distance = king_distance(to, king).clamp(2, 7);
            sink.add(CAPTURE_KING_DISTANCE + distance - 2, 1.0);
        }
    } else if m.is_castle() {
        sink.add(CASTLE, 1.0);
    } else {
        let after = (ctx.occupied & !from.bitboard()) | to.bitboard();
        if role == Role::King {
            if ctx.their_king_zone.contains(to) {
                sink.add(KING_TOUCH, 1.0);
            }
        } else {
            let reach = piece_attacks(role, us, to, after);
            match (reach & ctx.targets).count() {
                0 => {}
                1 => sink.add(THREAT, 1.0),
                _ => sink.add(THREAT + 1, 1.0),
            }
            if ctx.their_king.is_some_and(|k| reach.contains(k)) {
                sink.add(CHECK, 1.0);
            }
            match (reach & ctx.their_pieces).count() {
                0 => {}
                n => sink.add(ATTACKS + (n.min(3) - 1) as usize, 1.0),
            }
            if ctx.our_king_zone.contains(to) {
                sink.add(ENTERS_KING_ZONE, 1.0);
            }
            // Only a square the enemy attacks now, or one behind the vacated square (whose
            // attacker then attacks `from`), can be attacked after the move.
            if (ctx.their_attacks.contains(to) || ctx.their_attacks.contains(from))
                && let Some(cheapest) = cheapest_attacker(board, pos.attackers_to(to, !us, after))
            {
                let loss = (VALUE[role.index()] - cheapest).max(0) / 100;
                sink.add(HANGING + loss.min(9) as usize, 1.0);
                if ctx.our_king_zone.contains(to) && !ctx.kings_touch {
                    sink.add(HANGING_NEAR_KING, 1.0);
                }
            }
        }
    }
    if !ctx.threatened {
        return false;
    }
    let mut next = *pos;
    next.play_unchecked(m);
    let open = blast_threats(&next, us) > 0;
    sink.add(if open { IGNORES_THREAT } else { PARRIES }, 1.0);
    open
}

/// The evaluation feature's value for a static evaluation of `cp` centipawns after the move
/// (from the mover's side).
#[inline]
pub fn eval_feature(cp: i32) -> f32 {
    cp.clamp(-EVAL_CLAMP, EVAL_CLAMP) as f32 / 100.0
}

/// The logit of move `m` under `weights`, without the evaluation feature, and whether the move
/// leaves a blast threat open (see [`move_features`]).
#[inline]
pub fn logit(
    ctx: &PolicyContext,
    pos: &Position,
    m: Move,
    weights: &[f32; FEATURES],
) -> (f32, bool) {
    let mut sink = Logit { weights, sum: 0.0 };
    let open = move_features(ctx, pos, m, &mut sink);
    (sink.sum, open)
}
