//! Atomic knowledge: the static evaluation, the leaf quiescence search and the move priors.
//!
//! In atomic a capture removes the capturer, the victim and every non-pawn piece next to the
//! victim's square, and a king in the blast loses the game. So the "exchange value" of a capture
//! is its *blast balance* (the enemy material in the blast minus ours, the capturer included),
//! and the main danger is an enemy piece attacking one of our pieces that stands next to our
//! king: taking it blows the king up. Fairy-Stockfish's `blast_see` and its explosion-threat
//! king-danger term are the models (see docs/ENGINE.md).

use atomic_chess::{Bitboard, Color, Move, MoveList, Position, Role, Square, attacks};

use super::eval_weights::WEIGHTS;
use super::features;
use super::params::SearchParams;
use super::policy::{self, PolicyContext};
use super::policy_weights;

/// Score of a won position (centipawns), minus the plies to the win.
pub const MATE: i32 = 32_000;
/// Scores beyond this are wins or losses found by the quiescence search.
pub const MATE_BOUND: i32 = MATE - 1000;

/// Material values in centipawns, indexed by `Role::index()`. The king's value is irrelevant:
/// its loss ends the game and is handled separately.
pub(crate) const VALUE: [i32; 6] = [100, 300, 320, 480, 950, 0];

/// Policy logit of a capture that blows up the enemy king: it dwarfs every other move's.
const WIN_LOGIT: f32 = 30.0;

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

/// Static evaluation in centipawns from the side to move's point of view: the fitted linear
/// model of [`super::features`] (material, piece squares, mobility, king danger, pawn structure
/// and the enemy's unsearched threats) with the weights of [`super::eval_weights`].
///
/// A position of two kings and one other unit is a draw by knowledge ([`lone_unit_draw`]): 0.
pub fn static_eval(pos: &Position) -> i32 {
    if lone_unit_draw(pos) {
        return 0;
    }
    features::evaluate_packed(pos, &PACKED_WEIGHTS)
}

/// Whether `pos` is two kings and one other piece or pawn: a draw with correct defence that
/// the linear evaluation cannot see (it counts a lone queen as nine pawns). A bare king cannot
/// be blown up (no piece of its own stands next to it to capture) and cannot be checked while
/// it touches the enemy king, so it walks next to that king and stays there: king and queen
/// (or rook, or a pawn that promotes) against a bare king is a draw, and king and minor piece
/// is insufficient material. Of the 2 179 king-and-queen-against-king positions in
/// `labelled.csv` and `data/eval-games-fsf20k.csv.gz`, Fairy-Stockfish scores 2 134 within
/// three pawns of level (docs/ENGINE.md, "Session 7"). The search still finds a mate that
/// exists, as a terminal position, before any evaluation.
pub fn lone_unit_draw(pos: &Position) -> bool {
    let board = pos.board();
    board.occupied().count() == 3
        && board.king_of(Color::White).is_some()
        && board.king_of(Color::Black).is_some()
}

/// [`WEIGHTS`] packed for the fast evaluation (the same values).
static PACKED_WEIGHTS: features::PackedWeights = features::PackedWeights::new(&WEIGHTS);

/// Converts a score in centipawns to a win probability for the side to move.
pub fn win_probability(cp: i32, scale: f32) -> f32 {
    if cp >= MATE_BOUND {
        return 0.98;
    }
    if cp <= -MATE_BOUND {
        return 0.02;
    }
    1.0 / (1.0 + (-(cp as f32) / scale).exp())
}

/// Converts a win probability back to centipawns (for `score cp`).
pub fn centipawns(probability: f32, scale: f32) -> i32 {
    let p = probability.clamp(0.0005, 0.9995);
    ((p / (1.0 - p)).ln() * scale).round() as i32
}

/// Counts positions visited by the quiescence search (part of the bench signature).
#[derive(Clone, Copy, Debug, Default)]
pub struct QStats {
    /// Positions visited.
    pub nodes: u64,
}

/// Quiescence search of a leaf whose legal moves are already known: captures with a
/// non-negative blast balance (all moves when in check), stand pat otherwise.
pub fn qsearch_root(
    pos: &Position,
    moves: &MoveList,
    params: &SearchParams,
    stats: &mut QStats,
) -> i32 {
    qsearch_moves(
        pos,
        moves.as_slice(),
        pos.is_check(),
        -MATE,
        MATE,
        params.qsearch_depth,
        0,
        params,
        stats,
        &static_eval,
    )
}

/// The quiescence search of `pos` within the window `(alpha, beta)`, `ply` plies from the
/// root of a tree search (mate scores count from there). `leaf` evaluates the positions it
/// stands pat in: the static evaluation, or the alpha-beta search's corrected one.
pub fn qsearch_window(
    pos: &Position,
    alpha: i32,
    beta: i32,
    ply: u32,
    params: &SearchParams,
    stats: &mut QStats,
    leaf: &impl Fn(&Position) -> i32,
) -> i32 {
    qsearch(
        pos,
        alpha,
        beta,
        params.qsearch_depth,
        ply,
        params,
        stats,
        leaf,
    )
}

