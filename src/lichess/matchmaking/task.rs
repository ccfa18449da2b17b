//! The matchmaking loop: it asks [`Matchmaker::decide`] every few seconds, and when it says go,
//! lists the online bots, [`Matchmaker::choose`]s one, challenges it and records the outcome;
//! it cancels challenges left unanswered and, on shutdown, the one still pending.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::api::{MatchmakingApi, ONLINE_BOTS_NB};
use super::bookkeeping::Matchmaker;
use super::policy::{Decision, Load};
use crate::config::TimeControl;

/// Who we are, for [`run`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Our lichess id.
    pub id: String,
    /// Our atomic rating, if we have one.
    pub atomic_rating: Option<u32>,
}

/// How often [`run`] re-evaluates at most (it wakes earlier when a wait ends sooner).
const TICK: Duration = Duration::from_secs(5);

/// The matchmaking loop: decides, fetches online bots, challenges, cancels unanswered
/// challenges, until `shutdown` completes (then cancels a pending challenge, best effort).
/// `load` reports the supervisor's current load; `on_sent` is told each challenge sent (for
/// metrics). Events (declines, game starts) are fed to `state` by the event-stream handler.
pub async fn run<A, L>(
    api: &A,
    state: Arc<Mutex<Matchmaker>>,
    identity: Identity,
    load: L,
    on_sent: impl Fn(),
    shutdown: impl Future<Output = ()>,
) where
    A: MatchmakingApi,
    L: Fn() -> Load,
{
    tokio::pin!(shutdown);
    loop {
        let now = Instant::now();
        let expired = lock(&state).expire_pending(now);
        if let Some(id) = expired {
            tracing::info!(challenge = %id, "matchmaking: challenge unanswered, cancelling");
            if let Err(err) = api.cancel_challenge(&id).await {
                tracing::debug!(challenge = %id, error = %err, "matchmaking: cancel failed");
            }
        }
        let decision = lock(&state).decide(now, load());
        let sleep_for = match decision {
            Decision::Wait { until, .. } => {
                until.map_or(TICK, |u| u.saturating_duration_since(now).min(TICK))
            }
            Decision::Challenge => {
                challenge_once(api, &state, &identity, &on_sent).await;
                TICK
            }
        };
        tokio::select! {
            () = &mut shutdown => break,
            () = tokio::time::sleep(sleep_for.max(Duration::from_millis(50))) => {}
        }
    }
    let pending = lock(&state).pending.take();
    if let Some(p) = pending {
        let _ = api.cancel_challenge(&p.id).await;
    }
}

/// Locks the shared state; a panic elsewhere while holding it leaves plain data behind, so a
/// poisoned lock is still usable.
fn lock(state: &Mutex<Matchmaker>) -> std::sync::MutexGuard<'_, Matchmaker> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One matchmaking attempt: list bots, choose, challenge, record the outcome.
async fn challenge_once<A: MatchmakingApi>(
    api: &A,
    state: &Mutex<Matchmaker>,
    identity: &Identity,
    on_sent: &impl Fn(),
) {
    lock(state).set_in_flight(true);
    attempt(api, state, identity, on_sent).await;
    lock(state).set_in_flight(false);
}

