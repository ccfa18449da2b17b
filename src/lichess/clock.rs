//! The lichess side of the clock: how a game's state becomes the time manager's input.
//!
//! There is one time manager, [`crate::search::time::allocate`], the one every engine
//! measurement (its whole-game simulations, the matches against Fairy-Stockfish) used through
//! `atomic-bot uci`. This module only maps what lichess says to its [`ClockInput`] and adds
//! what only a bot has:
//! - the move overhead is the whole round trip (lichess gives bots no lag compensation:
//!   push, think and POST are all charged to our clock), so it is `game.move_overhead_ms`, the
//!   same `Move Overhead` as over UCI;
//! - our first move has a deadline outside the clock (lichess aborts a game whose first move
//!   never comes, 20-35 s by speed): its think is capped at `game.first_move_think_ms`, and
//!   at half of what `gameState.expiration` says is left of that deadline when lichess sends it;
//! - a game without a clock (unlimited, correspondence: lichess reports days, or
//!   `2147483647` ms) would let the plan run for hours: one move is capped at
//!   [`UNCLOCKED_CAP`] (the correspondence games the supervisor recognizes think
//!   `correspondence.move_time_s` instead: [`crate::lichess::correspondence::move_budget`]);
//! - the search threads are shared among the games running at once
//!   ([`crate::lichess::game::threads`]).
//!
//! The search may stop at `soft` and never passes `hard` (see `allocate`).

use std::time::Duration;

use crate::config::GameSettings;
use crate::lichess::game::threads::{SearchKind, search_threads};
use crate::lichess::picker::Budget;
use crate::search::time::{ClockInput, allocate};

/// The longest one move may take in a game without a clock.
pub const UNCLOCKED_CAP: Duration = Duration::from_secs(60);

/// What a `gameState` says about our clock when it is our turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TurnClock {
    /// Our remaining time (`wtime`/`btime`, ms; negative values read as zero).
    pub remaining_ms: i64,
    /// Our increment (`winc`/`binc`, ms).
    pub increment_ms: i64,
    /// Plies played so far in this game (0: the first move of the game).
    pub ply: u32,
    /// This is our first move of the game (lichess aborts the game if it never comes).
    pub first_move: bool,
    /// Time left before lichess's first-move deadline (`expiration`: `millisToMove` minus
    /// `idleMillis`), when lichess sent it.
    pub first_move_left: Option<Duration>,
    /// The game has a real-time clock (no clock: unlimited or correspondence).
    pub clocked: bool,
}

/// The budget of one move: `allocate` on lichess's clock, with the caps above and this game's
/// share of the search threads.
pub fn budget(
    g: &GameSettings,
    clock: &TurnClock,
    running_games: usize,
    total_threads: usize,
) -> Budget {
    let limits = allocate(&input(g, clock));
    let threads = search_threads(total_threads, running_games, SearchKind::Think);
    Budget {
        soft: limits.soft,
        hard: limits.hard,
        threads,
    }
}

