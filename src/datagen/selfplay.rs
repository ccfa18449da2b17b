//! One self-play game of the data generator: random opening plies, then our own search at a
//! fixed node budget on both sides until the game ends or is adjudicated; the positions worth
//! learning from become records once the result is known.
//!
//! Node-limited, single-threaded searches from a cleared searcher are deterministic, and the
//! random plies come from a generator seeded by (seed, game number): a game is a pure function
//! of those, whichever thread plays it.

use std::sync::atomic::AtomicBool;

use atomic_chess::{Color, Game, Move, Position};

use super::record::{self, GameResult, RECORD_BYTES};
use crate::search::eval::lone_unit_draw;
use crate::search::{Limits, Score, Searcher, mix64};

/// How games are played and which positions are kept.
#[derive(Clone, Copy, Debug)]
pub struct PlayRules {
    /// Nodes per move.
    pub nodes: u64,
    /// Random plies before the engine plays: this many, or one more (so that either side may
    /// be the first to move from the randomised position).
    pub random_plies: u32,
    /// A game still running after this many plies is a draw.
    pub max_plies: usize,
    /// Adjudicate a win once both sides' scores agree beyond this many centipawns…
    pub win_cp: i32,
    /// …for this many plies in a row.
    pub win_plies: u32,
    /// Adjudicate a draw after ply `draw_from` once the score stays within `draw_cp` for
    /// `draw_plies` plies in a row.
    pub draw_from: usize,
    /// See `draw_from`.
    pub draw_cp: i32,
    /// See `draw_from`.
    pub draw_plies: u32,
}

impl Default for PlayRules {
    fn default() -> Self {
        PlayRules {
            nodes: 5_000,
            random_plies: 8,
            max_plies: 400,
            win_cp: 2_500,
            win_plies: 4,
            draw_from: 120,
            draw_cp: 15,
            draw_plies: 12,
        }
    }
}

/// What one game produced.
#[derive(Debug, Default)]
pub struct Played {
    /// The kept positions as records, in game order.
    pub records: Vec<[u8; RECORD_BYTES]>,
    /// Plies the engine searched (kept or not).
    pub searched: u64,
    /// White's result: 1 win, 0 draw, -1 loss.
    pub white: i8,
}

/// A position kept while the game is still running (its result is not known yet).
struct Pending {
    pos: Position,
    score: i32,
    best: Move,
}

/// Plays game number `index` of the run seeded by `seed`.
pub fn play(searcher: &mut Searcher, rules: &PlayRules, seed: u64, index: u64) -> Played {
    let mut rng = mix64(seed ^ mix64(index.wrapping_add(1)));
    let mut game = random_opening(&mut rng, rules.random_plies);
    searcher.clear();
    let stop = AtomicBool::new(false);
    let limits = Limits {
        nodes: Some(rules.nodes),
        ..Limits::default()
    };
    let mut pending = Vec::new();
    let mut searched = 0;
    let mut winning_streak = 0u32;
    let mut quiet_streak = 0u32;
    let white = loop {
        if let Some(outcome) = game.outcome() {
            break match outcome.winner {
                Some(Color::White) => 1,
                Some(Color::Black) => -1,
                None => 0,
            };
        }
        let pos = *game.position();
        if game.moves().len() >= rules.max_plies || lone_unit_draw(&pos) {
            break 0;
        }
        let result = searcher.search(&game, &limits, &stop, &mut |_| {});
        searched += 1;
        let Some(best) = result.best_move else {
            break 0;
        };
        let white_cp = |cp: i32| if pos.turn() == Color::White { cp } else { -cp };
        match result.info.score {
            Score::Mate(n) => {
                // A proven win ends the game for training purposes: the rest is technique the
                // search finds anyway, and these positions are "decided", not learnt from.
                let mover_wins = n > 0;
                break if mover_wins == (pos.turn() == Color::White) {
                    1
                } else {
                    -1
                };
            }
            Score::Cp(cp) => {
                if !pos.is_check() && !best.is_capture() {
                    pending.push(Pending {
                        pos,
                        score: cp,
                        best,
                    });
                }
                winning_streak = if cp.abs() >= rules.win_cp {
                    winning_streak + 1
                } else {
                    0
                };
                if winning_streak >= rules.win_plies {
                    break white_cp(cp).signum() as i8;
                }
                quiet_streak = if game.moves().len() >= rules.draw_from && cp.abs() <= rules.draw_cp
                {
                    quiet_streak + 1
                } else {
                    0
                };
                if quiet_streak >= rules.draw_plies {
                    break 0;
                }
            }
        }
        if game.play(best).is_err() {
            break 0;
        }
    };
    let records = pending
        .iter()
        .map(|p| {
            let ours = if p.pos.turn() == Color::White {
                white
            } else {
                -white
            };
            let result = match ours {
                1 => GameResult::Win,
                -1 => GameResult::Loss,
                _ => GameResult::Draw,
            };
            record::encode(&p.pos, p.score, result, p.best)
        })
        .collect();
    Played {
        records,
        searched,
        white,
    }
}

