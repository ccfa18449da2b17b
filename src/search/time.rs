//! The time manager: a pure function from the clock to a soft and a hard limit.
//!
//! Atomic games are short (30–85 plies in Fairy-Stockfish self-play, about 50 in our matches
//! against it) and sudden death is the rule on lichess, so the budget is a fixed fraction of
//! what is left plus most of the increment: `soft = planned / 34 + 0.9 · increment`, where
//! `planned` keeps the overhead of 30 future moves in reserve. Geometric use (each move takes a
//! fixed share of what is left) can never flag on its own. The horizon of 34 moves is the
//! shortest that still survives the whole-game simulations below (120 moves of 1+0 with 50 ms of
//! latency each and every fourth move at its hard limit); the first version's 40 ended games with
//! most of the clock unused (145 ms a move at 10+0.1, against Fairy-Stockfish's 330 ms).
//! When the increment is at least twice the overhead it pays for each move's latency, and the
//! plan is spread over 16 moves instead (the simulations include 10+0.1 and 3+0.1). With 24,
//! games at 10+0.1 against Fairy-Stockfish ended with 4.5 s of the 10 s unused on average, and
//! it spent 0.40 s a move in the first ten moves against its opponent's 0.53 s.
//! The search may stop at `soft` when its best move is stable, extends up to `hard` (twice
//! `soft`, the default `TimeExtension`) when it is not, and never goes past `hard`. `hard` is at
//! most a fifth of the planned time plus most of the increment, and never more than 80 % of
//! what is left after the move overhead, so a run of worst-case moves still leaves time on the
//! clock.
//!
//! The overhead (network and process latency, the UCI `Move Overhead` option) is taken off the
//! clock before anything else: the engine cannot see it, but the opponent's clock counts it.

use std::time::Duration;

/// What the clock says when a move is asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClockInput {
    /// Our remaining time (UCI `wtime` or `btime`).
    pub remaining: Duration,
    /// Our increment per move (UCI `winc` or `binc`).
    pub increment: Duration,
    /// Moves until the next time control (UCI `movestogo`), `None` for sudden death.
    pub moves_to_go: Option<u32>,
    /// Game ply of the position to move in (0 = white's first move).
    pub ply: u32,
    /// Time lost per move outside the engine (network, GUI, process start).
    pub move_overhead: Duration,
    /// The longest this move may take whatever the clock says, from outside the clock: the
    /// first-move deadline of a server that aborts games whose first move never comes, or a
    /// game without a clock (unlimited, correspondence), where the clock would allow hours.
    /// `hard` never exceeds it and `soft` never exceeds half of it.
    pub cap: Option<Duration>,
}

/// The two limits a search gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeLimits {
    /// The search may stop here if the best move is stable.
    pub soft: Duration,
    /// The search never goes past this.
    pub hard: Duration,
}

/// Sudden-death horizon: the number of our own moves the planned time is spread over.
/// Geometric use (each move takes 1/34 of what is left) can never flag on its own.
const HORIZON: f64 = 34.0;
/// Horizon when the increment pays for the latency of each move (at least twice the move
/// overhead): the clock then no longer drains by the overhead alone, so the plan can be
/// spread over fewer moves. 16 against 24: +63 Elo against Fairy-Stockfish nodes=64000 at
/// 10+0.1 (50.5 % against 41.5 %, 100 games each, side by side; docs/JOURNAL.md, session 4).
const HORIZON_WITH_INCREMENT: f64 = 16.0;
/// Share of the increment spent on each move (the rest rebuilds the clock).
const INCREMENT_SHARE: f64 = 0.9;
/// `hard` is at most this multiple of `soft` (room for extensions when the best move changes).
const HARD_OVER_SOFT: f64 = 2.0;
/// Share of the planned time one move may use at most, before the increment.
const MAX_SHARE: f64 = 0.2;
/// Absolute ceiling as a share of the available time, whatever the increment.
const CEILING: f64 = 0.8;
/// The latency of this many future moves is kept out of the plan: every move costs the
/// overhead whatever we think, so a long game must not find the clock already spent.
const RESERVED_OVERHEADS: f64 = 30.0;
/// Below this much planned time (ms), switch to the emergency budget.
const EMERGENCY_MS: f64 = 300.0;

/// Lichess aborts a game whose first move takes 30 s: never think longer than this on move one.
const FIRST_MOVE_CAP: Duration = Duration::from_secs(10);

