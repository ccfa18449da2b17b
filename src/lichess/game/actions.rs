//! What a game task sends besides moves: chat (greetings, goodbyes, answers to chat commands),
//! abort, resign, answers to draw and takeback offers, and claims when the opponent left. Each
//! is spawned, so a slow request never holds up the game.

use std::sync::atomic::Ordering;

use atomic_chess::Color;
use tracing::{info, warn};

use super::Task;
use crate::config::DrawPolicy;
use crate::lichess::chat_commands::{ChatContext, QueueReport, Room};
use crate::lichess::client::ApiError;
use crate::lichess::model::GameFull;

impl Task {
    pub(super) fn chat_text(&self, template: &str, full: &GameFull) -> String {
        let opponent = match self.color {
            Some(Color::White) => full.black.display(),
            _ => full.white.display(),
        };
        template
            .replace("{me}", &self.ctx.me.username)
            .replace("{opponent}", &opponent)
    }

    pub(super) fn spawn_chat(&self, text: String) {
        self.spawn_chat_in(Room::Player, text);
    }

    /// Answers a chat command (`lichess::chat_commands`) in the room it was asked in.
    pub(super) fn answer_chat(&mut self, room: &str, user: &str, text: &str) {
        let Some(room) = Room::parse(room) else {
            return;
        };
        if !self.ctx.settings.chat.commands {
            return;
        }
        let metrics = self.ctx.client.metrics();
        let ctx = ChatContext {
            bot_name: &self.ctx.me.username,
            version: env!("CARGO_PKG_VERSION"),
            eval: self.eval.as_ref(),
            queue: QueueReport {
                games_running: self.ctx.running.load(Ordering::Relaxed),
                max_games: self.ctx.settings.challenge.max_games as usize,
                challenges_waiting: usize::try_from(
                    metrics.challenges_waiting.load(Ordering::Relaxed),
                )
                .unwrap_or(0),
            },
        };
        if let Some(reply) = self
            .chat
            .respond(room, user, text, std::time::Instant::now(), &ctx)
        {
            info!(room = room.as_str(), %user, command = %text, "chat command answered");
            self.spawn_chat_in(room, reply);
        }
    }

    pub(super) fn spawn_chat_in(&self, room: Room, text: String) {
        let text =
            crate::lichess::chat_commands::truncate_chars(&text, crate::config::MAX_CHAT_CHARS);
        if text.trim().is_empty() {
            return;
        }
        let client = self.ctx.client.clone();
        let id = self.id.clone();
        tokio::spawn(async move {
            if let Err(e) = client.chat(&id, room.as_str(), &text).await {
                warn!(error = %e, "chat failed");
            }
        });
    }

    pub(super) fn spawn_action(&self, what: &'static str) {
        let client = self.ctx.client.clone();
        let id = self.id.clone();
        tokio::spawn(async move {
            let r = match what {
                "abort" => client.abort(&id).await,
                "resign" => client.resign(&id).await,
                "draw-yes" => client.draw(&id, true).await,
                "draw-no" => client.draw(&id, false).await,
                "takeback-yes" => client.takeback(&id, true).await,
                _ => client.takeback(&id, false).await,
            };
            match r {
                Ok(()) => info!(game_id = %id, action = what, "sent"),
                Err(e) => warn!(game_id = %id, action = what, error = %e, "failed"),
            }
        });
    }

    /// Claims the win over an opponent who left. Lichess refuses that in some games (those
    /// from a challenge among them: only a draw can be claimed there); the draw is claimed
    /// instead when we would take a draw anyway (the draw policy and our last win probability),
    /// or when the game has no clock (the opponent's clock would never end it). Otherwise we
    /// play on: a clocked opponent who stays away loses on time.
    pub(super) fn spawn_claim(&self) {
        let g = &self.ctx.settings.game;
        let clocked = self.full.as_ref().is_some_and(|f| f.clock.is_some());
        let draw_ok = !clocked
            || match g.draw_policy {
                DrawPolicy::Accept => true,
                DrawPolicy::Decline => false,
                DrawPolicy::Eval => f64::from(self.win_probability) <= g.draw_accept_max_win,
            };
        let client = self.ctx.client.clone();
        let id = self.id.clone();
        tokio::spawn(async move {
            match client.claim_victory(&id).await {
                Ok(()) => info!(game_id = %id, "win claimed"),
                Err(e @ ApiError::Status { status: 400, .. }) if draw_ok => {
                    info!(game_id = %id, error = %e, "the win cannot be claimed: claiming a draw");
                    match client.claim_draw(&id).await {
                        Ok(()) => info!(game_id = %id, "draw claimed"),
                        Err(e) => warn!(game_id = %id, error = %e, "claiming a draw failed"),
                    }
                }
                Err(e) => warn!(game_id = %id, error = %e, "claiming the win failed"),
            }
        });
    }
}
