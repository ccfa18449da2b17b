//! How the bot's search threads (`search.threads`, by default every core the process may use)
//! are shared among the games running at once.
//!
//! The rule: each running game owns an equal share, `total / games`, whatever its search is
//! doing. A game has at most one search at a time (a think on its own clock, or a ponder on the
//! opponent's), so:
//! - a game alone gets every thread, both to think and to ponder;
//! - N games get `total / N` each; a thinking game always gets at least one thread, since a
//!   move must be played even when there are more games than cores;
//! - a ponder gets its game's share and nothing more, and no ponder at all when that share is
//!   zero (more games than threads). So ponders count as running searches: the threads of all
//!   searches together never exceed the total unless thinking games alone do, and a ponder
//!   never takes a core that a thinking game needs, whatever the thread priorities.
//!
//! Why equal shares rather than "thinks first, ponders get what is left": a search's thread
//! count is fixed when it starts, and the games' turns interleave unpredictably, so a ponder
//! sized by the thinks running at that moment would be too big as soon as another game's turn
//! came. A static share needs no coordination between the game tasks; the only moment it is
//! wrong is when the number of games changes, and then a ponder, which may run for minutes, is
//! restarted with its new share (see `Task::recheck_ponder`), while a think, bounded by its move
//! time, finishes with the share it started with.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One place in the count of games sharing the threads (`GameContext::running`), held while
/// alive: a real-time game's task holds one for the whole game, a correspondence game only
/// while its search runs (an idle correspondence game, waiting days for a move, takes no
/// share). Released on drop, so a panicking or aborted task gives its place back.
#[derive(Debug)]
pub struct SearchSlot(Arc<AtomicUsize>);

impl SearchSlot {
    /// Takes a place in `running`.
    pub fn take(running: &Arc<AtomicUsize>) -> Self {
        running.fetch_add(1, Ordering::Relaxed);
        Self(running.clone())
    }
}

impl Drop for SearchSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a game's search is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchKind {
    /// Our move, on our clock.
    Think,
    /// The opponent's move, on their clock (stopped when our turn comes).
    Ponder,
}

/// Threads for one search of one of `running_games` games out of `total` threads; 0 means "do
/// not ponder" (a think gets at least 1). `running_games` 0 reads as 1 (the counter may lag
/// behind a game that is starting).
pub fn search_threads(total: usize, running_games: usize, kind: SearchKind) -> usize {
    let share = total / running_games.max(1);
    match kind {
        SearchKind::Think => share.max(1),
        SearchKind::Ponder => share,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SearchKind::{Ponder, Think};

    #[test]
    fn a_slot_is_held_until_dropped() {
        let running = Arc::new(AtomicUsize::new(0));
        let a = SearchSlot::take(&running);
        let b = SearchSlot::take(&running);
        assert_eq!(running.load(Ordering::Relaxed), 2);
        drop(a);
        assert_eq!(running.load(Ordering::Relaxed), 1);
        drop(b);
        assert_eq!(running.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_game_alone_gets_every_thread() {
        for total in 1..=64 {
            assert_eq!(search_threads(total, 1, Think), total);
            assert_eq!(search_threads(total, 1, Ponder), total);
            assert_eq!(search_threads(total, 0, Think), total);
        }
    }

    #[test]
    fn games_share_and_each_think_gets_at_least_one() {
        assert_eq!(search_threads(8, 2, Think), 4);
        assert_eq!(search_threads(8, 3, Think), 2);
        assert_eq!(search_threads(2, 2, Think), 1);
        assert_eq!(search_threads(2, 5, Think), 1);
        assert_eq!(search_threads(1, 8, Think), 1);
    }

    #[test]
    fn no_ponder_without_a_thread_of_its_own() {
        assert_eq!(search_threads(2, 2, Ponder), 1);
        assert_eq!(search_threads(2, 3, Ponder), 0);
        assert_eq!(search_threads(1, 2, Ponder), 0);
    }

    /// Every mix of thinking, pondering and idle games: the ponders never push the threads in
    /// use above the total, and never above what the thinking games alone use when those are
    /// already over it.
    #[test]
    fn ponders_never_take_a_thinking_games_threads() {
        for total in 1..=17 {
            for games in 1..=6usize {
                // Each game idle (0), thinking (1) or pondering (2): 3^games mixes.
                for mix in 0..3usize.pow(games as u32) {
                    let (mut thinks, mut ponders, mut m) = (0, 0, mix);
                    for _ in 0..games {
                        match m % 3 {
                            1 => thinks += search_threads(total, games, Think),
                            2 => ponders += search_threads(total, games, Ponder),
                            _ => {}
                        }
                        m /= 3;
                    }
                    assert!(
                        thinks + ponders <= total.max(thinks),
                        "total {total}, {games} games, mix {mix}: {thinks} + {ponders}"
                    );
                    if thinks > total {
                        assert_eq!(ponders, 0, "total {total}, {games} games");
                    }
                }
            }
        }
    }
}
