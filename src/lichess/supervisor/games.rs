//! One task per game: starting it, and restarting it (a bounded number of times) when it
//! panics while its game is still running on lichess.

use tokio_util::sync::CancellationToken;
use tracing::warn;

use super::{GameEntry, MAX_GAME_RESTARTS, State};
use crate::lichess::game::threads::SearchSlot;
use crate::lichess::game::{play_correspondence_game, play_game};

impl State {
    /// Starts the task of game `id` (again, after `restarts` panics). A real-time game's task
    /// holds its share of the search threads for the whole game; a correspondence game's only
    /// while it searches.
    pub(super) fn spawn_game(&mut self, id: String, restarts: u32, correspondence: bool) {
        let quit = CancellationToken::new();
        let (ctx, game, q) = (self.ctx.clone(), id.clone(), quit.clone());
        let task = if correspondence {
            self.tasks.spawn(play_correspondence_game(ctx, game, q))
        } else {
            let slot = SearchSlot::take(&self.ctx.running);
            self.tasks.spawn(async move {
                let _slot = slot;
                play_game(ctx, game, q).await
            })
        }
        .id();
        self.games.insert(
            id,
            GameEntry {
                quit,
                task,
                restarts,
                correspondence,
            },
        );
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
        let (restarts, correspondence) = self
            .games
            .remove(&id)
            .map_or((0, false), |g| (g.restarts, g.correspondence));
        let restarts = restarts + 1;
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
        self.spawn_game(id, restarts, correspondence);
    }
}
