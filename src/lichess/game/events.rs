//! What each line of the game stream does: `gameFull` sets the game up, `gameState` rebuilds
//! the position from the move list (and answers offers, starts timers), chat lines get their
//! commands answered, `opponentGone` arms the claim.

use std::sync::atomic::Ordering;
use std::time::Duration;

use atomic_chess::{Color, Game, Position};
use tokio::time::Instant;
use tracing::{debug, error, info, warn};

use super::think::Job;
use super::{CLAIM_MARGIN, GameReport, Task, first_move_ply, first_move_wait};
use crate::config::DrawPolicy;
use crate::lichess::chat_commands::Room;
use crate::lichess::model::{GameEvent, GameState};

impl Task {
    /// Handles one game stream item; `Some` when the game is over.
    pub(super) async fn on_event(
        &mut self,
        ev: GameEvent,
        kind: Option<String>,
    ) -> Option<GameReport> {
        match ev {
            GameEvent::GameFull(full) => {
                let me = self.ctx.me.id.to_lowercase();
                let white = full.white.id.as_deref().map(str::to_lowercase);
                let black = full.black.id.as_deref().map(str::to_lowercase);
                self.color = if white.as_deref() == Some(me.as_str()) {
                    Some(Color::White)
                } else if black.as_deref() == Some(me.as_str()) {
                    Some(Color::Black)
                } else {
                    warn!("gameFull does not name us as a player");
                    return Some(self.report("not our game", None));
                };
                if !full.variant.key.eq_ignore_ascii_case("atomic") {
                    // Only atomic rules live here: playing another variant with them would send
                    // illegal moves. Leave the game openly rather than let the clock run out.
                    error!(variant = %full.variant.key, "not an atomic game: leaving it");
                    self.leave_unplayable(full.state.clone());
                    return None;
                }
                self.start = if full.initial_fen.is_empty() || full.initial_fen == "startpos" {
                    Position::startpos()
                } else {
                    match Position::from_fen(&full.initial_fen) {
                        Ok(p) => p,
                        Err(e) => {
                            error!(error = %e, "unusable initial FEN: leaving the game");
                            self.leave_unplayable(full.state.clone());
                            return None;
                        }
                    }
                };
                let state = full.state.clone();
                let opening = state.move_list().len() < 2 && !state.is_terminal();
                if !self.greeted && opening {
                    self.greeted = true;
                    let text = self.chat_text(&self.ctx.settings.game.greeting, &full);
                    self.spawn_chat(text);
                    let text = self.chat_text(&self.ctx.settings.chat.spectator_greeting, &full);
                    self.spawn_chat_in(Room::Spectator, text);
                }
                self.full = Some(*full);
                self.on_state(state).await
            }
            GameEvent::GameState(state) => self.on_state(state).await,
            GameEvent::ChatLine(c) => {
                debug!(room = %c.room, user = %c.username, text = %c.text, "chat");
                self.answer_chat(&c.room, &c.username, &c.text);
                None
            }
            GameEvent::OpponentGone {
                gone,
                claim_win_in_seconds,
            } => {
                self.claim_at = match (gone, claim_win_in_seconds) {
                    (true, Some(s)) if self.ctx.settings.game.claim_victory => {
                        info!(claim_in_s = s, "opponent gone");
                        // The countdown is in whole seconds: claim a little after it.
                        Some(Instant::now() + Duration::from_secs(s) + CLAIM_MARGIN)
                    }
                    _ => None,
                };
                None
            }
            GameEvent::Unknown => {
                debug!(?kind, "unknown game event type ignored");
                None
            }
        }
    }

    pub(super) async fn on_state(&mut self, state: GameState) -> Option<GameReport> {
        // Any state from the server ends a wait for re-sync after a rejected move.
        self.resync_until = None;
        let key = state.moves.trim().to_owned();
        if state.is_terminal() {
            self.state = Some(state);
            return Some(self.finish().await);
        }
        let moves = state.move_list();
        let len = moves.len();
        let game = match Game::from_uci_moves(self.start, &moves) {
            Ok(g) => g,
            Err(e) => {
                // Keep the last good state: a bad line must not make us forget our turn.
                warn!(error = %e, "cannot replay the move list; state skipped");
                return None;
            }
        };
        let Some(color) = self.color else {
            // A gameState before any gameFull: keep it, act once we know our colour.
            self.state = Some(state);
            return None;
        };
        let our_turn = game.position().turn() == color;
        let (opp_draw, opp_takeback) = match color {
            Color::White => (state.bdraw, state.btakeback),
            Color::Black => (state.wdraw, state.wtakeback),
        };
        self.state = Some(state);
        self.game = Some(game);
        if opp_draw && self.draw_answered != Some(len) {
            self.draw_answered = Some(len);
            let accept = match self.ctx.settings.game.draw_policy {
                DrawPolicy::Accept => true,
                DrawPolicy::Decline => false,
                DrawPolicy::Eval => {
                    f64::from(self.win_probability) <= self.ctx.settings.game.draw_accept_max_win
                }
            };
            info!(accept, "draw offer");
            self.spawn_action(if accept { "draw-yes" } else { "draw-no" });
        }
        if opp_takeback && self.takeback_answered != Some(len) {
            self.takeback_answered = Some(len);
            let accept = self.ctx.settings.game.accept_takebacks;
            info!(accept, "takeback request");
            self.spawn_action(if accept {
                "takeback-yes"
            } else {
                "takeback-no"
            });
        }
        // The opponent's first move has not come yet: abort if it never does.
        let opponent_moved = len > first_move_ply(self.start.turn(), color.other());
        self.abort_at = if !opponent_moved && !our_turn && self.quitting.is_none() {
            match self.abort_at {
                Some((t, l)) if l == len => Some((t, l)),
                _ => {
                    let clocked = self.full.as_ref().is_some_and(|f| f.clock.is_some());
                    let wait = first_move_wait(&self.ctx.settings.game, clocked);
                    Some((Instant::now() + wait, len))
                }
            }
        } else {
            None
        };
        // A running search for another list (takeback) is stale.
        if let Some(Job::Think { key: k, stop, .. }) = &self.job
            && *k != key
        {
            stop.store(true, Ordering::Relaxed);
        }
        self.act();
        None
    }
}
