//! The supervisor's side of correspondence games (`lichess::correspondence`): a game with our
//! turn gets a task, the others are kept parked (no task, no stream), the periodic check-in
//! through `/api/account/playing` starts the tasks of parked games whose turn has come, and a
//! parked game that ends gets its task once more for the final state and the PGN.

use std::collections::HashSet;
use std::time::Duration;

use tracing::{debug, info, warn};

use super::State;
use crate::lichess::client::ApiError;
use crate::lichess::correspondence::{self, PARKED};
use crate::lichess::game::GameReport;
use crate::lichess::model::{GameEventInfo, Playing};

impl State {
    /// Games that count against `challenge.max_games`: the real-time ones.
    pub(super) fn realtime_games(&self) -> usize {
        self.games.values().filter(|g| !g.correspondence).count()
    }

    /// Whether the periodic check-in has anything to look for: correspondence is accepted,
    /// or games are parked or running from an earlier time.
    pub(super) fn checks_in(&self) -> bool {
        !self.shutting_down
            && (self.ctx.settings.challenge.correspondence
                || !self.parked.is_empty()
                || self.games.values().any(|g| g.correspondence))
    }

    /// When the next check-in is due, `period` after the last one.
    pub(super) fn check_in_period(&self) -> Duration {
        Duration::from_secs(self.ctx.settings.correspondence.checkin_period_s)
    }

    /// A `gameStart` of a correspondence game: its task starts when it is our turn (and we
    /// are not shutting down), else it is parked until a check-in finds our turn.
    pub(super) fn on_correspondence_start(&mut self, game: &GameEventInfo) {
        let id = game.id().to_owned();
        if game.is_my_turn && !self.shutting_down {
            info!(game_id = %id, opponent = %game.opponent.username, "correspondence game: our turn");
            self.open_correspondence(id);
        } else {
            info!(game_id = %id, opponent = %game.opponent.username,
                checkin_s = self.ctx.settings.correspondence.checkin_period_s,
                "correspondence game: waiting for the opponent (checked in periodically)");
            self.parked.insert(id);
        }
    }

    /// A `gameFinish` of a parked game: its task reads the final state (and keeps the PGN).
    pub(super) fn on_parked_finish(&mut self, id: &str) {
        if self.parked.contains(id) {
            info!(game_id = %id, "parked correspondence game finished: reading its end");
            self.open_correspondence(id.to_owned());
        }
    }

    /// Correspondence games with a task now.
    fn open_correspondence_games(&self) -> usize {
        self.games.values().filter(|g| g.correspondence).count()
    }

    /// At most `challenge.max_games` correspondence games have a task at once (each holds a
    /// search table of `hash_share` while it does): game `id` gets one now, or waits for one
    /// of them to park.
    pub(super) fn open_correspondence(&mut self, id: String) {
        self.parked.remove(&id);
        if self.games.contains_key(&id) || self.corr_waiting.contains(&id) {
            return;
        }
        self.corr_waiting.push_back(id);
        self.drain_correspondence();
    }

    /// Gives the waiting correspondence games a task while fewer than `max_games` have one.
    pub(super) fn drain_correspondence(&mut self) {
        let max = self.ctx.settings.challenge.max_games.max(1) as usize;
        while !self.shutting_down && self.open_correspondence_games() < max {
            let Some(id) = self.corr_waiting.pop_front() else {
                break;
            };
            self.parked.remove(&id);
            if !self.games.contains_key(&id) && !self.finished.contains(&id) {
                self.spawn_game(id, 0, true);
            }
        }
    }

    /// A task that ended: a parked correspondence game waits for the check-in (`true`), any
    /// other report is a finished game.
    pub(super) fn parked_report(&mut self, report: &GameReport) -> bool {
        if report.status != PARKED {
            self.parked.remove(&report.id);
            return false;
        }
        self.games.remove(&report.id);
        if !self.finished.contains(&report.id) {
            debug!(game_id = %report.id, "correspondence game parked");
            self.parked.insert(report.id.clone());
        }
        true
    }

    /// The check-in's answer: tasks for the games waiting for our move, parking for new games
    /// waiting for the opponent, a last task for parked games lichess no longer lists. On an
    /// error (a 429 included: the client holds the endpoint for its cooldown) the next
    /// check-in simply comes a period later.
    pub(super) fn on_checked_in(&mut self, answer: Result<Playing, ApiError>) {
        let playing = match answer {
            Ok(p) => p,
            Err(e) => {
                warn!(error = %e, "correspondence check-in failed; trying again next period");
                return;
            }
        };
        if self.shutting_down {
            return;
        }
        let active: HashSet<String> = self
            .games
            .keys()
            .chain(self.corr_waiting.iter())
            .cloned()
            .collect();
        let plan = correspondence::plan(&playing, &active, &self.parked);
        debug!(my_turn = ?playing.nb_my_turn, open = plan.open.len(),
            parked = self.parked.len(), "correspondence check-in");
        for id in plan.park {
            if !self.finished.contains(&id) {
                self.parked.insert(id);
            }
        }
        for id in plan.open.into_iter().chain(plan.finished) {
            if self.finished.contains(&id) {
                self.parked.remove(&id);
                continue;
            }
            info!(game_id = %id, "correspondence check-in: opening the game");
            self.open_correspondence(id);
        }
    }
}

/// The first check-in comes this soon after the start (or a period, if shorter): the event
/// stream's `gameStart` replay has been read by then, so it finds what that replay did not say
/// (games past the replay's limit, or finished while the bot was away).
pub(super) const FIRST_CHECK_IN: Duration = Duration::from_secs(5);