/// A game after `plies` (or `plies + 1`) uniformly random legal moves from the start position,
/// retried until the position is still playable (random atomic moves often lose a king early).
fn random_opening(rng: &mut u64, plies: u32) -> Game {
    loop {
        let count = plies + u32::from(next(rng) & 1 == 1);
        let mut game = Game::new(Position::startpos());
        let mut alive = true;
        for _ in 0..count {
            let moves = game.position().legal_moves();
            if moves.is_empty() || game.outcome().is_some() {
                alive = false;
                break;
            }
            let m = moves[(next(rng) % moves.len() as u64) as usize];
            if game.play(m).is_err() {
                alive = false;
                break;
            }
        }
        if alive && game.outcome().is_none() && game.position().has_legal_moves() {
            return game;
        }
    }
}

fn next(rng: &mut u64) -> u64 {
    *rng = rng.wrapping_add(crate::search::GOLDEN_GAMMA);
    mix64(*rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::record::decode;
    use crate::search::SearchConfig;

    fn searcher() -> Searcher {
        Searcher::new(SearchConfig {
            hash_mb: 4,
            ..SearchConfig::default()
        })
    }

    #[test]
    fn a_game_is_a_function_of_seed_and_number_and_keeps_only_quiet_undecided_positions() {
        let rules = PlayRules {
            nodes: 300,
            max_plies: 60,
            ..PlayRules::default()
        };
        let a = play(&mut searcher(), &rules, 7, 3);
        let b = play(&mut searcher(), &rules, 7, 3);
        let c = play(&mut searcher(), &rules, 7, 4);
        assert_eq!(a.records, b.records, "same seed and number, same game");
        assert_ne!(a.records, c.records, "another number, another game");
        assert!(!a.records.is_empty());
        assert!(a.searched >= a.records.len() as u64);
        for bytes in &a.records {
            let sample = decode(bytes).expect("decodes");
            let pos = Position::from_fen(&sample.to_fen()).expect("a real position");
            assert!(!pos.is_check(), "positions in check are skipped");
            let best = pos
                .parse_uci(&sample.best_uci())
                .expect("the best move is legal");
            assert!(
                !best.is_capture(),
                "positions whose best move captures are skipped"
            );
            let result = sample.result as i8 - 1;
            let mover = if pos.turn() == Color::White { 1 } else { -1 };
            assert_eq!(result, a.white * mover, "the result is the side to move's");
        }
    }

    #[test]
    fn random_openings_leave_a_playable_position_of_either_side_to_move() {
        let mut rng = 11;
        let mut turns = [0; 2];
        for _ in 0..40 {
            let game = random_opening(&mut rng, 8);
            assert!(game.outcome().is_none());
            assert!((8..=9).contains(&game.moves().len()));
            turns[game.position().turn().index()] += 1;
        }
        assert!(turns[0] > 0 && turns[1] > 0, "{turns:?}");
    }
}
