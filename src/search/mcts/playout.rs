//! One playout of a single-threaded search: down from the root by PUCT selection to a node
//! never evaluated (or a proven one), its evaluation, and the value backed up the path with the
//! proofs recomputed on the way (the solver's propagation).

use atomic_chess::{MoveList, Position};

use super::Mcts;
use crate::search::tree::{NodeId, Proof, ROOT};

impl Mcts {
    /// One playout from the root.
    pub(super) fn playout(&mut self, root_pos: &Position, base_keys: usize) {
        let mut pos = *root_pos;
        self.path.clear();
        self.path.push(ROOT);
        self.keys.truncate(base_keys);
        let mut id = ROOT;
        // Whether an expansion on this path changed its node's proof (children that
        // win or lose at once are created proven): the backup must then carry the change up
        // even where the new leaf's value leaves a node unchanged.
        let mut expansion_changed = false;
        let value = loop {
            let node = *self.tree.get(id);
            if let Some(exact) = node.proof.value_for_mover()
                && id != ROOT
            {
                break exact;
            }
            if node.visits == 0 {
                break self.evaluate(id, &pos);
            }
            if !node.is_expanded() {
                let mut moves = MoveList::new();
                pos.legal_moves_into(&mut moves);
                if !self.expand(id, &pos, &moves) {
                    self.full = true;
                    break node.q;
                }
                let expanded = self.tree.get(id);
                expansion_changed = expanded.proof != node.proof;
            }
            if self.config.params.refines_priors_at(node.visits) {
                self.refine_priors(id, &pos);
            }
            let child = self.select(id);
            let Some(m) = self.tree.get(child).mv else {
                break node.q;
            };
            pos.play_unchecked(m);
            self.keys.push(pos.zobrist());
            self.path.push(child);
            id = child;
        };
        let depth = (self.path.len() - 1) as u32;
        self.stats.playouts += 1;
        self.stats.depth_sum += u64::from(depth);
        self.stats.max_depth = self.stats.max_depth.max(depth);
        self.backup(value, expansion_changed);
    }

    /// PUCT selection among the children of `id`.
    pub(super) fn select(&self, id: NodeId) -> NodeId {
        let node = self.tree.get(id);
        let params = &self.config.params;
        let sqrt_n = (node.visits as f32).sqrt();
        let explore = params.cpuct * sqrt_n;
        // A proven root keeps looking for a shorter win among its unproven moves only.
        let shortening = id == ROOT && matches!(node.proof, Proof::Win(_));
        let mut visited_policy = 0.0f32;
        let mut best = node.first;
        let mut best_score = f32::NEG_INFINITY;
        // Unvisited children all share the first-play value, so the best of them is the one
        // with the highest prior; it is compared once the first-play value is known.
        let mut unvisited: Option<(f32, NodeId)> = None;
        for (cid, child) in node.child_ids().zip(self.tree.children(node)) {
            // Unproven children first: they are nearly all of them.
            let q = if child.proof == Proof::Unknown {
                if child.visits == 0 {
                    if unvisited.is_none_or(|(prior, _)| child.prior > prior) {
                        unvisited = Some((child.prior, cid));
                    }
                    continue;
                }
                visited_policy += child.prior;
                child.q
            } else {
                if child.visits > 0 {
                    visited_policy += child.prior;
                }
                match child.proof {
                    _ if shortening => continue,
                    Proof::Loss(d) => 10.0 - f32::from(d) * 0.01,
                    Proof::Win(_) => continue,
                    _ => 0.5,
                }
            };
            let score = q + explore * child.prior / (1.0 + child.visits as f32);
            if score > best_score {
                best_score = score;
                best = cid;
            }
        }
        if let Some((prior, cid)) = unvisited {
            let fpu = 1.0 - node.q - params.fpu_reduction * visited_policy.sqrt();
            if fpu + explore * prior > best_score {
                best = cid;
            }
        }
        best
    }

