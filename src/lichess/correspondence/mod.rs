//! Correspondence games, played without holding a game stream open for days.
//!
//! lichess-bot's rhythm, which lichess's rate limits are built around: the bot asks
//! `/api/account/playing?nb=50` every `correspondence.checkin_period_s` which games wait for our
//! move (`isMyTurn`), opens the stream of each (a game task, `lichess::game`), thinks
//! `correspondence.move_time_s` (never more than a tenth of the time left to move), and the task
//! closes the stream and ends as *parked* once `correspondence.disconnect_time_s` passed after
//! our move without the opponent answering. The supervisor keeps parked games without a task;
//! the next check-in that finds one with our turn starts its task again, and a `gameFinish` (or
//! its disappearance from the check-in's list) starts it once more to read the final state and
//! keep the PGN.
//!
//! Such games do not count against `challenge.max_games` (a slot would be held for days), and
//! take a share of the search threads only while their search runs.
//!
//! This module holds the rules that need no network: which games are correspondence games, the
//! think budget, and what a check-in answer asks the supervisor to do ([`plan`]).

use std::collections::HashSet;
use std::time::Duration;

use crate::config::CorrespondenceSettings;
use crate::lichess::model::{GameEventInfo, Playing};
use crate::lichess::picker::Budget;

/// The status of the report of a game task that closed its stream while the game goes on.
pub const PARKED: &str = "parked";

/// lichess's `speed` of correspondence games.
pub const SPEED: &str = "correspondence";

/// `/api/account/playing` lists at most this many games (the `nb` the client asks for).
pub const PLAYING_LIMIT: usize = 50;

/// The clock value lichess sends for a game without a time limit (unlimited games).
const NO_LIMIT_MS: i64 = i32::MAX as i64;

/// Whether a game of this `speed` is a correspondence game.
pub fn is_correspondence(speed: &str) -> bool {
    speed == SPEED
}

/// Whether a game event (`gameStart`, an entry of `/api/account/playing`) is a correspondence
/// game.
pub fn is_correspondence_game(game: &GameEventInfo) -> bool {
    is_correspondence(&game.speed)
}

/// The think budget of one correspondence move: `move_time_s`, but never more than a tenth of
/// `remaining_ms`, the time left to move (lichess's `wtime`/`btime` of a correspondence game;
/// the unlimited value or a negative one means no such bound). The whole time is used: a
/// correspondence move has days, so the search need not stop early at a stable result.
pub fn move_budget(s: &CorrespondenceSettings, remaining_ms: i64, threads: usize) -> Budget {
    let mut think = Duration::from_secs(s.move_time_s);
    if (0..NO_LIMIT_MS).contains(&remaining_ms) {
        think = think.min(Duration::from_millis(remaining_ms as u64) / 10);
    }
    Budget {
        soft: think,
        hard: think,
        threads: threads.max(1),
    }
}

/// What one check-in answer asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Correspondence games waiting for our move without a task: start their tasks.
    pub open: Vec<String>,
    /// Correspondence games not known yet whose turn is the opponent's: keep them parked.
    pub park: Vec<String>,
    /// Parked games lichess no longer lists (finished while we were away): start their tasks
    /// once, to read the final state and keep the PGN. Empty when the list may be truncated.
    pub finished: Vec<String>,
}

/// The plan for a check-in answer, given the games that have a task (`active`) and the parked
/// ones. Only correspondence games are touched (a real-time game has its own task from its
/// `gameStart`).
pub fn plan(playing: &Playing, active: &HashSet<String>, parked: &HashSet<String>) -> Plan {
    let mut p = Plan::default();
    let mut listed = HashSet::new();
    for g in &playing.now_playing {
        let id = g.id();
        listed.insert(id);
        if active.contains(id) || !(is_correspondence_game(g) || parked.contains(id)) {
            continue;
        }
        if g.is_my_turn {
            p.open.push(id.to_owned());
        } else if !parked.contains(id) {
            p.park.push(id.to_owned());
        }
    }
    if playing.now_playing.len() < PLAYING_LIMIT {
        let mut gone: Vec<String> = parked
            .iter()
            .filter(|id| !listed.contains(id.as_str()))
            .cloned()
            .collect();
        gone.sort();
        p.finished = gone;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(id: &str, speed: &str, my_turn: bool) -> GameEventInfo {
        GameEventInfo {
            game_id: id.into(),
            speed: speed.into(),
            is_my_turn: my_turn,
            ..GameEventInfo::default()
        }
    }

    fn set(ids: &[&str]) -> HashSet<String> {
        ids.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_think_time_is_the_setting_capped_at_a_tenth_of_the_time_left() {
        let s = CorrespondenceSettings::default();
        let b = move_budget(&s, 3 * 86_400_000, 4);
        assert_eq!((b.soft, b.hard, b.threads), (secs(30), secs(30), 4));
        // 100 s left to move: 10 s.
        assert_eq!(move_budget(&s, 100_000, 1).hard, secs(10));
        // Nothing left: move at once.
        assert_eq!(move_budget(&s, 0, 1).hard, Duration::ZERO);
        // No limit (unlimited's Int max) or nonsense: the setting.
        assert_eq!(move_budget(&s, i64::from(i32::MAX), 1).hard, secs(30));
        assert_eq!(move_budget(&s, -5, 1).hard, secs(30));
        assert_eq!(move_budget(&s, 1_000, 0).threads, 1);
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn a_check_in_opens_our_turns_parks_the_rest_and_finds_finished_games() {
        let playing = Playing {
            now_playing: vec![
                game("mine0001", SPEED, true),
                game("theirs01", SPEED, false),
                game("new00001", SPEED, false),
                game("running1", SPEED, true),
                game("blitz001", "blitz", true),
            ],
            nb_my_turn: Some(3),
        };
        let active = set(&["running1", "blitz001"]);
        let parked = set(&["mine0001", "theirs01", "ended001"]);
        let p = plan(&playing, &active, &parked);
        assert_eq!(p.open, ["mine0001"]);
        assert_eq!(p.park, ["new00001"]);
        assert_eq!(p.finished, ["ended001"]);
    }

    #[test]
    fn a_full_list_may_be_truncated_so_nothing_is_taken_for_finished() {
        let playing = Playing {
            now_playing: (0..PLAYING_LIMIT)
                .map(|i| game(&format!("g{i:07}"), SPEED, false))
                .collect(),
            nb_my_turn: Some(0),
        };
        let p = plan(&playing, &HashSet::new(), &set(&["ended001"]));
        assert!(p.finished.is_empty());
        assert_eq!(p.park.len(), PLAYING_LIMIT);
    }
}
