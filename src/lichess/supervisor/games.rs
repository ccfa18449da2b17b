//! One task per game: starting it, and restarting it (a bounded number of times) when it
//! panics while its game is still running on lichess.

use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;
use tracing::warn;

use super::{GameEntry, MAX_GAME_RESTARTS, State};
use crate::lichess::game::play_game;

impl State {
    /// Starts the task of game `id` (again, after `restarts` panics).
    pub(super) fn spawn_game(&mut self, id: String, restarts: u32) {
        let quit = CancellationToken::new();
        let task = self
            .tasks
            .spawn(play_game(self.ctx.clone(), id.clone(), quit.clone()))
            .id();
        self.games.insert(
            id,
            GameEntry {
                quit,
                task,
                restarts,
            },
        );
        self.ctx.running.store(self.tasks.len(), Ordering::Relaxed);
    }

    /// A game task panicked: the game is still running on lichess, so restart its task (the
    /// new game stream starts with a fresh `gameFull`), at most [`MAX_GAME_RESTARTS`] times.
    /// Only that game's entry changes: the others keep theirs (a replayed `gameStart` must not
    /// start a second task for a game being played).
    pub(super) fn on_game_panic(&mut self, e: &tokio::task::JoinError) {
        let Some(id) = self
            .games
            .iter()
            .find(|(_, g)| g.task == e.id())
            .map(|(id, _)| id.clone())
        else {
            warn!(error = %e, "a game task failed");
            return;
        };
        let restarts = self.games.remove(&id).map_or(0, |g| g.restarts) + 1;
        if restarts > MAX_GAME_RESTARTS {
            tracing::error!(game_id = %id, error = %e, "game task failed again: leaving the game");
            self.ctx
                .client
                .metrics()
                .record_game(crate::telemetry::GameResult::Left, false);
            self.finished.insert(id);
            return;
        }
        tracing::error!(game_id = %id, error = %e, restarts, "game task failed: restarting it");
        self.spawn_game(id, restarts);
    }
}
