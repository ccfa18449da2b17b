//! The recursive search below the root: principal variation search with a transposition
//! table, check extension, a ply more under a blast threat, singular extensions of the table
//! move (with multi-cut and a negative extension), reverse futility and null move
//! pruning on the corrected static evaluation, late move reductions, and futility and late move
//! pruning of quiet moves near the leaves.
//!
//! Atomic specifics: a position whose side to move has a king-exploding capture is a win at
//! once (as in the MCTS solver and the quiescence search), so the search never needs to look
//! past it; a null move is searched like any other child, so a blast threat that the pass
//! would allow is found by that child's "wins at once" test and the pruning fails.

use atomic_chess::{MoveList, Position};

use super::correction::{Correction, Keys};
use super::table::{Bound, from_table, to_table};
use super::{Ctx, Worker, has_pieces};
use crate::search::SearchParams;
use crate::search::eval::{self, Evaluator, MATE, MATE_BOUND};
use crate::search::repetition::repeats;

impl Worker {
    /// The value of `pos` for its side to move within `(alpha, beta)`, searched `depth` plies
    /// deep, `ply` plies below the root. `allow_null`: not right after a null move.
    /// `cut_node`: a zero-window node expected to fail high (the child of a reduced search
    /// or the first child of an expected all-node), where a table move that is not singular
    /// is searched shallower.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn node(
        &mut self,
        ctx: &Ctx,
        pos: &Position,
        mut depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        allow_null: bool,
        cut_node: bool,
    ) -> i32 {
        self.pv_len[ply] = ply;
        self.nodes += 1;
        if self.should_stop(ctx) {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let mply = ply as i32;
        if pos.board().king_of(pos.turn()).is_none() {
            return -MATE + mply;
        }
        // A twofold repetition is a draw, but not one back past the line's last null move.
        if repeats(&self.keys, pos.halfmove_clock(), self.null_floor) {
            return 0;
        }
        if ply >= super::MAX_PLY - 8 {
            return self.evaluator.evaluate(pos);
        }
        let in_check = pos.is_check();
        if in_check {
            depth += self.params.ab_check_extension;
        } else if (depth <= 0 || self.params.ab_threat_extension > 0)
            && eval::blast_threats(pos, pos.turn()) > 0
        {
            // A blast threat on our king is as forcing as a check, and the quiescence search
            // (captures only) would stand pat through it.
            depth = if depth > 0 { depth + 1 } else { 1 };
        }
        if depth <= 0 {
            // The quiescence search makes the terminal checks of its own moves (mate,
            // stalemate, a king-exploding capture), so no full move list is generated here.
            if pos.halfmove_clock() >= 100 || pos.is_insufficient_material() {
                return 0;
            }
            let mut leaf = Corrected {
                evaluator: &mut self.evaluator,
                correction: &self.correction,
                params: &self.params,
            };
            return eval::qsearch_window(
                pos,
                alpha,
                beta,
                ply as u32,
                &self.params,
                &mut self.qstats,
                &mut leaf,
            );
        }

        // The table is read before the moves are generated: a cut-off saves the generation.
        // Terminal positions (mate, stalemate, a king-exploding capture, the fifty-move
        // rule) return before any store, so no entry can stand for one.
        let pv_node = beta - alpha > 1;
        // A singular-extension search of this position without the table move: its value
        // is not the position's, so it neither reads a cut-off from the table nor stores.
        let excluded = self.excluded[ply];
        let key = pos.zobrist();
        let entry = ctx.table.probe(key);
        let table_move = entry.and_then(|e| e.mv);
        if let Some(e) = entry
            && !pv_node
            && excluded.is_none()
            && e.depth >= depth
            && pos.halfmove_clock() < 100
        {
            let s = from_table(e.score, ply);
            let cut = match e.bound {
                Bound::Exact => true,
                Bound::Lower => s >= beta,
                Bound::Upper => s <= alpha,
                Bound::None => false,
            };
            if cut {
                return s;
            }
        }

        let mut moves = MoveList::new();
        pos.legal_moves_into(&mut moves);
        if moves.is_empty() {
            return if in_check { -MATE + mply } else { 0 };
        }
        if moves.iter().any(|&m| eval::wins_at_once(pos, m)) {
            return MATE - mply - 1;
        }
        if pos.halfmove_clock() >= 100 || pos.is_insufficient_material() {
            return 0;
        }

        if self.params.ab_iir_depth > 0 && depth >= self.params.ab_iir_depth && table_move.is_none()
        {
            depth -= 1;
        }
        let corrected = self.params.ab_corr_pawn > 0 || self.params.ab_corr_pieces > 0;
        // In check there is no static evaluation to correct, and no update either.
        let corr_keys = (corrected && !in_check).then(|| Keys::of(pos));
        // The raw evaluation from the table when the position was stored with one: the
        // same value, without the evaluation's cost.
        let raw_eval = (!in_check).then(|| {
            entry
                .and_then(|e| e.eval)
                .unwrap_or_else(|| self.evaluator.evaluate(pos))
        });
        let static_eval = match (raw_eval, corr_keys) {
            (None, _) => -MATE,
            (Some(raw), Some(k)) => self.correction.corrected(raw, k, &self.params),
            (Some(raw), None) => raw,
        };
        self.evals[ply] = static_eval;
        let improving = self.params.ab_improving > 0
            && !in_check
            && ply >= 2
            && static_eval > self.evals[ply - 2];
        let not_improving = i32::from(self.params.ab_improving > 0 && !improving);
        if !pv_node && !in_check && excluded.is_none() && beta.abs() < MATE_BOUND {
            if depth <= self.params.ab_rfp_depth
                && static_eval - self.params.ab_rfp_margin * (depth - i32::from(improving)) >= beta
            {
                return static_eval;
            }
            if allow_null && depth >= 3 && static_eval >= beta && has_pieces(pos, pos.turn()) {
                let reduction = 3 + depth / self.params.ab_null_depth_div;
                let null = pos.null_move();
                self.keys.push(null.zobrist());
                let floor = std::mem::replace(&mut self.null_floor, self.keys.len() - 1);
                self.evaluator.push(&null);
                let s = -self.node(
                    ctx,
                    &null,
                    depth - 1 - reduction,
                    -beta,
                    -beta + 1,
                    ply + 1,
                    false,
                    false,
                );
                self.keys.pop();
                self.null_floor = floor;
                self.evaluator.pop();
                if self.aborted {
                    return 0;
                }
                if s >= beta {
                    return if s >= MATE_BOUND { beta } else { s };
                }
            }
        }

        // Singular extension (Stockfish's scheme, with its negative extensions): when the
        // table move's score stands clear of every other move's (a search without it, at
        // half depth, fails below the score minus a margin), the line hangs on that move and
        // it is searched a ply deeper. When the others reach beta too, several moves refute
        // the line and the node is cut at once; when the table move alone is expected to
        // beat beta anyway, it is searched a ply shallower.
        let mut table_extension = 0;
        if self.params.ab_singular_depth > 0
            && depth >= self.params.ab_singular_depth
            && ply > 0
            && excluded.is_none()
            && (ply as i32) < 2 * self.root_depth
            && let (Some(e), Some(tm)) = (entry, table_move)
            && e.depth >= depth - 3
            && matches!(e.bound, Bound::Lower | Bound::Exact)
        {
            let s = from_table(e.score, ply);
            if s.abs() < MATE_BOUND {
                let singular_beta = s - self.params.ab_singular_margin * depth;
                self.excluded[ply] = Some(tm);
                let v = self.node(
                    ctx,
                    pos,
                    (depth - 1) / 2,
                    singular_beta - 1,
                    singular_beta,
                    ply,
                    false,
                    cut_node,
                );
                self.excluded[ply] = None;
                self.pv_len[ply] = ply;
                if self.aborted {
                    return 0;
                }
                if v < singular_beta {
                    table_extension = 1;
                } else if singular_beta >= beta {
                    return singular_beta;
                } else if s >= beta || cut_node {
                    table_extension = -self.params.ab_singular_neg;
                }
            }
        }

        // The keys apart from the moves: the scan for the next best is then over a dense
        // array of `i32`, which the compiler vectorises.
        let mut keys: arrayvec::ArrayVec<i32, 256> = moves
            .iter()
            .map(|&m| self.ordering.key(pos, m, table_move, ply))
            .collect();
        let original_alpha = alpha;
        let mut best = -MATE;
        let mut best_move = None;
        let mut searched = 0usize;
        let mut failed_quiets: arrayvec::ArrayVec<atomic_chess::Move, 64> =
            arrayvec::ArrayVec::new();
        for i in 0..moves.len() {
            // Selection sort: a cut-off usually comes early, so sorting all would be waste.
            // The first of equal keys wins.
            let top = next_best(&keys[i..]) + i;
            keys.swap(i, top);
            moves.swap(i, top);
            let m = moves[i];
            if Some(m) == excluded {
                continue;
            }
            let quiet = !m.is_capture() && m.promotion().is_none();
            let see_margin = self.params.ab_see_margin;
            // A negative key on a capture is the ordering's losing-capture class (the blast
            // balance is below 0), the only captures this can prune: no balance for the others.
            if see_margin > 0
                && m.is_capture()
                && keys[i] < 0
                && !pv_node
                && !in_check
                && depth <= 4
                && searched > 0
                && best > -MATE_BOUND
                && eval::blast_balance(pos, m) < -see_margin * depth
            {
                continue;
            }
            let mut child = *pos;
            child.play_unchecked(m);
            ctx.table.prefetch(child.zobrist());
            let gives_check = child.is_check();
            if !pv_node && !in_check && quiet && !gives_check && searched > 0 && best > -MATE_BOUND
            {
                if depth <= self.params.ab_futility_depth
                    && static_eval + self.params.ab_futility_margin * depth <= alpha
                {
                    continue;
                }
                let lmp = (self.params.ab_lmp_base + depth * depth) >> not_improving;
                if depth <= self.params.ab_lmp_depth && searched >= lmp as usize {
                    continue;
                }
            }
            self.keys.push(child.zobrist());
            self.evaluator.push(&child);
            let extension = if Some(m) == table_move {
                table_extension
            } else {
                0
            };
            let score = if searched == 0 {
                let child_cut = !pv_node && !cut_node;
                -self.node(
                    ctx,
                    &child,
                    depth - 1 + extension,
                    -beta,
                    -alpha,
                    ply + 1,
                    true,
                    child_cut,
                )
            } else {
                let mut reduction = 0;
                // Late move reductions: quiet moves that do not give check.
                let reducible = depth >= 3 && !in_check && quiet && !gives_check;
                if reducible {
                    reduction = (i32::from(self.lmr[depth.min(63) as usize][searched.min(63)])
                        - i32::from(pv_node)
                        + not_improving)
                        .clamp(0, depth - 2);
                }
                let mut s = -self.node(
                    ctx,
                    &child,
                    depth - 1 - reduction,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    true,
                    reducible || !cut_node,
                );
                if s > alpha && reduction > 0 {
                    s = -self.node(
                        ctx,
                        &child,
                        depth - 1,
                        -alpha - 1,
                        -alpha,
                        ply + 1,
                        true,
                        !cut_node,
                    );
                }
                if s > alpha && s < beta {
                    s = -self.node(ctx, &child, depth - 1, -beta, -alpha, ply + 1, true, false);
                }
                s
            };
            self.keys.pop();
            self.evaluator.pop();
            if self.aborted {
                return 0;
            }
            searched += 1;
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    best_move = Some(m);
                    self.pv[ply][ply] = Some(m);
                    let child_len = self.pv_len[ply + 1].max(ply + 1);
                    for k in ply + 1..child_len {
                        self.pv[ply][k] = self.pv[ply + 1][k];
                    }
                    self.pv_len[ply] = child_len;
                    if alpha >= beta {
                        if quiet {
                            self.ordering
                                .reward(pos.turn(), m, &failed_quiets, depth, ply);
                        }
                        break;
                    }
                }
            }
            if quiet && score <= alpha && !failed_quiets.is_full() {
                failed_quiets.push(m);
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        if excluded.is_some() {
            return best;
        }
        if let Some(k) = corr_keys
            && best.abs() < MATE_BOUND
            && best_move.is_none_or(|m| !m.is_capture() && m.promotion().is_none())
            && !(bound == Bound::Lower && best <= static_eval)
            && !(bound == Bound::Upper && best >= static_eval)
        {
            self.correction
                .update(k, best - static_eval, depth, self.params.ab_corr_max);
        }
        ctx.table.store(
            key,
            best_move.or(table_move),
            to_table(best, ply),
            depth,
            bound,
            raw_eval,
        );
        best
    }
}