#[allow(clippy::too_many_arguments)]
fn qsearch(
    pos: &Position,
    alpha: i32,
    beta: i32,
    depth: u32,
    ply: u32,
    params: &SearchParams,
    stats: &mut QStats,
    leaf: &impl Fn(&Position) -> i32,
) -> i32 {
    // Out of check only captures and promotions are searched, and the other moves matter only
    // if there are none: then the position is a stalemate or a stand pat.
    let mut moves = MoveList::new();
    let in_check = pos.is_check();
    if in_check {
        pos.legal_moves_into(&mut moves);
    } else {
        pos.noisy_moves_into(&mut moves);
        if moves.is_empty() {
            stats.nodes += 1;
            return if pos.has_legal_moves() { leaf(pos) } else { 0 };
        }
    }
    qsearch_moves(
        pos,
        moves.as_slice(),
        in_check,
        alpha,
        beta,
        depth,
        ply,
        params,
        stats,
        leaf,
    )
}

#[allow(clippy::too_many_arguments)]
fn qsearch_moves(
    pos: &Position,
    moves: &[Move],
    in_check: bool,
    mut alpha: i32,
    beta: i32,
    depth: u32,
    ply: u32,
    params: &SearchParams,
    stats: &mut QStats,
    leaf: &impl Fn(&Position) -> i32,
) -> i32 {
    stats.nodes += 1;
    if moves.is_empty() {
        return if in_check { -MATE + ply as i32 } else { 0 };
    }
    if moves.iter().any(|&m| wins_at_once(pos, m)) {
        return MATE - ply as i32 - 1;
    }
    if pos.board().king_of(pos.turn()).is_none() {
        return -MATE + ply as i32;
    }
    let mut best = -MATE + ply as i32;
    if !in_check {
        let stand = leaf(pos);
        if stand >= beta || depth == 0 {
            return stand;
        }
        alpha = alpha.max(stand);
        best = stand;
    } else if depth == 0 {
        return leaf(pos);
    }
    let candidates = quiescence_moves(pos, moves, in_check);
    for &(_, m) in &candidates {
        let mut child = *pos;
        child.play_unchecked(m);
        let score = -qsearch(
            &child,
            -beta,
            -alpha,
            depth - 1,
            ply + 1,
            params,
            stats,
            leaf,
        );
        if score > best {
            best = score;
            if score > alpha {
                alpha = score;
                if alpha >= beta {
                    break;
                }
            }
        }
    }
    best
}

/// The moves a quiescence node searches, best first: captures by blast balance (only those
/// that do not lose material unless in check), queen promotions, and when in check every other
/// move last; ties in generation order. Shared with the evaluation tuner, whose copy of the
/// quiescence search must visit exactly the engine's leaves.
pub fn quiescence_moves(
    pos: &Position,
    moves: &[Move],
    in_check: bool,
) -> arrayvec::ArrayVec<(i32, Move), 256> {
    let mut candidates = arrayvec::ArrayVec::new();
    for &m in moves {
        let key = if m.is_capture() {
            blast_balance(pos, m)
        } else if m.promotion() == Some(Role::Queen) {
            800
        } else if in_check {
            -10_000
        } else {
            continue;
        };
        if !in_check && key < 0 {
            continue;
        }
        candidates.push((key, m));
    }
    // A stable sort; these lists are short.
    insertion_sort_by(&mut candidates, |a, b| a.0 > b.0);
    candidates
}

