//! A leaf's first visit: the solver's terminal checks (repetition, a king blown up, mate,
//! stalemate, a win or loss at once, the fifty-move rule, insufficient material), else the
//! quiescence evaluation mapped to a win probability. The pure part also runs on worker
//! threads in batched searches (`batch.rs`).

use atomic_chess::{MoveList, Position};

use super::Mcts;
use crate::search::SearchParams;
use crate::search::eval::{self, Evaluator, QStats};
use crate::search::repetition::repeats;
use crate::search::tree::{NodeId, Proof};

impl Mcts {
    /// First visit of a node: terminal checks, then the quiescence evaluation. Returns the value
    /// for the player who moved into the node.
    pub(super) fn evaluate(&mut self, id: NodeId, pos: &Position) -> f32 {
        self.stats.positions += 1;
        let leaf = evaluate_leaf(
            &self.keys,
            pos,
            &self.config.params,
            &mut self.qstats,
            &mut self.evaluator,
        );
        self.set_leaf(id, leaf)
    }

    /// Stores a leaf evaluation in its node; returns the value for the player who moved into it.
    pub(super) fn set_leaf(&mut self, id: NodeId, leaf: Leaf) -> f32 {
        if let Some(proof) = leaf.proof {
            self.tree.get_mut(id).proof = proof;
        }
        leaf.value
    }
}

/// A leaf's evaluation: its proof if the game is decided there, and its value for the player
/// who moved into it (exact for a proof).
#[derive(Clone, Copy, Debug)]
pub(super) struct Leaf {
    pub(super) proof: Option<Proof>,
    pub(super) value: f32,
}

/// First visit of a position: terminal checks, then the quiescence evaluation. `keys` ends with
/// the repetition keys of the position's path (its own key last), back at least to its last
/// irreversible move. Pure but for the `evaluator`'s scratch accumulators (each thread has
/// its own): batched searches run it on worker threads.
pub(super) fn evaluate_leaf(
    keys: &[u64],
    pos: &Position,
    params: &SearchParams,
    qstats: &mut QStats,
    evaluator: &mut Evaluator,
) -> Leaf {
    let mut moves = MoveList::new();
    pos.legal_moves_into(&mut moves);
    if let Some(proof) = terminal(keys, pos, &moves) {
        let value = proof.value_for_mover().unwrap_or(0.5);
        return Leaf {
            proof: Some(proof),
            value,
        };
    }
    let cp = eval::qsearch_root_with(pos, &moves, params, qstats, evaluator);
    Leaf {
        proof: None,
        value: 1.0 - eval::win_probability(cp, params.eval_scale),
    }
}

/// The solver's view of a position reached in the tree, if the game is decided there. `keys`
/// as for [`evaluate_leaf`].
fn terminal(keys: &[u64], pos: &Position, moves: &MoveList) -> Option<Proof> {
    // Repetition (twofold, as Lc0 does); the MCTS makes no null moves.
    if repeats(keys, pos.halfmove_clock(), 0) {
        return Some(Proof::Draw);
    }
    if pos.board().king_of(pos.turn()).is_none() {
        return Some(Proof::Loss(0));
    }
    if moves.is_empty() {
        return Some(if pos.is_check() {
            Proof::Loss(0)
        } else {
            Proof::Draw
        });
    }
    // Two-ply look-ahead: a king-exploding capture or a checkmate wins at once.
    if eval::any_wins_or_mates_at_once(pos, moves) {
        return Some(Proof::Win(1));
    }
    if pos.halfmove_clock() >= 100 || pos.is_insufficient_material() {
        return Some(Proof::Draw);
    }
    // The opponent's side of the look-ahead: every move allows a king-exploding capture.
    if eval::loses_at_once(pos, moves) {
        return Some(Proof::Loss(2));
    }
    None
}
