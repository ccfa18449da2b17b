//! The supervisor's side of matchmaking: starting its task, sharing the load with it, and
//! feeding it the events it needs.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::State;
use crate::lichess::matchmaking::{self, Matchmaker};

impl State {
    /// Runs `f` on the matchmaker, if matchmaking is on.
    pub(super) fn with_matchmaker<T>(&self, f: impl FnOnce(&mut Matchmaker) -> T) -> Option<T> {
        let mm = self.matchmaker.as_ref()?;
        let mut guard = mm.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(f(&mut guard))
    }

    /// Shares the current load with the matchmaking task and the `!queue` gauge.
    pub(super) fn publish_load(&self) {
        let waiting = self.pending.len() + self.queue.len();
        let load = matchmaking::Load {
            games_running: self.realtime_games(),
            challenges_waiting: waiting,
            max_games: self.ctx.settings.challenge.max_games as usize,
        };
        *self
            .published_load
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = load;
        self.ctx.client.metrics().challenges_waiting.store(
            i64::try_from(waiting).unwrap_or(i64::MAX),
            Ordering::Relaxed,
        );
    }
}

/// Starts the matchmaking task (it stops on `shutdown`) and returns its shared state.
pub(super) fn start_matchmaking(
    state: &State,
    shutdown: &CancellationToken,
) -> Arc<Mutex<Matchmaker>> {
    let settings = &state.ctx.settings;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9e37_79b9, |d| d.as_nanos() as u64);
    let mm = Arc::new(Mutex::new(
        Matchmaker::new(settings.matchmaking.clone(), Instant::now(), seed)
            .with_daily_limit(state.daily_limit.clone()),
    ));
    let me = &state.ctx.me;
    let identity = matchmaking::Identity {
        id: me.id.clone(),
        atomic_rating: me
            .perfs
            .get("atomic")
            .and_then(|p| p.rating)
            .and_then(|r| u32::try_from(r).ok()),
    };
    info!(idle_s = settings.matchmaking.idle_s, rating = ?identity.atomic_rating, "matchmaking on");
    let client = state.ctx.client.clone();
    let load = state.published_load.clone();
    let shared = mm.clone();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let metrics = client.metrics().clone();
        matchmaking::run(
            &client,
            shared,
            identity,
            move || {
                *load
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
            },
            move || crate::metrics::Metrics::inc(&metrics.challenges_sent),
            stop.cancelled_owned(),
        )
        .await;
    });
    mm
}
