//! The tree's arena across and within searches: the subtree of the moves played since the last
//! search is kept, and a full arena is half freed by pruning its least-visited branches rather
//! than ending the search.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use atomic_chess::Game;

use super::Mcts;
use crate::search::engine::Limits;
use crate::search::tree::{Node, ROOT};

impl Mcts {
    /// Frees half of a full tree by pruning its least-visited branches (`Tree::prune`), so a
    /// long search (a slow time control, pondering, a big node budget) keeps going instead of
    /// stopping when the `Hash` is used up. Not once a timed search is past its soft limit
    /// (it would stop soon anyway); a stop request or the hard limit aborts the copy. Returns
    /// whether there is room again.
    pub(super) fn make_room(&mut self, limits: &Limits, start: Instant, stop: &AtomicBool) -> bool {
        // Pruning moves nodes: refinements a batch left for the next must be done first.
        self.flush_refines();
        if !limits.infinite && limits.soft.is_some_and(|soft| start.elapsed() >= soft) {
            return false;
        }
        let hard = if limits.infinite { None } else { limits.hard };
        let abort =
            || stop.load(Ordering::Relaxed) || hard.is_some_and(|hard| start.elapsed() >= hard);
        if self.unprunable {
            return false;
        }
        let target = self.tree.capacity() / 2;
        let pruned = self.tree.prune(target, &abort).is_some();
        if pruned {
            self.stats.prunes += 1;
        } else if !abort() {
            // Even the root's children alone fill the tree: do not try again this search.
            self.unprunable = true;
        }
        pruned
    }

    /// Reuses the subtree of the moves played since the last search, or starts afresh.
    pub(super) fn prepare_root(&mut self, game: &Game) {
        let target = *game.position();
        let mut reused = false;
        if let Some(old) = self.root_pos
            && !self.tree.is_empty()
        {
            // Find the old root in the game and follow the moves played since.
            let mut positions = Vec::with_capacity(game.moves().len() + 1);
            positions.push(*game.start());
            for &m in game.moves() {
                let mut next = positions[positions.len() - 1];
                next.play_unchecked(m);
                positions.push(next);
            }
            if let Some(index) = positions.iter().rposition(|p| *p == old) {
                let mut id = ROOT;
                let mut found = true;
                for &m in &game.moves()[index..] {
                    if let Some(child) = self
                        .tree
                        .get(id)
                        .child_ids()
                        .find(|&c| self.tree.get(c).mv == Some(m))
                    {
                        id = child;
                    } else {
                        found = false;
                        break;
                    }
                }
                // Nodes grow with visits: a subtree holding more than half the arena is
                // refused below anyway, so do not spend a long copy on it first.
                let share = u64::from(self.tree.get(id).visits) * self.tree.len() as u64
                    / u64::from(self.tree.get(ROOT).visits.max(1));
                if found && self.tree.get(id).visits > 0 && share * 2 <= self.tree.capacity() as u64
                {
                    self.tree.reroot(id);
                    reused = self.tree.len() * 2 <= self.tree.capacity();
                }
            }
        }
        if !reused {
            self.tree.clear();
        }
        let root = self.tree.get_mut(ROOT);
        root.mv = None;
        if !root.is_expanded() {
            // A leaf proof (a repetition, say) depended on the old path: search the root afresh.
            *root = Node::new(None, 1.0);
        }
        self.root_pos = Some(target);
    }
}
