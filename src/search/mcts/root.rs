//! The root's answer: the move to play (the shortest proven win, else the most visited move
//! not proven lost, optionally a random pick among near-equal ones), its principal variation
//! and score, the `info` lines and the search's result.

use std::time::Instant;

use atomic_chess::Move;

use super::Mcts;
use crate::search::engine::{Proven, Score, SearchInfo, SearchResult};
use crate::search::eval;
use crate::search::tree::{Node, NodeId, Proof, ROOT};

impl Mcts {
    /// The child to play from `id`: the shortest proven win; otherwise the most visited move
    /// that is not proven lost (a proven draw if the best alternative looks worse than a draw);
    /// the longest loss only if every move is lost. With `randomize`, a random pick among
    /// near-equal moves chosen with the random number `random`.
    pub(super) fn best_child(&self, id: NodeId, random: Option<u64>) -> Option<NodeId> {
        let node = *self.tree.get(id);
        if !node.is_expanded() {
            return None;
        }
        let children: Vec<NodeId> = node.child_ids().collect();
        let get = |c: &NodeId| *self.tree.get(*c);
        let by_visits = |c: &NodeId| {
            let n = get(c);
            // Unvisited children tie on visits and value: the prior decides between them.
            (n.visits, (n.q * 1e6) as i64, (n.prior * 1e6) as i64)
        };
        if let Some(&win) = children
            .iter()
            .filter(|c| matches!(get(c).proof, Proof::Loss(_)))
            .min_by_key(|c| {
                (
                    proof_distance(get(c).proof),
                    std::cmp::Reverse(get(c).visits),
                )
            })
        {
            return Some(win);
        }
        let open: Vec<NodeId> = children
            .iter()
            .copied()
            .filter(|c| !matches!(get(c).proof, Proof::Win(_)))
            .collect();
        if open.is_empty() {
            return children
                .iter()
                .copied()
                .max_by_key(|c| (proof_distance(get(c).proof), get(c).visits));
        }
        let mut best = *open.iter().max_by_key(|c| by_visits(c))?;
        let best_node = get(&best);
        if best_node.proof != Proof::Draw
            && best_node.q < 0.47
            && let Some(&draw) = open.iter().find(|c| get(c).proof == Proof::Draw)
        {
            best = draw;
        }
        if let Some(random) = random
            && get(&best).proof == Proof::Unknown
        {
            let window = self.config.params.random_window;
            let best_value = get(&best).q;
            let best_visits = get(&best).visits;
            let pool: Vec<NodeId> = open
                .iter()
                .copied()
                .filter(|c| {
                    let n = get(c);
                    n.proof == Proof::Unknown
                        && n.visits * 20 >= best_visits
                        && n.q >= best_value - window
                })
                .collect();
            let total: u64 = pool.iter().map(|c| u64::from(get(c).visits)).sum();
            if total > 0 {
                let mut pick = random % total;
                for c in pool {
                    let v = u64::from(get(&c).visits);
                    if pick < v {
                        best = c;
                        break;
                    }
                    pick -= v;
                }
            }
        }
        Some(best)
    }

    /// Principal variation starting with the child `first`.
    fn pv_from(&self, first: NodeId) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut id = first;
        while let Some(m) = self.tree.get(id).mv {
            pv.push(m);
            if pv.len() >= 64 {
                break;
            }
            match self.best_child(id, None) {
                Some(next)
                    if self.tree.get(next).visits > 0
                        || self.tree.get(next).proof != Proof::Unknown =>
                {
                    id = next;
                }
                _ => break,
            }
        }
        pv
    }

    /// Score of playing the root child `child`, from the root's side to move.
    fn child_score(&self, child: &Node) -> (Score, f32, (u32, u32, u32)) {
        match child.proof {
            Proof::Loss(d) => (Score::Mate(i32::from(d) / 2 + 1), 1.0, (1000, 0, 0)),
            Proof::Win(d) => (Score::Mate(-(i32::from(d) + 1) / 2), 0.0, (0, 0, 1000)),
            Proof::Draw => (Score::Cp(0), 0.5, (0, 1000, 0)),
            Proof::Unknown => {
                let v = child.q.clamp(0.0, 1.0);
                (
                    Score::Cp(eval::centipawns(v, self.config.params.eval_scale)),
                    v,
                    SearchInfo::wdl(v),
                )
            }
        }
    }

    pub(super) fn line_info(
        &self,
        start: Instant,
        child: Option<NodeId>,
        multipv: u32,
    ) -> SearchInfo {
        let elapsed = start.elapsed();
        let root = *self.tree.get(ROOT);
        let (score, _, wdl) = match (root.proof, child) {
            (Proof::Loss(d), _) => (Score::Mate(-(i32::from(d) / 2)), 0.0, (0, 0, 1000)),
            (Proof::Draw, None) => (Score::Cp(0), 0.5, (0, 1000, 0)),
            (_, Some(c)) => self.child_score(self.tree.get(c)),
            (_, None) => (Score::Cp(0), 0.5, (0, 1000, 0)),
        };
        let pv = child.map(|c| self.pv_from(c)).unwrap_or_default();
        let playouts = self.stats.playouts;
        SearchInfo {
            depth: (self.stats.depth_sum / playouts.max(1)).max(1) as u32,
            seldepth: self.stats.max_depth.max(1),
            nodes: playouts,
            nps: SearchInfo::rate(playouts, elapsed),
            time: elapsed,
            score,
            wdl,
            pv,
            hashfull: self.tree.permille_full(),
            multipv,
        }
    }

    pub(super) fn finish(
        &mut self,
        start: Instant,
        on_info: &mut dyn FnMut(&SearchInfo),
        random: Option<u64>,
    ) -> SearchResult {
        self.stats.positions += self.qstats.nodes;
        let best = self.best_child(ROOT, random);
        let info = self.line_info(start, best, 1);
        on_info(&info);
        if self.lines > 1 && best.is_some() {
            let mut others: Vec<NodeId> = self
                .tree
                .get(ROOT)
                .child_ids()
                .filter(|&c| Some(c) != best)
                .collect();
            others.sort_by_key(|&c| {
                let n = self.tree.get(c);
                match n.proof {
                    Proof::Loss(d) => (0, i64::from(d)),
                    Proof::Win(d) => (2, -i64::from(d)),
                    _ => (1, -i64::from(n.visits)),
                }
            });
            for (i, c) in others.into_iter().take(self.lines - 1).enumerate() {
                let line = self.line_info(start, Some(c), i as u32 + 2);
                on_info(&line);
            }
        }
        let root = *self.tree.get(ROOT);
        let proven = match root.proof {
            Proof::Win(d) => Some(Proven::Win(u32::from(d).div_ceil(2))),
            Proof::Loss(d) => Some(Proven::Loss(u32::from(d) / 2)),
            Proof::Draw => Some(Proven::Draw),
            Proof::Unknown => None,
        };
        let estimate = best.map_or(0.5, |c| self.child_score(self.tree.get(c)).1);
        let best_move = best.and_then(|c| self.tree.get(c).mv);
        let ponder_move = best
            .and_then(|c| self.best_child(c, None))
            .and_then(|c| self.tree.get(c).mv);
        SearchResult::new(best_move, ponder_move, info, proven, estimate)
    }
}

fn proof_distance(proof: Proof) -> u16 {
    match proof {
        Proof::Win(d) | Proof::Loss(d) => d,
        _ => 0,
    }
}
