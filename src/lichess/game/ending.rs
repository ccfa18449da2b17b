//! Leaving a game: quitting on shutdown or when it cannot be played, the final state (PGN,
//! goodbye, report) and the per-game summary line and metrics.

use std::sync::atomic::Ordering;
use std::time::Duration;

use atomic_chess::Color;
use tokio::time::Instant;
use tracing::{info, warn};

use super::think::Job;
use super::{GameReport, Task};
use crate::config::ShutdownMode;
use crate::lichess::model::GameState;
use crate::lichess::pgn;
use crate::telemetry::{GameResult, GameSummary};

impl Task {
    /// A game we cannot play (another variant, a FEN our rules reject): abort it while that is
    /// allowed, else resign, and wait for the final state like any other quit.
    pub(super) fn leave_unplayable(&mut self, state: GameState) {
        let abortable = state.move_list().len() < 2;
        self.state = Some(state);
        self.quitting.get_or_insert_with(Instant::now);
        self.spawn_action(if abortable { "abort" } else { "resign" });
    }

    pub(super) fn quit_game(&mut self) {
        if let Some(Job::Think { stop, .. } | Job::Ponder { stop, .. }) = &self.job {
            stop.store(true, Ordering::Relaxed);
        }
        self.quitting.get_or_insert_with(Instant::now);
        let abortable = self.state.as_ref().is_none_or(|s| s.move_list().len() < 2);
        let action = match self.ctx.settings.shutdown.mode {
            ShutdownMode::Abort | ShutdownMode::Finish if abortable => "abort",
            _ => "resign",
        };
        info!(action, "leaving the game");
        self.spawn_action(action);
    }

    pub(super) async fn finish(&mut self) -> GameReport {
        if let Some(Job::Think { stop, .. } | Job::Ponder { stop, .. }) = &self.job {
            stop.store(true, Ordering::Relaxed);
        }
        let Some(state) = self.state.clone() else {
            return self.leave("finished", None);
        };
        let mut report = self.report(&state.status, None);
        if let Some(full) = &self.full {
            let text = pgn::render(self.ctx.client.base_url(), full, &state);
            if let Some(dir) = &self.ctx.settings.game.pgn_dir
                && let Err(e) = pgn::append(dir, &text)
            {
                warn!(error = %e, dir = %dir.display(), "cannot write the PGN");
            }
            report.pgn = Some(text);
            let goodbye = self.chat_text(&self.ctx.settings.game.goodbye, full);
            if !goodbye.is_empty() && state.status != "aborted" {
                let chat = self.ctx.client.chat(&self.id, "player", &goodbye);
                if let Ok(Err(e)) = tokio::time::timeout(Duration::from_secs(3), chat).await {
                    warn!(error = %e, "goodbye chat failed");
                }
            }
        }
        info!(status = %state.status, result = %report.result, "game over");
        self.summarize(&state);
        report
    }

    /// Ends the task without lichess's final state (`status` says why): the result is
    /// unknown, but the game is still summarized and counted, as left.
    pub(super) fn leave(&self, status: &str, fatal: Option<String>) -> GameReport {
        self.log_summary(GameResult::Left, status, None);
        self.report(status, fatal)
    }

    /// Logs the per-game summary line and counts the result in the metrics.
    pub(super) fn summarize(&self, state: &GameState) {
        let Some(color) = self.color else {
            // A final state before any gameFull: we never knew our side.
            self.log_summary(GameResult::Left, &state.status, None);
            return;
        };
        let (our_color, clock_ms) = match color {
            Color::White => ("white", state.wtime),
            Color::Black => ("black", state.btime),
        };
        let result = GameResult::from_lichess(&state.status, state.winner.as_deref(), our_color);
        let has_clock = self.full.as_ref().is_some_and(|f| f.clock.is_some());
        let clock_left = has_clock.then(|| Duration::from_millis(clock_ms.max(0) as u64));
        self.log_summary(result, &state.status, clock_left);
    }

    pub(super) fn log_summary(
        &self,
        result: GameResult,
        termination: &str,
        clock_left: Option<Duration>,
    ) {
        let opponent = match (&self.full, self.color) {
            (Some(f), Some(Color::White)) => f.black.display(),
            (Some(f), Some(Color::Black)) => f.white.display(),
            _ => "?".into(),
        };
        let summary = GameSummary {
            game_id: self.id.clone(),
            opponent,
            result,
            termination: termination.to_owned(),
            clock_left,
            stats: self.stats,
        };
        summary.log();
        self.ctx
            .client
            .metrics()
            .record_game(result, summary.is_time_forfeit());
    }
}
