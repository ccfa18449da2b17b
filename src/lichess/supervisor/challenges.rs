//! Incoming challenges once decided: the load the policy counts, accepting (and what lichess's
//! daily bot-game limit does to it), declining, the queue of challenges waiting for a slot, and
//! forgetting old decisions.

use tokio::time::Instant;
use tracing::{info, warn};

use super::{DECIDED_TTL, PENDING_TTL, State};
use crate::lichess::challenge::{self, Decision, DeclineReason, Load};
use crate::lichess::client::ApiError;
use crate::lichess::model::{Challenge, TimeControl};

impl State {
    pub(super) fn load(&self) -> Load {
        // Our own matchmaking challenge (pending or being sent) takes a slot too.
        let ours = self
            .with_matchmaker(|m| m.pending_challenges())
            .unwrap_or(0);
        Load {
            playing: self.realtime_games() as u32,
            pending: (self.pending.len() + ours) as u32,
            queued: self.queue.len() as u32,
            shutting_down: self.shutting_down,
            bot_games_limited: self.daily_limit.until(Instant::now()).is_some(),
        }
    }

    /// Accepts `challenge`. lichess's daily bot-game limit may refuse it (429: ours, which
    /// then holds for bots' challenges and matchmaking; 400: the challenger's, which
    /// matchmaking then leaves alone); the challenge is then declined with `later` rather than
    /// left hanging.
    pub(super) fn accept(&mut self, challenge: Challenge) {
        let id = challenge.id;
        let challenger = challenge.challenger.map(|c| c.id);
        self.decided.insert(id.clone(), Instant::now());
        // A correspondence game will not take a real-time slot: nothing to hold for it.
        if !matches!(challenge.time_control, TimeControl::Correspondence { .. }) {
            self.pending.insert(id.clone(), Instant::now());
        }
        let client = self.ctx.client.clone();
        let daily = self.daily_limit.clone();
        let matchmaker = self.matchmaker.clone();
        self.answers.spawn(async move {
            let r = client.accept_challenge(&id).await;
            if let Err(ApiError::BotGameLimit { ours, seconds, .. }) = &r {
                if *ours {
                    warn!(challenge = %id, reset_in_s = ?seconds,
                        "daily bot-game limit reached: declining bots with `later` until it resets");
                    daily.reached(*seconds, Instant::now());
                } else if let (Some(mm), Some(opponent)) = (&matchmaker, &challenger) {
                    mm.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .opponent_limited(opponent, *seconds, Instant::now());
                }
                if let Err(e) = client
                    .decline_challenge(&id, DeclineReason::Later.key())
                    .await
                {
                    warn!(challenge = %id, error = %e, "declining failed");
                }
            }
            (id, r)
        });
    }

    pub(super) fn decline(&mut self, id: &str, reason: DeclineReason) {
        self.decided.insert(id.to_owned(), Instant::now());
        let client = self.ctx.client.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            if let Err(e) = client.decline_challenge(&id, reason.key()).await {
                warn!(challenge = %id, error = %e, "declining failed");
            }
        });
    }

    /// Accepts queued challenges while slots are free.
    pub(super) fn drain_queue(&mut self) {
        while let Some(c) = self.queue.front() {
            let load = Load {
                queued: 0,
                ..self.load()
            };
            let decision =
                challenge::decide(c, None, &self.ctx.settings.challenge, load, &self.ctx.me.id);
            match decision {
                Decision::Accept => {
                    let Some(c) = self.queue.pop_front() else {
                        break;
                    };
                    info!(challenge = %c.id, "accepting a queued challenge");
                    self.accept(c);
                }
                Decision::Decline(r) => {
                    let id = self.queue.pop_front().map(|c| c.id).unwrap_or_default();
                    self.decline(&id, r);
                }
                Decision::Queue | Decision::Ignore => break,
            }
        }
    }

    pub(super) fn expire(&mut self) {
        let now = Instant::now();
        let before = self.pending.len();
        self.pending.retain(|id, t| {
            let keep = now.duration_since(*t) < PENDING_TTL;
            if !keep {
                warn!(challenge = %id, "accepted challenge never started");
            }
            keep
        });
        self.decided
            .retain(|_, t| now.duration_since(*t) < DECIDED_TTL);
        if self.pending.len() != before {
            self.drain_queue();
        }
    }
}
