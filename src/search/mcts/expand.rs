//! Expansion: a node's children created with their priors, highest first, those whose outcome
//! is known at once created proven; and the priors refined with the evaluation term once a node
//! has enough visits. The children's creation is pure and also runs on worker threads in
//! batched searches (`batch.rs`).

use atomic_chess::{MoveList, Position};

use super::Mcts;
use crate::search::SearchParams;
use crate::search::eval;
use crate::search::policy;
use crate::search::tree::{Node, NodeId, Proof};

impl Mcts {
    /// Creates the children of `id`. Returns false if the arena is full.
    pub(super) fn expand(&mut self, id: NodeId, pos: &Position, moves: &MoveList) -> bool {
        self.stats.positions += 1;
        let params = &self.config.params;
        let with_eval = params.expansion_with_eval(self.tree.get(id).visits);
        new_children(
            pos,
            moves,
            params,
            with_eval,
            &mut self.priors,
            &mut self.children,
        );
        if !self.tree.add_children(id, &self.children) {
            return false;
        }
        self.refresh(id);
        true
    }

    /// Recomputes the priors of an expanded node's children with the evaluation term, once the
    /// node has shown it is worth a static evaluation per child.
    pub(super) fn refine_priors(&mut self, id: NodeId, pos: &Position) {
        let node = *self.tree.get(id);
        self.refine_moves.clear();
        self.refine_moves
            .extend(node.child_ids().filter_map(|c| self.tree.get(c).mv));
        if self.refine_moves.len() != usize::from(node.children) {
            return;
        }
        policy::priors(
            pos,
            &self.refine_moves,
            &self.config.params,
            true,
            &mut self.priors,
        );
        for (cid, &prior) in node.child_ids().zip(self.priors.iter()) {
            self.tree.get_mut(cid).prior = prior;
        }
    }
}

/// The children of a position about to be expanded, into `children`: one per move with its
/// prior, highest prior first, and created proven where the move's outcome is known at once.
/// Pure: batched searches run it on worker threads.
pub(super) fn new_children(
    pos: &Position,
    moves: &MoveList,
    params: &SearchParams,
    with_eval: bool,
    priors: &mut policy::Priors,
    children: &mut Vec<Node>,
) {
    policy::priors(pos, moves.as_slice(), params, with_eval, priors);
    children.clear();
    // Highest prior first (ties in generation order): deterministic, and the likely moves
    // are scanned first. The order is found by sorting one integer key per move (the
    // prior's descending `total_cmp` rank, then the move's index), which is cheaper than
    // sorting the nodes and gives exactly the order of a stable sort by prior.
    let mut order: arrayvec::ArrayVec<u64, 256> = priors
        .iter()
        .enumerate()
        .map(|(i, &prior)| (u64::from(descending_key(prior)) << 8) | i as u64)
        .collect();
    order.sort_unstable();
    // Under a blast threat, a move that leaves one open loses at once: create it proven.
    // The priors found out which moves do (their features include it).
    let threatened = priors.threatened;
    let checks = eval::check_squares(pos);
    for &key in &order {
        let i = (key & 0xff) as usize;
        let (m, prior) = (moves[i], priors[i]);
        let mut child = Node::new(Some(m), prior);
        if eval::wins_at_once(pos, m) || (checks.contains(m.to()) && eval::mates_at_once(pos, m)) {
            child.proof = Proof::Loss(0);
        } else if threatened && priors.leaves_threat[i] {
            child.proof = Proof::Win(1);
        }
        children.push(child);
    }
}

/// A key whose ascending order is the descending `f32::total_cmp` order of `x`.
fn descending_key(x: f32) -> u32 {
    // `total_cmp`'s own trick: flip the magnitude bits of negative numbers, so that the bits
    // compare as signed integers; then shift to unsigned and reverse.
    let bits = x.to_bits() as i32;
    let ordered = bits ^ ((((bits >> 31) as u32) >> 1) as i32);
    !((ordered as u32) ^ 0x8000_0000)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use atomic_chess::{Game, Move};

    use super::*;
    use crate::search::engine::{Engine, Limits, SearchConfig};
    use crate::search::tree::ROOT;

    fn root_priors(searcher: &Mcts) -> Vec<(Move, f32)> {
        searcher
            .tree
            .get(ROOT)
            .child_ids()
            .map(|c| {
                let n = searcher.tree.get(c);
                (n.mv.expect("a child has a move"), n.prior)
            })
            .collect()
    }

    /// The root passes `PriorEvalVisits` visits in a search, so its children end with the
    /// evaluation-refined priors; with the term off they keep the hand-made ones. Also when a
    /// batched search refines them one batch late.
    #[test]
    fn priors_are_refined_once_a_node_has_enough_visits() {
        let pos = Position::from_fen(
            "r1bqkb1r/pppp1ppp/2n1pn2/8/3P4/2N1PN2/PPP2PPP/R1BQKB1R w KQkq - 1 4",
        )
        .expect("valid FEN");
        let game = Game::new(pos);
        let limits = Limits {
            nodes: Some(300),
            ..Limits::default()
        };
        for (prior_eval, threads) in [(0.0, 1), (0.5, 1), (0.0, 2), (0.5, 2)] {
            let params = SearchParams {
                prior_eval,
                prior_eval_visits: 8,
                ..SearchParams::default()
            };
            let mut searcher = Mcts::new(&SearchConfig {
                hash_mb: 4,
                threads,
                params: params.clone(),
                ..SearchConfig::default()
            });
            searcher.search(
                &game,
                &limits,
                &AtomicBool::new(false),
                1,
                None,
                &mut |_| {},
            );
            let children = root_priors(&searcher);
            let moves: Vec<Move> = children.iter().map(|&(m, _)| m).collect();
            let mut expected = policy::Priors::default();
            policy::priors(&pos, &moves, &params, prior_eval > 0.0, &mut expected);
            for (&(m, got), &want) in children.iter().zip(expected.iter()) {
                assert!(
                    (got - want).abs() < 1e-6,
                    "{m}: {got} vs {want} at {prior_eval}, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn descending_key_reverses_total_cmp() {
        let values = [
            f32::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-30,
            0.25,
            0.5,
            1.0,
            f32::INFINITY,
            f32::NAN,
        ];
        for a in values {
            for b in values {
                assert_eq!(
                    descending_key(a).cmp(&descending_key(b)),
                    b.total_cmp(&a),
                    "{a} vs {b}"
                );
            }
        }
    }
}
