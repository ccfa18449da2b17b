//! The static evaluation (the fitted linear model of [`super::features`] with the weights of
//! [`super::eval_weights`], or a network of [`super::nnue`] through an [`Evaluator`]), its
//! conversion to win probabilities, and the leaf quiescence search both engines stand on. The
//! atomic tactics it uses ([`super::blast`]) are re-exported here, where the engines and tools
//! have always found them.

use std::sync::Arc;

use atomic_chess::{Color, Move, MoveList, Position, Role};

use super::eval_weights::WEIGHTS;
use super::features;
use super::nnue::{Network, Stack};
use super::params::SearchParams;

pub use super::blast::{
    any_wins_or_mates_at_once, blast_balance, blast_threats, check_squares, gives_direct_check,
    loses_at_once, mates_at_once, wins_at_once,
};

/// Score of a won position (centipawns), minus the plies to the win.
pub const MATE: i32 = 32_000;
/// Scores beyond this are wins or losses found by the quiescence search.
pub const MATE_BOUND: i32 = MATE - 1000;

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
/// three pawns of level (docs/JOURNAL.md, "Session 7"). The search still finds a mate that
/// exists, as a terminal position, before any evaluation.
pub fn lone_unit_draw(pos: &Position) -> bool {
    let board = pos.board();
    board.occupied().count() == 3
        && board.king_of(Color::White).is_some()
        && board.king_of(Color::Black).is_some()
}

/// The static evaluation one search thread uses: the linear model ([`static_eval`]), or a
/// network with this thread's accumulator stack. The search tells it when it enters and leaves
/// a child ([`Evaluator::push`], [`Evaluator::pop`]) so a network's accumulators follow the
/// line incrementally; for the linear model those calls do nothing.
///
/// Either way the lone-unit draw ([`lone_unit_draw`]) comes first, and a network's value is
/// kept inside the window of ordinary scores (never mistaken for a mate).
#[derive(Default)]
pub enum Evaluator {
    /// The fitted linear model.
    #[default]
    Linear,
    /// A network, with the thread's own accumulators (boxed: the stack is large).
    Network(Box<Stack>),
}

impl Evaluator {
    /// The evaluation of `network`, or the linear one without.
    pub fn new(network: Option<&Arc<Network>>) -> Evaluator {
        network.map_or(Evaluator::Linear, |net| {
            Evaluator::Network(Box::new(Stack::new(Arc::clone(net))))
        })
    }

    /// Whether this evaluates with `network` (the same one, not a copy), or linearly for none.
    pub fn is_for(&self, network: Option<&Arc<Network>>) -> bool {
        match (self, network) {
            (Evaluator::Linear, None) => true,
            (Evaluator::Network(stack), Some(net)) => Arc::ptr_eq(stack.network(), net),
            _ => false,
        }
    }

    /// The evaluation in centipawns of `pos`, the current position of the line, from the side
    /// to move's point of view.
    #[inline]
    pub fn evaluate(&mut self, pos: &Position) -> i32 {
        match self {
            Evaluator::Linear => static_eval(pos),
            Evaluator::Network(stack) => {
                if lone_unit_draw(pos) {
                    0
                } else {
                    stack.evaluate(pos).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
                }
            }
        }
    }

    /// Starts a line at `root`.
    #[inline]
    pub fn reset(&mut self, root: &Position) {
        if let Evaluator::Network(stack) = self {
            stack.reset(root.board());
        }
    }

    /// Enters `child`, a position reached from the current one.
    #[inline(always)]
    pub fn push(&mut self, child: &Position) {
        if let Evaluator::Network(stack) = self {
            stack.push(child.board());
        }
    }

    /// Goes back to the parent of the current position.
    #[inline(always)]
    pub fn pop(&mut self) {
        if let Evaluator::Network(stack) = self {
            stack.pop();
        }
    }
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

/// What a quiescence search returns: a score, and for a caller that wants it (the evaluation
/// tuner) the leaf whose evaluation the score is. The engines use plain `i32` scores, for
/// which the generic search compiles to exactly the code it would be without the trait.
pub trait QValue: Copy {
    /// The score in centipawns, from the side to move's point of view.
    fn score(&self) -> i32;
    /// A score decided without evaluating a leaf (a win, a loss, a stalemate).
    fn decided(score: i32) -> Self;
    /// The same value from the other side's point of view.
    fn negate(self) -> Self;
}

impl QValue for i32 {
    #[inline(always)]
    fn score(&self) -> i32 {
        *self
    }

    #[inline(always)]
    fn decided(score: i32) -> i32 {
        score
    }

    #[inline(always)]
    fn negate(self) -> i32 {
        -self
    }
}

/// How a quiescence search values the positions it stands pat in, and what it tells the
/// evaluation as it enters and leaves children (a network's accumulators follow the line).
/// Closures `Fn(&Position, ply) -> V` are leaves that need no telling.
pub trait Leaves<V> {
    /// The value of `pos`, `ply` plies from the search's root, as it stands.
    fn leaf(&mut self, pos: &Position, ply: u32) -> V;
    /// The search enters `child`.
    #[inline(always)]
    fn enter(&mut self, _child: &Position) {}
    /// The search leaves the child it entered last.
    #[inline(always)]
    fn leave(&mut self) {}
}

impl<V, F: Fn(&Position, u32) -> V> Leaves<V> for F {
    #[inline(always)]
    fn leaf(&mut self, pos: &Position, ply: u32) -> V {
        self(pos, ply)
    }
}

impl Leaves<i32> for Evaluator {
    #[inline(always)]
    fn leaf(&mut self, pos: &Position, _ply: u32) -> i32 {
        self.evaluate(pos)
    }

