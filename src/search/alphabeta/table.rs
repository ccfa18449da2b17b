//! The transposition table of the alpha-beta search: one entry per slot, indexed by the low
//! bits of the Zobrist key and verified by the whole key.
//!
//! Replacement keeps the deeper result of the current search: an entry is overwritten by a new
//! position unless it is from this search and at least three plies deeper (a deep result costs
//! many nodes to find again; a stale one is worth nothing).
//!
//! Shared between the threads of a search (lazy SMP) without a lock: a slot is two
//! `AtomicU64` read and written with relaxed loads and stores, so two threads writing one
//! slot at once can leave a torn slot, the key word of one write beside the data word of
//! another. The key word is therefore stored xored with a mix of the data word (the usual
//! lockless-hashing check): a torn slot reads back with a scrambled key, fails the key check
//! and is taken for another position's. Only a coincidence in all 48 checked bits (odds of
//! 2⁻⁴⁸, as for two positions sharing a key) could pass it.

use std::sync::atomic::{AtomicU64, Ordering};

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

impl Bound {
    const ALL: [Bound; 4] = [Bound::None, Bound::Exact, Bound::Lower, Bound::Upper];
}

/// One slot as the search reads it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Entry {
    pub mv: Option<Move>,
    /// Mate scores are stored relative to this node (see [`to_table`]).
    pub score: i32,
    pub depth: i32,
    pub bound: Bound,
    /// The position's static evaluation (uncorrected), when the node computed one: it is a
    /// pure function of the position, so a node met again need not evaluate it again.
    pub eval: Option<i32>,
    generation: u8,
}

/// Generations wrap at this (six bits of a slot).
const GENERATIONS: u8 = 64;

/// One slot as stored, 16 bytes: the key's upper 48 bits and the static evaluation (16, `NO_EVAL`
/// for none), then the move's bits (32), the score (16), the depth (8), the bound (2) and the
/// generation (6). The key's lower 16 bits are the slot's index in any table of 1 MiB or more,
/// so the check loses nothing there. In memory the first word is xored with [`check`] of the
/// second (see the module's documentation). All zeros is an empty slot (the check of 0 is 0),
/// so a new table is a zeroed allocation: the operating system commits its pages only as they
/// are written, and a table of a few hundred MB costs nothing until the search fills it (or
/// [`Table::commit`] writes it).
#[derive(Clone, Copy)]
struct Slot {
    key: u64,
    data: u64,
}

/// The bits of the first word that hold the key.
const KEY_MASK: u64 = !0xffff;

/// The stored evaluation that means none (in check, or outside the 16 bits).
const NO_EVAL: i16 = i16::MIN;

impl Slot {
    fn pack(key: u64, entry: &Entry) -> Slot {
        let eval = entry
            .eval
            .and_then(|e| i16::try_from(e).ok())
            .filter(|&e| e != NO_EVAL)
            .unwrap_or(NO_EVAL);
        let key = key & KEY_MASK | u64::from(eval as u16);
        let mv = entry.mv.map_or(0, Move::to_bits);
        let data = u64::from(mv)
            | u64::from(entry.score.clamp(i16::MIN.into(), i16::MAX.into()) as i16 as u16) << 32
            | u64::from(entry.depth.clamp(i8::MIN.into(), i8::MAX.into()) as i8 as u8) << 48
            | (entry.bound as u64) << 56
            | u64::from(entry.generation % GENERATIONS) << 58;
        Slot { key, data }
    }

    fn entry(self) -> Entry {
        let d = self.data;
        Entry {
            mv: Move::from_bits(d as u32),
            score: i32::from((d >> 32) as u16 as i16),
            depth: i32::from((d >> 48) as u8 as i8),
            bound: Bound::ALL[((d >> 56) & 3) as usize],
            eval: Some(i32::from(self.key as u16 as i16)).filter(|&e| e != i32::from(NO_EVAL)),
            generation: (d >> 58) as u8,
        }
    }

    /// The slot from its two words as stored.
    fn from_words(stored_key: u64, data: u64) -> Slot {
        Slot {
            key: stored_key ^ check(data),
            data,
        }
    }

    /// The two words to store.
    fn words(self) -> [u64; 2] {
        [self.key ^ check(self.data), self.data]
    }

    fn holds(self, key: u64) -> bool {
        (self.key ^ key) & KEY_MASK == 0
    }

    fn bound(self) -> Bound {
        Bound::ALL[((self.data >> 56) & 3) as usize]
    }

    fn generation(self) -> u8 {
        (self.data >> 58) as u8
    }
}

/// What the key word is xored with: a bijective mix of the data word, so that any change of
/// the data scrambles the checked bits of the key (a plain xor would let a tear that changed
/// only the data's low 16 bits, a half of the move, pass and corrupt the stored evaluation).
/// `check(0) == 0`: an empty slot stays all zeros.
fn check(data: u64) -> u64 {
    crate::search::mix64(data)
}