/// The quiescence search's leaves: the evaluation, corrected by the histories when
/// `AbCorrQsearch` is on; the evaluation follows the quiescence line.
struct Corrected<'a> {
    evaluator: &'a mut Evaluator,
    correction: &'a Correction,
    params: &'a SearchParams,
}

impl eval::Leaves<i32> for Corrected<'_> {
    #[inline(always)]
    fn leaf(&mut self, pos: &Position, _ply: u32) -> i32 {
        let raw = self.evaluator.evaluate(pos);
        if self.params.ab_corr_qsearch > 0 {
            self.correction.corrected(raw, Keys::of(pos), self.params)
        } else {
            raw
        }
    }

    #[inline(always)]
    fn enter(&mut self, child: &Position) {
        self.evaluator.push(child);
    }

    #[inline(always)]
    fn leave(&mut self) {
        self.evaluator.pop();
    }
}

/// The index of the first largest key (`keys` is not empty). Two passes, the maximum and
/// then its first position, both plain loops over `i32` that vectorise: the selection scan
/// was a fifth of this module's time as one loop that compared and tracked an index at each
/// step.
#[inline]
fn next_best(keys: &[i32]) -> usize {
    let max = keys.iter().copied().fold(i32::MIN, i32::max);
    keys.iter().position(|&k| k == max).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::next_best;

    #[test]
    fn next_best_is_the_first_of_the_largest_keys() {
        assert_eq!(next_best(&[3]), 0);
        assert_eq!(next_best(&[1, 5, 2, 5, 5]), 1);
        assert_eq!(next_best(&[-4, -3, -3]), 1);
        assert_eq!(next_best(&[i32::MIN, i32::MIN]), 0);
        // Longer than one vector register, the largest in the last lane.
        let keys: Vec<i32> = (0..37).map(|i| (i * 7) % 11).chain([11, 11]).collect();
        assert_eq!(next_best(&keys), 37);
    }
}