    #[inline(always)]
    fn enter(&mut self, child: &Position) {
        self.push(child);
    }

    #[inline(always)]
    fn leave(&mut self) {
        self.pop();
    }
}

/// Quiescence search of a leaf whose legal moves are already known: captures with a
/// non-negative blast balance (all moves when in check), stand pat otherwise, on the linear
/// evaluation.
pub fn qsearch_root(
    pos: &Position,
    moves: &MoveList,
    params: &SearchParams,
    stats: &mut QStats,
) -> i32 {
    qsearch_leaves(
        pos,
        moves.as_slice(),
        params.qsearch_depth,
        stats,
        &|p: &Position, _| static_eval(p),
    )
}

/// [`qsearch_root`] on `evaluator`'s evaluation (which it starts at `pos`).
pub fn qsearch_root_with(
    pos: &Position,
    moves: &MoveList,
    params: &SearchParams,
    stats: &mut QStats,
    evaluator: &mut Evaluator,
) -> i32 {
    if let Evaluator::Linear = evaluator {
        return qsearch_root(pos, moves, params, stats);
    }
    evaluator.reset(pos);
    qsearch_moves(
        pos,
        moves.as_slice(),
        pos.is_check(),
        -MATE,
        MATE,
        params.qsearch_depth,
        0,
        stats,
        evaluator,
    )
}

/// The quiescence search of [`qsearch_root`] (full window, at most `depth` plies) with the
/// positions it stands pat in valued by `leaf` (given the position and its ply from `pos`).
/// The evaluation tuner runs it with its own weights and a [`QValue`] that records the leaf.
pub fn qsearch_leaves<V: QValue>(
    pos: &Position,
    moves: &[Move],
    depth: u32,
    stats: &mut QStats,
    leaf: &impl Fn(&Position, u32) -> V,
) -> V {
    let mut leaf = leaf;
    qsearch_moves(
        pos,
        moves,
        pos.is_check(),
        -MATE,
        MATE,
        depth,
        0,
        stats,
        &mut leaf,
    )
}

/// The quiescence search of `pos` within the window `(alpha, beta)`, `ply` plies from the
/// root of a tree search (mate scores count from there). `leaf` evaluates the positions it
/// stands pat in: the static evaluation, or the alpha-beta search's corrected one; it is told
/// of every child entered and left.
pub fn qsearch_window(
    pos: &Position,
    alpha: i32,
    beta: i32,
    ply: u32,
    params: &SearchParams,
    stats: &mut QStats,
    leaf: &mut impl Leaves<i32>,
) -> i32 {
    qsearch(pos, alpha, beta, params.qsearch_depth, ply, stats, leaf)
}

fn qsearch<V: QValue>(
    pos: &Position,
    alpha: i32,
    beta: i32,
    depth: u32,
    ply: u32,
    stats: &mut QStats,
    leaf: &mut impl Leaves<V>,
) -> V {
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
            return if pos.has_legal_moves() {
                leaf.leaf(pos, ply)
            } else {
                V::decided(0)
            };
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
        stats,
        leaf,
    )
}

#[allow(clippy::too_many_arguments)]
fn qsearch_moves<V: QValue>(
    pos: &Position,
    moves: &[Move],
    in_check: bool,
    mut alpha: i32,
    beta: i32,
    depth: u32,
    ply: u32,
    stats: &mut QStats,
    leaf: &mut impl Leaves<V>,
) -> V {
    stats.nodes += 1;
    if moves.is_empty() {
        return V::decided(if in_check { -MATE + ply as i32 } else { 0 });
    }
    if moves.iter().any(|&m| wins_at_once(pos, m)) {
        return V::decided(MATE - ply as i32 - 1);
    }
    if pos.board().king_of(pos.turn()).is_none() {
        return V::decided(-MATE + ply as i32);
    }
    let mut best = V::decided(-MATE + ply as i32);
    if !in_check {
        let stand = leaf.leaf(pos, ply);
        if stand.score() >= beta || depth == 0 {
            return stand;
        }
        alpha = alpha.max(stand.score());
        best = stand;
    } else if depth == 0 {
        return leaf.leaf(pos, ply);
    }
    let candidates = quiescence_moves(pos, moves, in_check);
    for &(_, m) in &candidates {
        let mut child = *pos;
        child.play_unchecked(m);
        leaf.enter(&child);
        let value = qsearch(&child, -beta, -alpha, depth - 1, ply + 1, stats, leaf).negate();
        leaf.leave();
        if value.score() > best.score() {
            best = value;
            if value.score() > alpha {
                alpha = value.score();
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
/// move last; ties in generation order.
fn quiescence_moves(
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

#[cfg(test)]
mod tests {
    use super::*;

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
