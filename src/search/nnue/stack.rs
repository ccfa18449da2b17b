//! A search thread's stack of accumulators, one per ply of the current line, updated lazily.
//!
//! The search pushes each child's board as it enters it and pops it on the way back. Nothing
//! is computed then: most children are cut off or answered from the table without an
//! evaluation. When a position is evaluated, its accumulator is made from the nearest
//! computed one below it on the stack by the pieces that differ between the two boards (an
//! atomic capture removes up to nine units; castling, promotion and en passant are a few
//! changes each; no move is special-cased), or from scratch when that is cheaper.
//!
//! A new line ([`Stack::reset`]) keeps the last line's root accumulator below its own root
//! (entry 0): the MCTS starts a line at every leaf, and consecutive leaves usually differ by a
//! few pieces, so a leaf's accumulator is an update of the previous one rather than a refresh.
//!
//! Correctness does not rest on the pushes and pops matching the search: the evaluation
//! checks the top entry's board against the position it is asked about and starts that
//! entry afresh if they differ. Nothing here allocates after [`Stack::new`].

use std::sync::Arc;

use atomic_chess::{Board, Position};

use super::accumulator::Accumulator;
use super::features::{self, Pieces};
use super::network::Network;

/// Entries of a stack: the deepest alpha-beta line (128 plies) plus a quiescence search (up to
/// 32 plies), with room to spare. Deeper pushes share the last entry.
pub const CAPACITY: usize = 192;
/// The entry of a line's root; the one below keeps the previous line's root.
const ROOT: usize = 1;

struct Entry {
    board: Board,
    /// Whether `acc` is `board`'s accumulator.
    computed: bool,
    acc: Accumulator,
}

/// The accumulators of one search thread's current line.
pub struct Stack {
    net: Arc<Network>,
    entries: Box<[Entry]>,
    /// The entry of the current position.
    top: usize,
    /// Pushes beyond the last entry not yet popped.
    overflow: usize,
    removed: Pieces,
    added: Pieces,
    /// Every piece of a board being refreshed.
    all: Pieces,
}

impl Stack {
    /// A stack for `net` (allocates every entry now).
    pub fn new(net: Arc<Network>) -> Stack {
        let entries = (0..CAPACITY)
            .map(|_| Entry {
                board: Board::empty(),
                computed: false,
                acc: Accumulator::new(&net),
            })
            .collect();
        Stack {
            net,
            entries,
            top: ROOT,
            overflow: 0,
            removed: Pieces::new(),
            added: Pieces::new(),
            all: Pieces::new(),
        }
    }

    /// The network it evaluates with.
    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }

    /// Starts a new line at `root` (its accumulator computed when first needed, from the last
    /// line's root if that is cheaper).
    pub fn reset(&mut self, root: &Board) {
        if self.entries[ROOT].computed {
            self.entries.swap(ROOT - 1, ROOT);
        }
        self.top = ROOT;
        self.overflow = 0;
        let e = &mut self.entries[ROOT];
        e.board = *root;
        e.computed = false;
    }

    /// Enters a child whose board is `board`.
    #[inline]
    pub fn push(&mut self, board: &Board) {
        if self.top + 1 < self.entries.len() {
            self.top += 1;
        } else {
            self.overflow += 1;
        }
        let e = &mut self.entries[self.top];
        e.board = *board;
        e.computed = false;
    }

    /// Goes back to the parent.
    #[inline]
    pub fn pop(&mut self) {
        if self.overflow > 0 {
            // The shared last entry holds a deeper board now: the next evaluation starts it
            // afresh (its board will not match).
            self.overflow -= 1;
        } else if self.top > ROOT {
            self.top -= 1;
        }
    }

    /// The evaluation (centipawns, for the side to move) of `pos`, the current position.
    #[inline]
    pub fn evaluate(&mut self, pos: &Position) -> i32 {
        self.compute(pos.board());
        let pieces = pos.board().occupied().count();
        self.net
            .evaluate(&self.entries[self.top].acc, pos.turn(), pieces)
    }

    /// Makes the top entry the accumulator of `board`, and on the way every entry of the line
    /// between it and the nearest computed one below: siblings share their parent, so an
    /// evaluation below a node whose own evaluation came from the table (its accumulator never
    /// made) updates from that node's accumulator rather than starting afresh for each child.
    fn compute(&mut self, board: &Board) {
        let top = self.top;
        if self.entries[top].board != *board {
            self.entries[top].board = *board;
            self.entries[top].computed = false;
        }
        if self.entries[top].computed {
            return;
        }
        let base = self.entries[..top].iter().rposition(|e| e.computed);
        let first = if let Some(i) = base {
            i + 1
        } else {
            // Nothing computed below: the lowest entry of the line starts afresh.
            let lowest = &mut self.entries[ROOT.min(top)];
            lowest
                .acc
                .refresh(&self.net, &lowest.board, &mut self.added);
            lowest.computed = true;
            ROOT.min(top) + 1
        };
        for i in first..=top {
            let (below, rest) = self.entries.split_at_mut(i);
            let (from, entry) = (&below[i - 1], &mut rest[0]);
            features::difference(
                &from.board,
                &entry.board,
                &mut self.removed,
                &mut self.added,
            );
            // From scratch costs one addition per piece: take the cheaper.
            let changes = self.removed.len() + self.added.len();
            if changes < entry.board.occupied().count() as usize {
                entry.acc.update_from(
                    &self.net,
                    &from.acc,
                    &from.board,
                    &entry.board,
                    &self.removed,
                    &self.added,
                    &mut self.all,
                );
            } else {
                entry.acc.refresh(&self.net, &entry.board, &mut self.added);
            }
            entry.computed = true;
        }
    }

    /// The accumulator of the current position, made if needed (for tests).
    pub fn accumulator(&mut self, board: &Board) -> &Accumulator {
        self.compute(board);
        &self.entries[self.top].acc
    }
}