/// Soft and hard limits for one move. Pure: the same input always gives the same output.
///
/// Guarantees (unit-tested): `soft <= hard`, and `hard <= 0.8 · (remaining − overhead)`, so the
/// engine never plans past its remaining time minus the overhead.
pub fn allocate(input: &ClockInput) -> TimeLimits {
    let available = input
        .remaining
        .saturating_sub(input.move_overhead)
        .as_secs_f64()
        * 1000.0;
    let increment = input.increment.as_secs_f64() * 1000.0;
    let overhead = input.move_overhead.as_secs_f64() * 1000.0;
    let ceiling = available * CEILING;
    let planned = (available - RESERVED_OVERHEADS * overhead).max(0.0);

    let (soft, hard) = if planned < EMERGENCY_MS {
        // Near zero: a tiny share of the plan keeps us moving (the reused tree and the
        // solver still make these moves sensible; with nothing planned the search gets its
        // minimum), and most of the increment is still used. The reserve of round trips is
        // never thought into: it exists to pay the lag of a long ending. The first version
        // thought 1/60 of all that was left, reserve included, and flagged two ½+0 games of
        // 200 in the arena's bullet soak (100 ms of lag a move, 126 and 131 moves); a 20-move
        // reserve still flagged one at move 150. Now the simulations survive 176 moves there
        // (112 before), and 1+0 with 20 ms of lag 710 (244).
        (
            planned / 60.0 + 0.5 * increment,
            planned / 25.0 + 0.6 * increment,
        )
    } else {
        let sudden_death = if increment >= 2.0 * overhead && increment > 0.0 {
            HORIZON_WITH_INCREMENT
        } else {
            HORIZON
        };
        let horizon = match input.moves_to_go {
            // One more than the moves left, so the last move before the control keeps a reserve.
            Some(moves) => (f64::from(moves.max(1)) + 1.0).min(sudden_death),
            None => sudden_death,
        };
        let soft = planned / horizon + INCREMENT_SHARE * increment;
        let hard = (soft * HARD_OVER_SOFT).min(planned * MAX_SHARE + 0.9 * increment);
        (soft, hard)
    };
    let mut hard = hard.min(ceiling).max(0.0);
    let mut soft = soft.min(hard).max(0.0);
    if input.ply <= 1 {
        hard = hard.min(FIRST_MOVE_CAP.as_secs_f64() * 1000.0);
        soft = soft.min(hard / 2.0);
    }
    if let Some(cap) = input.cap {
        let cap = cap.as_secs_f64() * 1000.0;
        hard = hard.min(cap);
        soft = soft.min(cap / 2.0);
    }
    TimeLimits {
        soft: millis(soft),
        hard: millis(hard),
    }
}

/// Plays a whole game of `moves` moves against a clock of `initial` + `increment`, asking
/// `plan(remaining, ply)` for each move's limits; every fourth move uses its full `hard`
/// limit and the others their `soft` one, and each also costs `lag` (what the engine cannot
/// see and the clock still counts: the network and the GUI, or the whole round trip of a
/// lichess bot, which gets no lag compensation). Returns the lowest clock left after a move,
/// or `None` if the clock ran out. Both fronts' time tests run their planners through it.
pub fn simulate(
    initial: Duration,
    increment: Duration,
    lag: Duration,
    moves: u32,
    mut plan: impl FnMut(Duration, u32) -> TimeLimits,
) -> Option<Duration> {
    let mut remaining = initial;
    let mut lowest = initial;
    for mv in 0..moves {
        let limits = plan(remaining, 2 * mv);
        let used = if mv % 4 == 0 {
            limits.hard
        } else {
            limits.soft
        };
        remaining = remaining.checked_sub(used + lag).filter(|r| !r.is_zero())?;
        lowest = lowest.min(remaining);
        remaining += increment;
    }
    Some(lowest)
}

