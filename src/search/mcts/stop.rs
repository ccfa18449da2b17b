//! When a search ends on its own: a root the solver has settled, or the time limits (the soft
//! limit stretched while the best move is unstable). The stop flag and the node, depth and mate
//! limits are checked in the search loop itself.

use std::time::Duration;

use super::Mcts;
use crate::search::engine::Limits;
use crate::search::tree::{Node, Proof, ROOT};

impl Mcts {
    /// Whether the root's proof ends the search. A proven loss or draw, or a win with the next
    /// move, ends it at once. A longer proven win keeps searching the unproven root moves for a
    /// shorter one (selection skips proven root children then) for as many playouts again as the
    /// proof took, plus a little: a shorter win is both safer and what puzzle suites expect.
    pub(super) fn root_settled(&self, proven_at: &mut Option<u64>) -> bool {
        match self.tree.get(ROOT).proof {
            Proof::Unknown => false,
            Proof::Win(d) if d > 1 => {
                let at = *proven_at.get_or_insert(self.stats.playouts);
                let open = self
                    .tree
                    .get(ROOT)
                    .child_ids()
                    .any(|c| self.tree.get(c).proof == Proof::Unknown);
                !open || self.stats.playouts >= 2 * at + 2000
            }
            _ => true,
        }
    }

    /// Whether the time limits say stop. Stops at `hard`; at `soft` unless the best move is
    /// unstable (then at `soft · extension`).
    pub(super) fn out_of_time(
        &self,
        limits: &Limits,
        elapsed: Duration,
        watch: &mut Watch,
    ) -> bool {
        if limits.hard.is_some_and(|hard| elapsed >= hard) {
            return true;
        }
        let Some(soft) = limits.soft else {
            return false;
        };
        let root = self.tree.get(ROOT);
        let mut first: Option<Node> = None;
        let mut best_value: Option<Node> = None;
        for cid in root.child_ids() {
            let c = *self.tree.get(cid);
            if matches!(c.proof, Proof::Win(_)) {
                continue;
            }
            if first.is_none_or(|f| c.visits > f.visits) {
                first = Some(c);
            }
        }
        let Some(first) = first else {
            return true;
        };
        for cid in root.child_ids() {
            let c = *self.tree.get(cid);
            if c.proof == Proof::Unknown
                && c.visits * 10 >= first.visits
                && best_value.is_none_or(|b| c.q > b.q)
            {
                best_value = Some(c);
            }
        }
        let value = first.q;
        if watch.reference.is_none() && elapsed >= soft / 4 {
            watch.reference = Some(value);
        }
        let unstable = best_value.is_some_and(|b| b.mv != first.mv && b.q > value + 0.01)
            || watch.reference.is_some_and(|r| value < r - 0.05);
        let extension = f64::from(self.config.params.time_extension);
        let mut target = if unstable {
            Duration::try_from_secs_f64(soft.as_secs_f64() * extension).unwrap_or(Duration::MAX)
        } else {
            soft
        };
        if let Some(hard) = limits.hard {
            target = target.min(hard);
        }
        elapsed >= target
    }
}

/// Time-management memory within one search.
#[derive(Default)]
pub(super) struct Watch {
    /// The best move's value when a quarter of the soft limit had passed.
    reference: Option<f32>,
}
