//! The transposition table of the alpha-beta search: one entry per slot, indexed by the low
//! bits of the Zobrist key and verified by the whole key.
//!
//! Replacement keeps the deeper result of the current search: an entry is overwritten by a new
//! position unless it is from this search and at least three plies deeper (a deep result costs
//! many nodes to find again; a stale one is worth nothing).

use atomic_chess::Move;

use crate::search::eval::MATE_BOUND;

/// What a stored score says about the true value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Bound {
    /// Empty slot.
    #[default]
    None,
    /// The value itself.
    Exact,
    /// The value is at least this (a cut-off).
    Lower,
    /// The value is at most this (every move failed low).
    Upper,
}

/// One slot.
#[derive(Clone, Copy, Debug, Default)]
pub struct Entry {
    pub key: u64,
    pub mv: Option<Move>,
    /// Mate scores are stored relative to this node (see [`to_table`]).
    pub score: i32,
    pub depth: i16,
    pub bound: Bound,
    generation: u8,
}

/// The table: a power-of-two number of entries.
pub struct Table {
    entries: Vec<Entry>,
    generation: u8,
}

impl Table {
    /// A table of about `mb` MiB (at least 1024 entries).
    pub fn new(mb: usize) -> Table {
        let want = (mb.max(1) << 20) / std::mem::size_of::<Entry>();
        // The largest power of two that fits.
        let size = (want.next_power_of_two() >> usize::from(!want.is_power_of_two())).max(1024);
        Table {
            entries: vec![Entry::default(); size],
            generation: 0,
        }
    }

    /// Forgets every entry (a new game).
    pub fn clear(&mut self) {
        self.entries.fill(Entry::default());
        self.generation = 0;
    }

    /// Marks the start of a search: older entries give way to new ones.
    pub fn new_search(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    fn slot(&self, key: u64) -> usize {
        key as usize & (self.entries.len() - 1)
    }

    /// The entry of `key`, if stored.
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.entries[self.slot(key)];
        (e.key == key && e.bound != Bound::None).then_some(e)
    }

    /// Stores a search result. `score` is already relative to the node ([`to_table`]).
    pub fn store(&mut self, key: u64, mv: Option<Move>, score: i32, depth: i32, bound: Bound) {
        let generation = self.generation;
        let slot = self.slot(key);
        let old = &mut self.entries[slot];
        if old.key != key
            && old.bound != Bound::None
            && old.generation == generation
            && i32::from(old.depth) > depth + 2
        {
            return;
        }
        let mv = if mv.is_none() && old.key == key {
            old.mv
        } else {
            mv
        };
        *old = Entry {
            key,
            mv,
            score,
            depth: depth.clamp(i16::MIN.into(), i16::MAX.into()) as i16,
            bound,
            generation,
        };
    }

    /// Permille of the first thousand slots holding an entry of the current search (UCI
    /// `hashfull`).
    pub fn permille_full(&self) -> u32 {
        let sample = self.entries.len().min(1000);
        let used = self.entries[..sample]
            .iter()
            .filter(|e| e.bound != Bound::None && e.generation == self.generation)
            .count();
        (used * 1000 / sample) as u32
    }
}

/// A score as stored: mate scores count plies from the node, not from the root, so that the
/// entry is right wherever the position is met again.
pub fn to_table(score: i32, ply: usize) -> i32 {
    let ply = ply as i32;
    if score >= MATE_BOUND {
        score + ply
    } else if score <= -MATE_BOUND {
        score - ply
    } else {
        score
    }
}

/// The inverse of [`to_table`] at a node `ply` plies from the root.
pub fn from_table(score: i32, ply: usize) -> i32 {
    let ply = ply as i32;
    if score >= MATE_BOUND {
        score - ply
    } else if score <= -MATE_BOUND {
        score + ply
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::eval::MATE;

    #[test]
    fn size_is_a_power_of_two_within_the_budget() {
        for mb in [1, 3, 16, 64] {
            let t = Table::new(mb);
            assert!(t.entries.len().is_power_of_two());
            assert!(t.entries.len() * std::mem::size_of::<Entry>() <= mb << 20);
            assert!(t.entries.len() * std::mem::size_of::<Entry>() * 2 > mb << 20);
        }
    }

    #[test]
    fn mate_scores_are_relative_to_the_node() {
        let win_in_5_from_root = MATE - 5;
        let stored = to_table(win_in_5_from_root, 2);
        assert_eq!(from_table(stored, 2), win_in_5_from_root);
        // The same position met at ply 4 is a win two plies later than at ply 2.
        assert_eq!(from_table(stored, 4), MATE - 7);
        assert_eq!(to_table(35, 7), 35);
        assert_eq!(from_table(to_table(-MATE + 9, 3), 3), -MATE + 9);
    }

    #[test]
    fn a_deep_entry_of_this_search_is_kept_and_a_stale_one_is_replaced() {
        let mut t = Table::new(1);
        let n = t.entries.len() as u64;
        let (a, b) = (5, 5 + n);
        t.store(a, None, 10, 9, Bound::Exact);
        t.store(b, None, 20, 3, Bound::Lower);
        assert_eq!(t.probe(a).map(|e| e.score), Some(10));
        assert!(t.probe(b).is_none());
        t.new_search();
        t.store(b, None, 20, 3, Bound::Lower);
        assert_eq!(t.probe(b).map(|e| e.score), Some(20));
        assert!(t.probe(a).is_none());
    }
}