fn millis(ms: f64) -> Duration {
    Duration::from_micros((ms * 1000.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn clock(remaining: u64, increment: u64, ply: u32, overhead: u64) -> ClockInput {
        ClockInput {
            remaining: ms(remaining),
            increment: ms(increment),
            moves_to_go: None,
            ply,
            move_overhead: ms(overhead),
            cap: None,
        }
    }

    #[test]
    fn soft_never_exceeds_hard_and_hard_never_exceeds_clock() {
        for remaining in [
            0, 1, 10, 50, 99, 100, 150, 300, 500, 1000, 3000, 30_000, 60_000, 600_000,
        ] {
            for increment in [0, 10, 100, 1000, 5000] {
                for overhead in [0, 10, 50, 100, 300] {
                    for moves_to_go in [None, Some(1), Some(2), Some(10), Some(40)] {
                        for ply in [0, 1, 2, 40, 200] {
                            let input = ClockInput {
                                moves_to_go,
                                ..clock(remaining, increment, ply, overhead)
                            };
                            let limits = allocate(&input);
                            let available = ms(remaining).saturating_sub(ms(overhead));
                            assert!(limits.soft <= limits.hard, "{input:?} -> {limits:?}");
                            assert!(limits.hard <= available, "{input:?} -> {limits:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn zero_clock_gives_zero_budget() {
        let limits = allocate(&clock(0, 0, 30, 100));
        assert_eq!(
            limits,
            TimeLimits {
                soft: Duration::ZERO,
                hard: Duration::ZERO
            }
        );
        let limits = allocate(&clock(80, 0, 30, 100));
        assert_eq!(limits.hard, Duration::ZERO);
    }

    #[test]
    fn one_minute_opening_budget_is_about_a_thirty_fourth() {
        let limits = allocate(&clock(60_000, 0, 10, 50));
        assert!(
            limits.soft >= ms(1600) && limits.soft <= ms(1800),
            "{limits:?}"
        );
        assert!(
            limits.hard >= ms(3200) && limits.hard <= ms(12_000),
            "{limits:?}"
        );
    }

    #[test]
    fn increment_adds_time() {
        let without = allocate(&clock(10_000, 0, 20, 50));
        let with = allocate(&clock(10_000, 1000, 20, 50));
        assert!(with.soft > without.soft + ms(500));
        assert!(with.hard > without.hard);
    }

    #[test]
    fn moves_to_go_spreads_over_the_remaining_moves() {
        let one = allocate(&ClockInput {
            moves_to_go: Some(1),
            ..clock(10_000, 0, 60, 50)
        });
        let forty = allocate(&ClockInput {
            moves_to_go: Some(40),
            ..clock(10_000, 0, 60, 50)
        });
        assert!(one.soft > forty.soft * 5, "{one:?} vs {forty:?}");
        assert!(one.hard <= ms(8000));
    }

    #[test]
    fn first_move_is_capped_for_lichess() {
        let limits = allocate(&clock(3_600_000, 30_000, 0, 100));
        assert!(limits.hard <= FIRST_MOVE_CAP);
        assert!(limits.soft <= FIRST_MOVE_CAP / 2);
        let later = allocate(&clock(3_600_000, 30_000, 20, 100));
        assert!(later.hard > FIRST_MOVE_CAP);
    }

    #[test]
    fn emergency_mode_near_zero() {
        let limits = allocate(&clock(1000, 0, 80, 30));
        assert!(limits.hard <= ms(40), "{limits:?}");
        assert!(limits.soft <= ms(20), "{limits:?}");
    }

    /// A whole game through [`simulate`] with `allocate` as the planner.
    fn survives(initial: u64, increment: u64, overhead: u64, latency: u64, moves: u32) -> bool {
        simulate(
            ms(initial),
            ms(increment),
            ms(latency),
            moves,
            |remaining, ply| {
                allocate(&ClockInput {
                    remaining,
                    ..clock(0, increment, ply, overhead)
                })
            },
        )
        .is_some()
    }

    #[test]
    fn the_simulation_flags_a_planner_that_overspends() {
        // Half of what is left every move runs out at once with any lag.
        let greedy = |remaining: Duration, _| TimeLimits {
            soft: remaining / 2,
            hard: remaining,
        };
        assert_eq!(simulate(ms(60_000), ms(0), ms(50), 10, greedy), None);
        let fixed = |_, _| TimeLimits {
            soft: ms(100),
            hard: ms(200),
        };
        // 3 moves: 200 + 100 + 100 ms and 3 × 50 ms of lag from 1000 ms.
        assert_eq!(simulate(ms(1000), ms(0), ms(50), 3, fixed), Some(ms(450)));
    }

    #[test]
    fn holds_at_one_minute_sudden_death() {
        assert!(survives(60_000, 0, 50, 50, 120));
        assert!(survives(60_000, 0, 100, 90, 100));
        assert!(survives(60_000, 0, 100, 50, 130));
    }

    #[test]
    fn holds_at_half_minute_sudden_death() {
        assert!(survives(30_000, 0, 50, 50, 100));
        assert!(survives(30_000, 0, 100, 90, 80));
        assert!(survives(30_000, 0, 100, 50, 110));
    }

    #[test]
    fn holds_at_zero_plus_one() {
        // Lichess starts a 0+1 game with the increment on the clock.
        assert!(survives(1000, 1000, 50, 50, 200));
        assert!(survives(1000, 1000, 100, 90, 200));
        assert!(survives(3000, 1000, 300, 250, 200));
        assert!(survives(500, 1000, 100, 90, 300));
    }

    #[test]
    fn holds_with_small_increments() {
        assert!(survives(10_000, 100, 50, 50, 150));
        assert!(survives(10_000, 100, 50, 45, 300));
        assert!(survives(3000, 100, 50, 50, 200));
        assert!(survives(60_000, 200, 100, 90, 200));
        assert!(survives(180_000, 2000, 300, 250, 200));
    }

    #[test]
    fn zero_plus_one_uses_most_of_the_increment() {
        let limits = allocate(&clock(1500, 1000, 40, 50));
        assert!(limits.soft >= ms(500), "{limits:?}");
    }

    #[test]
    fn deterministic() {
        let input = clock(12_345, 678, 33, 90);
        assert_eq!(allocate(&input), allocate(&input));
    }
}