/// The table: a power-of-two number of slots, each stored as `[key, data]` in a zeroed
/// allocation, which the operating system commits lazily, in 2 MiB blocks on Linux
/// (`advise_huge_pages`), unless [`Table::commit`] touches it all first. Shared by reference
/// between the threads of a search: probes and stores take `&self`.
pub struct Table {
    slots: Box<[[AtomicU64; 2]]>,
    /// Changed only between searches (`&mut self`), read by every thread.
    generation: u8,
    /// Whether every page has been written since the allocation (`commit`, `clear`).
    committed: bool,
}

/// `len` (at least 1) empty slots in one zeroed allocation. Why not `vec!`: an atomic is not
/// `Clone`; and the operating system's zeroed pages need no second zeroing.
fn zeroed(len: usize) -> Box<[[AtomicU64; 2]]> {
    let layout = std::alloc::Layout::array::<[AtomicU64; 2]>(len.max(1))
        .expect("a table of at most the address space");
    // SAFETY: the layout's size is not zero (len >= 1, 16 bytes a slot). All zero bits is a
    // valid `AtomicU64` (0), so the zeroed memory holds `len` initialised slots, and the box
    // frees it with the same layout (`Layout::array` of the same type and length).
    let slots = unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<[AtomicU64; 2]>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len.max(1)))
    };
    advise_huge_pages(&slots);
    slots
}

