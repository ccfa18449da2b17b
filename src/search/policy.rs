//! The move priors: the softmax of the fitted policy's logits over a position's moves.
//!
//! The features are [`super::policy_features`], their weights [`super::policy_weights`] (one
//! set for a node's expansion, one with the static evaluation after the move for the
//! refinement). A capture that blows up the enemy king is not part of the model: it gets a
//! fixed logit that dwarfs every other move's.

use atomic_chess::{Move, Position};

use super::blast::wins_at_once;
use super::eval::static_eval;
use super::params::SearchParams;
use super::policy_features::{self, PolicyContext};
use super::policy_weights;

/// Policy logit of a capture that blows up the enemy king: it dwarfs every other move's.
const WIN_LOGIT: f32 = 30.0;

/// Prior probabilities of `moves` (the legal moves of `pos`), written to `out`: the softmax of
/// the fitted policy's logits ([`super::policy_features`]) divided by `PolicyTemperature`. A capture that
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
    let eval_weight = params.prior_eval * weights[policy_features::EVAL];
    let mut max_logit = f32::MIN;
    for &m in moves {
        let (logit, leaves_threat) = if wins_at_once(pos, m) {
            (WIN_LOGIT, false)
        } else {
            let (mut logit, leaves_threat) = policy_features::logit(&ctx, pos, m, weights);
            if with_eval {
                let mut child = *pos;
                child.play_unchecked(m);
                logit += eval_weight * policy_features::eval_feature(-static_eval(&child));
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
    for p in &mut out.probs {
        *p = (*p - max_logit).exp();
        sum += *p;
    }
    if sum > 0.0 {
        for p in &mut out.probs {
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
    use atomic_chess::MoveList;

    use super::*;
    use crate::search::blast::blast_threats;
    use crate::search::policy_features::{EVAL, PolicySink, logit, move_features};

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

    /// Fairy-Stockfish's moves, `fen,bestmove` (scripts/gen_policy_data.py).
    const DATA: &str = include_str!("../../data/policy-fsf20k.csv");

    /// Mean cross-entropy and top-1 share of the engine's priors on rows the fit held out
    /// (every tenth block of 64 rows) among the first `rows`.
    fn held_out_fit(rows: usize, with_eval: bool) -> (f64, f64, usize) {
        // At the temperature the weights were fitted at.
        let params = SearchParams {
            policy_temperature: 1.0,
            ..SearchParams::default()
        };
        let (mut loss, mut hits, mut n) = (0.0, 0, 0);
        let mut out = Priors::default();
        for (row, line) in DATA.lines().take(rows).enumerate() {
            if (row / 64) % 10 != 9 {
                continue;
            }
            let (fen, best) = line.rsplit_once(',').expect("fen,bestmove");
            let pos = Position::from_fen(fen).expect("valid FEN");
            let target = pos.parse_uci(best).expect("a legal move");
            let moves = pos.legal_moves();
            if moves.len() < 2 || moves.iter().any(|&m| wins_at_once(&pos, m)) {
                continue;
            }
            priors(&pos, moves.as_slice(), &params, with_eval, &mut out);
            let index = moves.iter().position(|&m| m == target).expect("listed");
            loss -= f64::from(out[index]).ln();
            let top = (0..out.len())
                .max_by(|&a, &b| out[a].total_cmp(&out[b]).then(b.cmp(&a)))
                .expect("moves");
            hits += usize::from(top == index);
            n += 1;
        }
        (loss / n as f64, hits as f64 / n as f64, n)
    }

    /// The compiled-in weights are wired to the features they were fitted with: on positions
    /// the fit never saw, the priors predict Fairy-Stockfish's move far better than the
    /// uniform policy (cross-entropy about 3.1 nats) and the hand-made one they replaced (2.64
    /// nats, 25 % top-1; the fit reports 2.28 and 31 % on the whole held-out set).
    #[test]
    fn priors_predict_held_out_engine_moves() {
        let (loss, top1, n) = held_out_fit(12_800, true);
        assert!(n > 1000, "{n} positions");
        assert!(loss < 2.45, "refined: cross-entropy {loss:.3}");
        assert!(top1 > 0.27, "refined: top-1 {top1:.3}");
        let (loss, top1, _) = held_out_fit(12_800, false);
        assert!(loss < 2.55, "expansion: cross-entropy {loss:.3}");
        assert!(top1 > 0.25, "expansion: top-1 {top1:.3}");
    }

    /// The features of a move are what its logit sums: a sink that records them and the
    /// weights give the same number as `logit`.
    #[test]
    fn logit_is_the_weighted_sum_of_the_recorded_features() {
        struct Recorder(Vec<(usize, f32)>);
        impl PolicySink for Recorder {
            fn add(&mut self, index: usize, value: f32) {
                self.0.push((index, value));
            }
        }
        let weights = &policy_weights::REFINE;
        for line in DATA.lines().take(200) {
            let fen = line.rsplit_once(',').expect("fen,bestmove").0;
            let pos = Position::from_fen(fen).expect("valid FEN");
            let ctx = PolicyContext::new(&pos);
            for m in pos.legal_moves() {
                if wins_at_once(&pos, m) {
                    continue;
                }
                let mut recorder = Recorder(Vec::new());
                let open = move_features(&ctx, &pos, m, &mut recorder);
                let mut next = pos;
                next.play_unchecked(m);
                let threatened = blast_threats(&pos, pos.turn()) > 0;
                assert_eq!(ctx.threatened(), threatened, "{fen}");
                assert_eq!(
                    open,
                    threatened && blast_threats(&next, pos.turn()) > 0,
                    "{fen} {m}"
                );
                assert!(recorder.0.iter().all(|&(i, _)| i < EVAL), "{fen} {m}");
                let sum: f32 = recorder.0.iter().map(|&(i, v)| weights[i] * v).sum();
                assert!(
                    (sum - logit(&ctx, &pos, m, weights).0).abs() < 1e-4,
                    "{fen} {m}"
                );
            }
        }
    }
}