/// The body of [`challenge_once`], between reserving and releasing the slot.
async fn attempt<A: MatchmakingApi>(
    api: &A,
    state: &Mutex<Matchmaker>,
    identity: &Identity,
    on_sent: &impl Fn(),
) {
    let bots = match api.online_bots(ONLINE_BOTS_NB).await {
        Ok(bots) => bots,
        Err(err) => {
            tracing::warn!(error = %err, "matchmaking: cannot list online bots");
            lock(state).last_challenge = Some(Instant::now());
            return;
        }
    };
    let choice = lock(state).choose(&bots, &identity.id, identity.atomic_rating, Instant::now());
    let Some((bot, request)) = choice else {
        tracing::info!(online = bots.len(), "matchmaking: no suitable online bot");
        lock(state).last_challenge = Some(Instant::now());
        return;
    };
    let tc = TimeControl {
        limit_s: request.clock_limit_s,
        increment_s: request.clock_increment_s,
    };
    match api.create_challenge(&bot.username, &request).await {
        Ok(id) => {
            tracing::info!(opponent = %bot.username, rating = ?bot.atomic_rating, time_control = %tc,
                rated = request.rated, challenge = %id, "matchmaking: challenge sent");
            on_sent();
            lock(state).challenge_sent(&id, &bot.id, Instant::now());
        }
        Err(err) => {
            tracing::warn!(opponent = %bot.username, error = %err, "matchmaking: challenge failed");
            lock(state).challenge_failed(&bot.id, &err, Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MatchmakingConfig;
    use crate::lichess::client::ApiError;
    use crate::lichess::matchmaking::api::{ChallengeError, ChallengeRequest, OnlineBot};
    use crate::lichess::matchmaking::test_support::{bot, cfg, idle, secs};

    /// An in-memory lichess for [`run`].
    struct FakeApi {
        bots: Vec<OnlineBot>,
        sent: Mutex<Vec<(String, ChallengeRequest)>>,
        cancelled: Mutex<Vec<String>>,
    }

    impl MatchmakingApi for FakeApi {
        async fn online_bots(&self, _nb: u32) -> Result<Vec<OnlineBot>, ApiError> {
            Ok(self.bots.clone())
        }
        async fn create_challenge(
            &self,
            username: &str,
            request: &ChallengeRequest,
        ) -> Result<String, ChallengeError> {
            let mut sent = self.sent.lock().unwrap();
            sent.push((username.to_string(), request.clone()));
            Ok(format!("chal{:04}", sent.len()))
        }
        async fn cancel_challenge(&self, id: &str) -> Result<(), ApiError> {
            self.cancelled.lock().unwrap().push(id.to_string());
            Ok(())
        }
    }

    fn fake(bots: Vec<OnlineBot>) -> FakeApi {
        FakeApi {
            bots,
            sent: Mutex::new(Vec::new()),
            cancelled: Mutex::new(Vec::new()),
        }
    }

    /// Runs the loop with `config` for `run_for` of (paused) time while the bot stays idle.
    async fn drive(
        api: &FakeApi,
        config: MatchmakingConfig,
        run_for: Duration,
    ) -> (Arc<Mutex<Matchmaker>>, usize) {
        let state = Arc::new(Mutex::new(Matchmaker::new(config, Instant::now(), 9)));
        let sent_count = std::sync::atomic::AtomicUsize::new(0);
        let identity = Identity {
            id: "me".into(),
            atomic_rating: Some(1500),
        };
        run(
            api,
            Arc::clone(&state),
            identity,
            || idle(1),
            || {
                sent_count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            },
            tokio::time::sleep(run_for),
        )
        .await;
        (state, sent_count.into_inner())
    }

    #[tokio::test(start_paused = true)]
    async fn run_challenges_once_when_idle_and_cancels_on_shutdown() {
        let api = fake(vec![bot("me", 1500, 3), bot("partner", 1600, 40)]);
        let config = MatchmakingConfig {
            idle_s: 5,
            min_interval_s: 3600,
            ..cfg()
        };
        let (state, sent_count) = drive(&api, config, secs(15)).await;
        let sent = api.sent.lock().unwrap();
        assert_eq!(sent.len(), 1, "exactly one challenge: {sent:?}");
        assert_eq!(sent[0].0, "PARTNER");
        assert_eq!(sent_count, 1);
        assert_eq!(
            *api.cancelled.lock().unwrap(),
            ["chal0001"],
            "shutdown cancels the pending challenge"
        );
        assert_eq!(state.lock().unwrap().pending_challenges(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn run_cancels_unanswered_challenge_and_moves_on() {
        let api = fake(vec![bot("a", 1500, 3), bot("b", 1500, 3)]);
        let config = MatchmakingConfig {
            idle_s: 5,
            min_interval_s: 60,
            challenge_timeout_s: 25,
            ..cfg()
        };
        // t=5 first challenge, t=30 expired + cancelled, t=65 second challenge, t=90 expired, t=125 third
        let (_state, sent_count) = drive(&api, config, secs(100)).await;
        let sent = api.sent.lock().unwrap();
        assert_eq!(sent.len(), 2, "{sent:?}");
        assert_ne!(
            sent[0].0, sent[1].0,
            "the second challenge goes to the other bot"
        );
        assert_eq!(sent_count, 2);
        assert_eq!(*api.cancelled.lock().unwrap(), ["chal0001", "chal0002"]);
    }

    #[tokio::test(start_paused = true)]
    async fn run_never_challenges_when_disabled_or_busy() {
        let api = fake(vec![bot("a", 1500, 3)]);
        drive(
            &api,
            MatchmakingConfig {
                idle_s: 1,
                ..MatchmakingConfig::default()
            },
            secs(600),
        )
        .await;
        assert!(api.sent.lock().unwrap().is_empty());
    }
}