/// Asks Linux to back the table with 2 MiB pages (transparent huge pages, where the system
/// allows them only on request, as by default). Why: every probe lands on a random slot,
/// and with 4 KiB pages nearly each one also misses the processor's address-translation
/// cache; a 64 MiB table in huge pages is 32 translations, which the cache holds. Only the
/// whole 2 MiB blocks inside the allocation are advised; a refusal changes nothing but speed.
fn advise_huge_pages(slots: &[[AtomicU64; 2]]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = slots.as_ptr() as usize;
        let end = start + size_of_val(slots);
        let first = start.next_multiple_of(HUGE);
        let last = end / HUGE * HUGE;
        if last > first {
            // SAFETY: the range lies inside `slots`' allocation and starts on a page
            // boundary; MADV_HUGEPAGE changes how pages are backed, never their contents.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = slots;
}

impl Table {
    /// A table of about `mb` MiB (at least 1024 slots).
    pub fn new(mb: usize) -> Table {
        let want = (mb.max(1) << 20) / size_of::<[AtomicU64; 2]>();
        // The largest power of two that fits.
        let size = (want.next_power_of_two() >> usize::from(!want.is_power_of_two())).max(1024);
        Table {
            slots: zeroed(size),
            generation: 0,
            committed: false,
        }
    }

    /// Has the operating system commit every page now, if not done yet: then no search waits
    /// on page faults (or on the kernel finding 2 MiB pages) as it first touches the table.
    /// The UCI front asks for it between searches (`isready`, `ucinewgame`): on a busy machine
    /// a `go nodes 20000` on a fresh 64 MiB table took 31 ms instead of 7 (455 ms instead of
    /// 17 for the first search of the process, which also made the table). The bot
    /// does not: it makes a table per game on the game's first move, where touching all of a
    /// large table before the search (whose deadline starts after it) would cost more than
    /// the pages the move touches.
    pub fn commit(&mut self) {
        if !self.committed {
            self.clear();
        }
    }

    /// Forgets every entry (a new game), in place, which commits every page. Why not a fresh
    /// zeroed allocation (as until session 30): its pages are committed on first touch, by
    /// the next search, which then stalls as `commit` says; zeroing 64 MiB here takes a few
    /// milliseconds, before `go`.
    pub fn clear(&mut self) {
        for [key, data] in &mut self.slots {
            *key.get_mut() = 0;
            *data.get_mut() = 0;
        }
        self.generation = 0;
        self.committed = true;
    }

    /// Marks the start of a search: older entries give way to new ones.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) % GENERATIONS;
    }

    fn slot(&self, key: u64) -> usize {
        key as usize & (self.slots.len() - 1)
    }

    /// The slot at `index`, as two relaxed loads: possibly torn, which the key check catches.
    fn read(&self, index: usize) -> Slot {
        let [key, data] = &self.slots[index];
        Slot::from_words(key.load(Ordering::Relaxed), data.load(Ordering::Relaxed))
    }

    /// Writes `slot` at `index` (two relaxed stores; see [`Table::read`]).
    fn write(&self, index: usize, slot: Slot) {
        let [key, data] = slot.words();
        self.slots[index][0].store(key, Ordering::Relaxed);
        self.slots[index][1].store(data, Ordering::Relaxed);
    }

    /// Asks the processor to bring `key`'s slot into the cache: called as soon as a child
    /// position is known, so that the probe at the child finds the slot loaded instead of
    /// waiting for memory (the probe was a fifth of the search's time).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let ptr = self
                .slots
                .as_ptr()
                .wrapping_add(self.slot(key))
                .cast::<i8>();
            // SAFETY: a prefetch is a hint; it never faults, and `ptr` points into `slots`.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The entry of `key`, if stored.
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let s = self.read(self.slot(key));
        (s.holds(key) && s.bound() != Bound::None).then(|| s.entry())
    }

    /// Stores a search result. `score` is already relative to the node ([`to_table`]);
    /// `eval` is the node's uncorrected static evaluation, if it has one.
    pub fn store(
        &self,
        key: u64,
        mv: Option<Move>,
        score: i32,
        depth: i32,
        bound: Bound,
        eval: Option<i32>,
    ) {
        let generation = self.generation;
        let slot = self.slot(key);
        let old = self.read(slot);
        let same = old.holds(key);
        if !same && old.bound() != Bound::None {
            let kept = old.entry();
            if kept.generation == generation && kept.depth > depth + 2 {
                return;
            }
        }
        let mv = if mv.is_none() && same {
            old.entry().mv
        } else {
            mv
        };
        let entry = Entry {
            mv,
            score,
            depth,
            bound,
            eval,
            generation,
        };
        self.write(slot, Slot::pack(key, &entry));
    }

    /// Permille of the first thousand slots holding an entry of the current search (UCI
    /// `hashfull`).
    pub fn permille_full(&self) -> u32 {
        let sample = self.slots.len().min(1000);
        let used = (0..sample)
            .map(|i| self.read(i))
            .filter(|s| s.bound() != Bound::None && s.generation() == self.generation)
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
            assert!(t.slots.len().is_power_of_two());
            assert!(t.slots.len() * 16 <= mb << 20);
            assert!(t.slots.len() * 16 * 2 > mb << 20);
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
        let n = t.slots.len() as u64;
        let (a, b) = (5, 5 + n);
        t.store(a, None, 10, 9, Bound::Exact, None);
        t.store(b, None, 20, 3, Bound::Lower, Some(-7));
        assert_eq!(t.probe(a).map(|e| e.score), Some(10));
        assert!(t.probe(b).is_none());
        t.new_search();
        t.store(b, None, 20, 3, Bound::Lower, Some(-7));
        assert_eq!(t.probe(b).map(|e| e.score), Some(20));
        assert_eq!(t.probe(b).map(|e| e.eval), Some(Some(-7)));
        assert!(t.probe(a).is_none());
    }

    #[test]
    fn an_entry_reads_back_as_stored() {
        let pos = atomic_chess::Position::from_fen("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1").unwrap();
        let promotion = pos.parse_uci("b7b8n").unwrap();
        let mut t = Table::new(1);
        for (mv, score, depth, bound, eval) in [
            (Some(promotion), -MATE + 3, -2, Bound::Upper, Some(-32_767)),
            (None, MATE - 1, 120, Bound::Lower, None),
            (Some(promotion), 0, 0, Bound::Exact, Some(32_767)),
            (None, 5, 1, Bound::Exact, Some(0)),
        ] {
            t.new_search();
            t.store(77, mv, score, depth, bound, eval);
            let e = t.probe(77).expect("stored");
            assert_eq!(
                (e.mv, e.score, e.depth, e.bound, e.eval),
                (mv.or(Some(promotion)), score, depth, bound, eval)
            );
        }
        // An evaluation outside 16 bits is not stored (the node evaluates again).
        t.store(77, None, 0, 1, Bound::Exact, Some(40_000));
        assert_eq!(t.probe(77).map(|e| e.eval), Some(None));
        // A key that differs only in the upper bits is another position.
        assert!(t.probe(77 | 1 << 40).is_none());
        t.clear();
        assert!(t.probe(77).is_none());
    }

    /// `commit` (asked for at every UCI `isready`) writes a new table once and never again:
    /// what later searches stored stays.
    #[test]
    fn commit_empties_a_new_table_once_and_keeps_what_was_stored_after() {
        let mut t = Table::new(1);
        assert!(!t.committed);
        t.commit();
        assert!(t.committed);
        assert!((0..t.slots.len()).all(|i| t.read(i).key == 0 && t.read(i).data == 0));
        t.new_search();
        t.store(77, None, 12, 3, Bound::Exact, Some(5));
        t.commit();
        assert_eq!(t.probe(77).map(|e| e.score), Some(12));
        t.clear();
        assert!(t.probe(77).is_none() && t.committed);
    }

    /// The two stored words of `key`'s slot.
    fn words(t: &Table, key: u64) -> [u64; 2] {
        let [k, d] = &t.slots[t.slot(key)];
        [k.load(Ordering::Relaxed), d.load(Ordering::Relaxed)]
    }

    #[test]
    fn a_torn_slot_is_never_read_as_valid() {
        let pos = atomic_chess::Position::from_fen("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1").unwrap();
        let [a, b] = ["e1d1", "e1f1"].map(|m| pos.parse_uci(m).unwrap());
        let t = Table::new(1);
        let n = t.slots.len() as u64;
        // Writes that differ in every field, in the move alone (its low bits: a plain xor of
        // the data would let that tear pass and corrupt the evaluation), in the evaluation
        // alone, and in the key alone (another position in the same slot).
        let writes = [
            (77, Some(a), 10, 5, Bound::Exact, Some(3)),
            (77, Some(b), -40, 7, Bound::Lower, None),
            (77, Some(b), 10, 5, Bound::Exact, Some(3)),
            (77, Some(a), 10, 5, Bound::Exact, Some(-900)),
            (77 + 3 * n, Some(a), 10, 5, Bound::Exact, Some(3)),
        ];
        let stored: Vec<[u64; 2]> = writes
            .iter()
            .map(|&(key, mv, score, depth, bound, eval)| {
                t.store(key, mv, score, depth, bound, eval);
                assert_eq!(t.probe(key).map(|e| e.score), Some(score));
                words(&t, key)
            })
            .collect();
        let mut torn = 0;
        for (i, first) in stored.iter().enumerate() {
            for (j, second) in stored.iter().enumerate() {
                if first[1] == second[1] {
                    continue;
                }
                // The key word of write i beside the data word of write j.
                t.slots[t.slot(77)][0].store(first[0], Ordering::Relaxed);
                t.slots[t.slot(77)][1].store(second[1], Ordering::Relaxed);
                for key in [writes[i].0, writes[j].0] {
                    assert!(t.probe(key).is_none(), "writes {i} and {j}, key {key}");
                }
                torn += 1;
            }
        }
        assert!(torn >= 12, "{torn} torn slots tried");
    }

    /// Threads writing the same few slots at once (different positions, and different results
    /// for one position) while others read: every entry read is one that some thread wrote,
    /// whole.
    #[test]
    fn entries_read_while_other_threads_write_are_whole() {
        const WRITERS: u64 = 3;
        const ROUNDS: u64 = 20_000;
        let t = Table::new(1);
        let n = t.slots.len() as u64;
        // Eight positions in each of two slots.
        let keys: Vec<u64> = (0..8u64).flat_map(|j| [5 + j * n, 9 + j * n]).collect();
        // What writer `w` stores for the position numbered `j`: every field says `(j, w)`.
        let entry_of = |j: u64, w: u64| {
            let score = (j * 100 + w) as i32;
            (score, w as i32, Some(-(score + 1)))
        };
        // The reader makes passes over the keys until a pass that began with every writer done,
        // so that on a loaded machine, where it may run before or after the writers, it reads
        // while they write whenever they overlap, and reads something in any case.
        let done = AtomicU64::new(0);
        let (seen, torn) = std::thread::scope(|s| {
            for w in 0..WRITERS {
                let (t, keys, done) = (&t, &keys, &done);
                s.spawn(move || {
                    for round in 0..ROUNDS {
                        let j = (round * (w + 3)) % keys.len() as u64;
                        let (score, depth, eval) = entry_of(j, w);
                        let bound = [Bound::Exact, Bound::Lower, Bound::Upper][w as usize % 3];
                        t.store(keys[j as usize], None, score, depth, bound, eval);
                    }
                    done.fetch_add(1, Ordering::Release);
                });
            }
            let reader = s.spawn(|| {
                let (mut seen, mut torn) = (0u64, Vec::new());
                loop {
                    // Read before the pass: a pass that began with every writer done is the last.
                    let finished = done.load(Ordering::Acquire) == WRITERS;
                    for j in 0..keys.len() as u64 {
                        if let Some(e) = t.probe(keys[j as usize]) {
                            seen += 1;
                            let w = e.depth as u64;
                            let whole = w < WRITERS && {
                                let (score, depth, eval) = entry_of(j, w);
                                let bound =
                                    [Bound::Exact, Bound::Lower, Bound::Upper][w as usize % 3];
                                (e.score, e.depth, e.eval, e.bound, e.mv)
                                    == (score, depth, eval, bound, None)
                            };
                            if !whole {
                                torn.push(format!("{j}: {e:?}"));
                            }
                        }
                    }
                    if finished {
                        break;
                    }
                }
                (seen, torn)
            });
            reader.join().expect("reader")
        });
        assert!(
            torn.is_empty(),
            "{} torn entries read: {:?}",
            torn.len(),
            &torn[..torn.len().min(5)]
        );
        assert!(seen > 0, "nothing read");
    }
}
