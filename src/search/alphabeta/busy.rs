//! Which positions the threads of a lazy SMP search are searching right now (simplified
//! ABDADA, after Tom Kerrigan): a thread about to search a late move of a deep node first
//! looks whether another thread is inside that child, and if so leaves it for last. By the
//! time it comes back the other thread has usually stored the child in the transposition
//! table, and the second search is a table cut-off instead of the same tree searched twice.
//!
//! Why: with plain lazy SMP two threads at the same depth walk nearly the same tree in
//! nearly the same order, so a second thread widens the search more than it shortens the
//! time to a depth (issue 31). Deferring a busy child makes the threads split the moves of a
//! node between them, which is what a tree-splitting search does, without any locking.
//!
//! The record is a small direct-mapped table of child keys (Zobrist hashes), written with
//! relaxed atomics: a thread marks a child when it starts it and unmarks it when done (if no
//! other thread has taken the slot since). A lost or stale mark costs nothing but a move
//! searched in another order, so nothing here needs to be exact, and a one-thread search
//! never looks at it (it stays bit-for-bit the search without helpers).

use std::sync::atomic::{AtomicU64, Ordering};

/// Slots: a power of two. Only children of nodes at least `AbSmpDefer` plies deep are marked,
/// a few hundred at a time on a handful of threads, so collisions are rare at 32 768.
const SLOTS: usize = 1 << 15;

/// Child keys being searched, by any thread of the search.
pub(super) struct Busy {
    slots: Box<[AtomicU64]>,
}

impl Busy {
    /// An empty record (256 KiB).
    pub(super) fn new() -> Busy {
        Busy {
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Forgets every mark (at the start of a search: an aborted search leaves its own).
    pub(super) fn clear(&self) {
        for slot in &self.slots {
            slot.store(0, Ordering::Relaxed);
        }
    }

    #[inline(always)]
    fn slot(&self, key: u64) -> &AtomicU64 {
        &self.slots[(key as usize) & (SLOTS - 1)]
    }

    /// Whether some thread marked `key` and has not unmarked it.
    #[inline(always)]
    pub(super) fn is_busy(&self, key: u64) -> bool {
        key != 0 && self.slot(key).load(Ordering::Relaxed) == key
    }

    /// Marks `key` as being searched (taking its slot from whatever was there).
    #[inline(always)]
    pub(super) fn enter(&self, key: u64) {
        self.slot(key).store(key, Ordering::Relaxed);
    }

    /// Unmarks `key`, unless another key has taken its slot since.
    #[inline(always)]
    pub(super) fn leave(&self, key: u64) {
        let _ = self
            .slot(key)
            .compare_exchange(key, 0, Ordering::Relaxed, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::{Busy, SLOTS};

    #[test]
    fn a_mark_lasts_until_its_own_leave_and_a_clear() {
        let busy = Busy::new();
        let key = 0x1234_5678_9abc_def1;
        assert!(!busy.is_busy(key));
        busy.enter(key);
        assert!(busy.is_busy(key));
        // Another key in the same slot takes it; leaving the first then keeps the second.
        let other = key ^ (SLOTS as u64) << 3;
        busy.enter(other);
        assert!(!busy.is_busy(key));
        busy.leave(key);
        assert!(busy.is_busy(other));
        busy.leave(other);
        assert!(!busy.is_busy(other));
        busy.enter(key);
        busy.clear();
        assert!(!busy.is_busy(key));
        // Key 0 is an empty slot, never busy.
        busy.enter(0);
        assert!(!busy.is_busy(0));
    }
}