    /// Backs `value` (for the player who moved into the leaf) up the path.
    /// Proofs are recomputed only up to the first node they leave unchanged.
    /// With `changed_above`, every node of the path is refreshed: a node expanded on the way
    /// down already holds its new values, so comparing before and after would stop too early.
    pub(super) fn backup(&mut self, value: f32, changed_above: bool) {
        let mut v = value;
        let mut changed = true;
        for i in (0..self.path.len()).rev() {
            let id = self.path[i];
            let node = self.tree.get_mut(id);
            node.visits += 1;
            node.q += (v - node.q) / node.visits as f32;
            if changed && node.is_expanded() {
                let before = node.proof;
                self.refresh(id);
                changed = changed_above || before != self.tree.get(id).proof;
            }
            v = 1.0 - v;
        }
    }

    /// Recomputes the proof of an expanded node from its children's.
    pub(super) fn refresh(&mut self, id: NodeId) {
        let node = *self.tree.get(id);
        let mut win: Option<u16> = None;
        let mut longest_loss = 0u16;
        let mut all_proven = true;
        let mut any_draw = false;
        for cid in node.child_ids() {
            match self.tree.get(cid).proof {
                Proof::Loss(d) => win = Some(win.map_or(d + 1, |w| w.min(d + 1))),
                Proof::Win(d) => longest_loss = longest_loss.max(d + 1),
                Proof::Draw => any_draw = true,
                Proof::Unknown => all_proven = false,
            }
        }
        let proof = match win {
            Some(d) => Proof::Win(d),
            None if all_proven && any_draw => Proof::Draw,
            None if all_proven => Proof::Loss(longest_loss),
            None => Proof::Unknown,
        };
        self.tree.get_mut(id).proof = proof;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use atomic_chess::Game;

    use super::*;
    use crate::search::engine::{Engine, Limits, SearchConfig};

    /// After a search every expanded node holds the proof its children give:
    /// backups carry each change up, including one made by an expansion that finds children
    /// proven at once (wins, or moves that leave a king blast open). And the visits add up:
    /// every playout through a node went on into one child, except the one that evaluated it
    /// and those that ended at it proven, so batched searches leave no virtual loss behind.
    #[test]
    fn every_node_agrees_with_its_children_after_a_search() {
        for threads in [1, 2] {
            for fen in [
                "r1bqkb1r/pppp1ppp/2n1pn2/8/3P4/2N1PN2/PPP2PPP/R1BQKB1R w KQkq - 1 4",
                "r6r/1p1k2p1/4Nn1p/pP3p2/Pn3P2/8/2P1p1PP/R1B1K2R w KQ - 3 20",
                "6k1/5ppp/8/2b5/8/4B3/5PPP/6K1 w - - 0 1",
            ] {
                let game = Game::new(Position::from_fen(fen).expect("valid FEN"));
                let mut searcher = Mcts::new(&SearchConfig {
                    hash_mb: 16,
                    threads,
                    ..SearchConfig::default()
                });
                let limits = Limits {
                    nodes: Some(4000),
                    ..Limits::default()
                };
                searcher.search(
                    &game,
                    &limits,
                    &AtomicBool::new(false),
                    1,
                    None,
                    &mut |_| {},
                );
                let stats = searcher.stats();
                let root = *searcher.tree.get(ROOT);
                // The root's first visit is its evaluation before the first playout.
                assert_eq!(
                    u64::from(root.visits),
                    stats.reused + stats.playouts + 1,
                    "{fen}, {threads} threads: root visits"
                );
                assert!(stats.playouts <= 4000, "{fen}: {} playouts", stats.playouts);
                let mut checked = 0;
                for id in 0..searcher.tree.len() as NodeId {
                    let node = *searcher.tree.get(id);
                    let through: u32 = searcher.tree.children(&node).iter().map(|c| c.visits).sum();
                    let visits = if node.visits == 0 { 0 } else { 1 + through };
                    if node.proof == Proof::Unknown {
                        assert_eq!(node.visits, visits, "{fen}, {threads} threads: node {id}");
                    } else {
                        assert!(node.visits >= visits, "{fen}, {threads} threads: node {id}");
                    }
                    if !node.is_expanded() {
                        continue;
                    }
                    searcher.refresh(id);
                    let fresh = searcher.tree.get(id);
                    assert_eq!(
                        fresh.proof, node.proof,
                        "{fen}, {threads} threads: node {id} ({:?}) is stale",
                        node.mv
                    );
                    checked += 1;
                }
                assert!(checked > 100, "{fen}: only {checked} expanded nodes");
            }
        }
    }
}