/// The time manager's input for this turn.
pub fn input(g: &GameSettings, clock: &TurnClock) -> ClockInput {
    let overhead = Duration::from_millis(g.move_overhead_ms);
    let mut cap = (!clock.clocked).then_some(UNCLOCKED_CAP);
    if clock.first_move {
        let mut first = Duration::from_millis(g.first_move_think_ms);
        if let Some(left) = clock.first_move_left {
            first = first.min(left.saturating_sub(overhead) / 2);
        }
        cap = Some(cap.map_or(first, |c| c.min(first)));
    }
    ClockInput {
        remaining: Duration::from_millis(u64::try_from(clock.remaining_ms).unwrap_or(0)),
        increment: Duration::from_millis(u64::try_from(clock.increment_ms).unwrap_or(0)),
        moves_to_go: None,
        ply: clock.ply,
        move_overhead: overhead,
        cap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::time::{TimeLimits, simulate};

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn turn(remaining_ms: i64, increment_ms: i64, ply: u32) -> TurnClock {
        TurnClock {
            remaining_ms,
            increment_ms,
            ply,
            first_move: ply < 2,
            first_move_left: None,
            clocked: true,
        }
    }

    /// One formula: past the first move, a clocked game gets exactly what `atomic-bot uci`
    /// would plan with the same clock and `Move Overhead`.
    #[test]
    fn a_clocked_move_is_planned_exactly_as_over_uci() {
        let g = GameSettings::default();
        for remaining in [0, 500, 1_000, 15_000, 30_000, 60_000, 180_000, 900_000] {
            for inc in [0, 1_000, 2_000, 10_000] {
                for ply in [2, 3, 40, 121] {
                    let b = budget(&g, &turn(remaining, inc, ply), 1, 1);
                    let uci = allocate(&ClockInput {
                        remaining: ms(remaining as u64),
                        increment: ms(inc as u64),
                        moves_to_go: None,
                        ply,
                        move_overhead: ms(g.move_overhead_ms),
                        cap: None,
                    });
                    assert_eq!((b.soft, b.hard), (uci.soft, uci.hard), "{remaining}+{inc}");
                }
            }
        }
    }

    #[test]
    fn the_first_move_stays_inside_lichess_abort_deadline() {
        let g = GameSettings::default();
        let b = budget(&g, &turn(3_600_000, 30_000, 0), 1, 1);
        assert!(b.hard <= ms(g.first_move_think_ms), "{b:?}");
        assert!(b.soft <= ms(g.first_move_think_ms / 2), "{b:?}");
        // Lichess says 1.5 s are left of the deadline (we reconnected late): think far less.
        let late = TurnClock {
            first_move_left: Some(ms(1_500)),
            ..turn(3_600_000, 30_000, 1)
        };
        let b = budget(&g, &late, 1, 1);
        assert!(b.hard <= ms(550), "{b:?}");
        // Past the deadline: move at once.
        let gone = TurnClock {
            first_move_left: Some(ms(100)),
            ..late
        };
        assert_eq!(budget(&g, &gone, 1, 1).hard, Duration::ZERO);
    }

    #[test]
    fn games_without_a_clock_do_not_think_for_hours() {
        let g = GameSettings::default();
        for remaining in [2_147_483_647, 3 * 86_400_000, 86_400_000] {
            let b = budget(
                &g,
                &TurnClock {
                    clocked: false,
                    ..turn(remaining, 0, 30)
                },
                1,
                1,
            );
            assert_eq!(b.hard, UNCLOCKED_CAP, "{remaining}");
            assert_eq!(b.soft, UNCLOCKED_CAP / 2, "{remaining}");
        }
    }

    #[test]
    fn bad_clock_values_give_a_zero_budget() {
        let g = GameSettings::default();
        assert_eq!(budget(&g, &turn(-5_000, -1, 30), 1, 1).hard, Duration::ZERO);
        assert_eq!(budget(&g, &turn(0, 0, 30), 1, 1).hard, Duration::ZERO);
    }

    #[test]
    fn threads_are_shared_among_the_running_games() {
        let g = GameSettings::default();
        assert_eq!(budget(&g, &turn(60_000, 0, 10), 2, 4).threads, 2);
        assert_eq!(budget(&g, &turn(60_000, 0, 10), 8, 2).threads, 1);
        assert_eq!(budget(&g, &turn(60_000, 0, 10), 0, 3).threads, 3);
    }

    /// Whole games through the bot's planner at the lichess time controls bots play, with the
    /// default overhead and the round trip lichess charges a bot. Atomic games last about 25
    /// moves a side (50 plies against Fairy-Stockfish), but bullet endings can run past 150
    /// moves (the arena's ½+0 soak against a fast Fairy-Stockfish had several past 120). At ½+0 a 300 ms round trip alone spends
    /// the clock in 100 moves, so there the games are shorter.
    #[test]
    fn whole_games_at_lichess_time_controls_never_flag() {
        let g = GameSettings::default();
        // (initial ms, increment ms, round trip ms, moves)
        let games: [(u64, u64, u64, u32); 14] = [
            (30_000, 0, 20, 400),
            (30_000, 0, 100, 170),
            (30_000, 0, 300, 60),
            (60_000, 0, 20, 400),
            (60_000, 0, 100, 195),
            (60_000, 0, 300, 85),
            (0, 1_000, 20, 300),
            (0, 1_000, 300, 300),
            (180_000, 2_000, 20, 300),
            (180_000, 2_000, 300, 300),
            (180_000, 0, 300, 115),
            (900_000, 10_000, 100, 300),
            (900_000, 10_000, 300, 300),
            (600_000, 100, 100, 300),
        ];
        for (initial, inc, lag, moves) in games {
            // Lichess starts a 0+1 game with the increment on the clock.
            let start = ms(initial.max(inc));
            let left = simulate(start, ms(inc), ms(lag), moves, |remaining, ply| {
                let clock = turn(remaining.as_millis() as i64, inc as i64, ply);
                let b = budget(&g, &clock, 1, 1);
                TimeLimits {
                    soft: b.soft,
                    hard: b.hard,
                }
            });
            assert!(
                left.is_some(),
                "{initial}+{inc}, {lag} ms a move, {moves} moves: flagged"
            );
        }
    }

    /// Correspondence: the clock allows days, every move is capped, nothing flags.
    #[test]
    fn correspondence_games_never_flag() {
        let g = GameSettings::default();
        let day = ms(86_400_000);
        let left = simulate(day, Duration::ZERO, ms(300), 100, |remaining, ply| {
            let b = budget(
                &g,
                &TurnClock {
                    clocked: false,
                    ..turn(remaining.as_millis() as i64, 0, ply)
                },
                1,
                1,
            );
            TimeLimits {
                soft: b.soft,
                hard: b.hard,
            }
        });
        assert!(left.is_some_and(|l| l > day / 2), "{left:?}");
    }
}
