//! What each line of the event stream does: game starts (replays ignored) start game tasks,
//! challenges go through the policy with the real load, and our own challenges' answers go to
//! matchmaking.

use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::State;
use crate::lichess::challenge::{self, Decision};
use crate::lichess::correspondence;
use crate::lichess::model::Event;

impl State {
    pub(super) fn on_event(&mut self, ev: Event, kind: Option<String>) {
        match ev {
            Event::GameStart { game } => {
                let id = game.id().to_owned();
                self.pending.remove(&id);
                if self.games.contains_key(&id) || self.finished.contains(&id) {
                    debug!(game_id = %id, "replayed gameStart ignored");
                    return;
                }
                if id.is_empty() {
                    warn!("gameStart without a game id ignored");
                    return;
                }
                if correspondence::is_correspondence_game(&game) {
                    if self.corr_waiting.contains(&id) {
                        return;
                    }
                    if !self.parked.contains(&id) || game.is_my_turn {
                        self.on_correspondence_start(&game);
                    }
                    return;
                }
                info!(game_id = %id, opponent = %game.opponent.username, "game start");
                let opponent = game.opponent.id.clone().unwrap_or_default();
                self.with_matchmaker(|m| m.game_started(&id, &opponent, false, Instant::now()));
                self.spawn_game(id, 0, false);
            }
            Event::GameFinish { game } => {
                debug!(game_id = %game.id(), "gameFinish");
                self.on_parked_finish(game.id());
            }
            Event::Challenge { challenge, compat } => {
                if self.decided.contains_key(&challenge.id)
                    || self.queue.iter().any(|c| c.id == challenge.id)
                {
                    debug!(challenge = %challenge.id, "replayed challenge ignored");
                    return;
                }
                let decision = challenge::decide(
                    &challenge,
                    compat.as_ref(),
                    &self.ctx.settings.challenge,
                    self.load(),
                    &self.ctx.me.id,
                );
                let from = challenge
                    .challenger
                    .as_ref()
                    .map(|c| c.id.clone())
                    .unwrap_or_default();
                info!(challenge = %challenge.id, %from, ?decision, "challenge");
                if matches!(decision, Decision::Accept | Decision::Queue)
                    && challenge
                        .challenger
                        .as_ref()
                        .is_some_and(super::super::model::event::ChallengeUser::is_bot)
                {
                    self.with_matchmaker(|m| m.incoming_bot_challenge(&challenge.id));
                }
                match decision {
                    Decision::Accept => self.accept(challenge),
                    Decision::Queue => self.queue.push_back(challenge),
                    Decision::Decline(reason) => self.decline(&challenge.id, reason),
                    Decision::Ignore => {}
                }
            }
            Event::ChallengeCanceled { challenge } => {
                info!(challenge = %challenge.id, "challenge canceled");
                self.with_matchmaker(|m| m.challenge_canceled(&challenge.id));
                self.queue.retain(|c| c.id != challenge.id);
                if self.pending.remove(&challenge.id).is_some() {
                    self.drain_queue();
                }
            }
            Event::ChallengeDeclined { challenge } => {
                info!(challenge = %challenge.id, reason = ?challenge.decline_reason_key, "our challenge was declined");
                self.with_matchmaker(|m| m.challenge_declined(&challenge.id, Instant::now()));
            }
            Event::Unknown => debug!(?kind, "unknown event type ignored"),
        }
    }
}