/// Stable insertion sort: `is_less(a, b)` says `a` goes before `b`. The lists sorted in the
/// search are short (a position's moves), where this beats the standard library's general sort
/// (which also copies the list into a scratch buffer) and gives exactly the same order.
fn insertion_sort_by<T: Copy>(v: &mut [T], is_less: impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && is_less(&x, &v[j - 1]) {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Prior probabilities of `moves` (the legal moves of `pos`), written to `out`: the softmax of
/// the fitted policy's logits ([`super::policy`]) divided by `PolicyTemperature`. A capture that
/// blows up the enemy king gets a logit above any other move. With `with_eval`, the refined
/// weights are used, whose last feature is the static evaluation after the move (one
/// evaluation per move, so the search uses it only for nodes that earned it), scaled by
/// `PriorEval`.
pub fn priors(
    pos: &Position,
    moves: &[Move],
    params: &SearchParams,
    with_eval: bool,
    out: &mut Priors,
) {
    out.probs.clear();
    out.leaves_threat.clear();
    let ctx = PolicyContext::new(pos);
    out.threatened = ctx.threatened();
    let weights = if with_eval {
        &policy_weights::REFINE
    } else {
        &policy_weights::EXPAND
    };
    let eval_weight = params.prior_eval * weights[policy::EVAL];
    let mut max_logit = f32::MIN;
    for &m in moves {
        let (logit, leaves_threat) = if wins_at_once(pos, m) {
            (WIN_LOGIT, false)
        } else {
            let (mut logit, leaves_threat) = policy::logit(&ctx, pos, m, weights);
            if with_eval {
                let mut child = *pos;
                child.play_unchecked(m);
                logit += eval_weight * policy::eval_feature(-static_eval(&child));
            }
            (logit, leaves_threat)
        };
        if out.threatened {
            out.leaves_threat.push(leaves_threat);
        }
        let logit = logit / params.policy_temperature;
        max_logit = max_logit.max(logit);
        out.probs.push(logit);
    }
    let mut sum = 0.0;
    for p in out.probs.iter_mut() {
        *p = (*p - max_logit).exp();
        sum += *p;
    }
    if sum > 0.0 {
        for p in out.probs.iter_mut() {
            *p /= sum;
        }
    }
}

/// The priors of a position's moves ([`priors`]), with what computing them found out about
/// blast threats: the search needs it to create proven children, and computing it once (it
/// plays every move) is cheaper than twice.
#[derive(Debug, Clone, Default)]
pub struct Priors {
    /// One probability per move, in the order of the moves.
    pub probs: Vec<f32>,
    /// The side to move is under a blast threat (a capture would blow up its king).
    pub threatened: bool,
    /// When `threatened`: per move, whether a blast threat is still open after it (such a
    /// move loses at once; a king-exploding capture counts as parrying). Empty otherwise.
    pub leaves_threat: Vec<bool>,
}

impl std::ops::Deref for Priors {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        &self.probs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const MIDDLEGAME: &str = "r1bqkb1r/pppp1ppp/2n1pn2/8/3P4/2N1PN2/PPP2PPP/R1BQKB1R w KQkq - 1 4";

    /// The test positions with their moves, and parameters with the given evaluation weight.
    fn cases(
        prior_eval: f32,
    ) -> impl Iterator<Item = (&'static str, Position, MoveList, SearchParams)> {
        [STARTPOS, MIDDLEGAME].into_iter().map(move |fen| {
            let pos = Position::from_fen(fen).expect("valid FEN");
            let params = SearchParams {
                prior_eval,
                ..SearchParams::default()
            };
            (fen, pos, pos.legal_moves(), params)
        })
    }

    fn child_eval(pos: &Position, m: Move) -> i32 {
        let mut child = *pos;
        child.play_unchecked(m);
        -static_eval(&child)
    }

    #[test]
    fn priors_are_a_distribution_with_and_without_the_evaluation() {
        for (fen, pos, moves, params) in cases(0.5) {
            for with_eval in [false, true] {
                let mut out = Priors::default();
                priors(&pos, moves.as_slice(), &params, with_eval, &mut out);
                assert_eq!(out.len(), moves.len());
                let sum: f32 = out.iter().sum();
                assert!((sum - 1.0).abs() < 1e-4, "{fen}: sum {sum}");
                assert!(out.iter().all(|&p| p > 0.0 && p.is_finite()));
            }
        }
    }

    /// With a dominant evaluation weight the policy follows the one-ply static evaluation:
    /// the most likely move is the one whose resulting position evaluates best for the mover.
    #[test]
    fn a_dominant_evaluation_term_ranks_moves_by_the_evaluation_after_them() {
        for (fen, pos, moves, params) in cases(1000.0) {
            let mut out = Priors::default();
            priors(&pos, moves.as_slice(), &params, true, &mut out);
            let top = (0..moves.len())
                .max_by(|&a, &b| out[a].total_cmp(&out[b]))
                .expect("moves");
            let best_eval = moves
                .iter()
                .map(|&m| child_eval(&pos, m))
                .max()
                .expect("moves");
            assert_eq!(
                child_eval(&pos, moves.as_slice()[top]),
                best_eval,
                "{fen}: top prior {}",
                moves.as_slice()[top]
            );
            // Without the term (the expansion's weights), the ranking differs here.
            let mut hand = Priors::default();
            priors(&pos, moves.as_slice(), &params, false, &mut hand);
            assert_ne!(hand.probs, out.probs, "{fen}");
        }
    }

    #[test]
    fn a_lone_unit_against_a_bare_king_is_level_and_two_units_are_not() {
        for fen in [
            "8/8/8/3k4/8/8/3QK3/8 w - - 0 1",
            "8/8/8/3k4/8/8/3QK3/8 b - - 0 1",
            "8/8/2r5/3k4/8/8/4K3/8 w - - 0 1",
            "8/5P2/8/3k4/8/8/4K3/8 b - - 0 1",
        ] {
            let pos = Position::from_fen(fen).expect("valid FEN");
            assert!(lone_unit_draw(&pos), "{fen}");
            assert_eq!(static_eval(&pos), 0, "{fen}");
        }
        for fen in [
            "8/8/8/3k4/8/8/3QK3/7R w - - 0 1",
            "8/8/8/3k4/8/8/3QK3/7r w - - 0 1",
            "8/8/8/3k4/8/8/4K3/8 w - - 0 1",
        ] {
            let pos = Position::from_fen(fen).expect("valid FEN");
            assert!(!lone_unit_draw(&pos), "{fen}");
        }
        let two_queens = Position::from_fen("8/8/8/3k4/8/8/2QQK3/8 w - - 0 1").expect("valid FEN");
        assert!(static_eval(&two_queens) > 500);
    }
}
