//! Games and their rules: moves checked by `atomic-chess`, the ends of a game (mate, an
//! exploded king, flag, resignation, abort, agreed draw, claims), offers and chat.

use std::time::Duration;

use atomic_chess::{Color, Game, Termination};
use serde_json::json;
use tokio::time::Instant;

use super::game_record::GameRec;
use super::json::color_name;
use super::state::{Inner, Res, err};

/// How castling is written in the move lists the server sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Castling {
    /// `e1h1` (lichess since Sept 2025 for Atomic).
    KingTakesRook,
    /// `e1g1` (older lichess).
    KingTwoSquares,
}

/// A game as the server sees it.
#[derive(Clone, Debug)]
pub struct GameSnapshot {
    /// Id.
    pub id: String,
    /// White's user id.
    pub white: String,
    /// Black's user id.
    pub black: String,
    /// Moves as sent in streams.
    pub moves: Vec<String>,
    /// Status name.
    pub status: String,
    /// Winner colour.
    pub winner: Option<String>,
    /// Remaining ms.
    pub wtime: i64,
    /// Remaining ms.
    pub btime: i64,
}

impl GameSnapshot {
    /// Anything but `started`.
    pub fn is_over(&self) -> bool {
        self.status != "started"
    }
}

impl Inner {
    pub(super) fn game_mut(
        &mut self,
        id: &str,
        user: &str,
    ) -> Result<(&mut GameRec, Color), String> {
        let Some(g) = self.games.get_mut(id) else {
            return Err("No such game".into());
        };
        let Some(c) = g.color_of(user) else {
            return Err("Not your game".into());
        };
        Ok((g, c))
    }

    pub(crate) fn play(
        &mut self,
        id: &str,
        user: &str,
        uci: &str,
        offering_draw: Option<bool>,
    ) -> Result<(), String> {
        let castling = self.config.castling;
        let (g, color) = self.game_mut(id, user)?;
        if g.is_over() || g.game.position().turn() != color {
            return Err("Not your turn, or game already over".into());
        }
        let m = g
            .game
            .position()
            .parse_uci(uci)
            .map_err(|e| format!("Invalid move {uci}: {e}"))?;
        let elapsed = g.last_change.elapsed().as_millis() as i64;
        if g.clock.is_some() && g.moves.len() >= 2 {
            let t = match color {
                Color::White => &mut g.wtime,
                Color::Black => &mut g.btime,
            };
            *t -= elapsed;
            if *t <= 0 {
                *t = 0;
                let _ = g;
                self.finish(id, "outoftime", Some(color.other()));
                return Err("Not your turn, or game already over".into());
            }
            *t += g.inc;
        }
        let emitted = match (castling, m.castle_rook_from()) {
            (Castling::KingTakesRook, Some(rook)) => format!("{}{}", m.from(), rook),
            _ => m.to_string(),
        };
        g.game
            .play(m)
            .map_err(|e| format!("Invalid move {uci}: {e}"))?;
        g.moves.push(emitted);
        g.last_change = Instant::now();
        g.passed_ms = 0;
        g.takeback_offer = None;
        let opponent_offer = g.draw_offer == Some(color.other());
        g.draw_offer = None;
        if offering_draw == Some(true) {
            if opponent_offer {
                self.finish(id, "draw", None);
                return Ok(());
            }
            g.draw_offer = Some(color);
        }
        let outcome = g.game.outcome();
        let plies = g.moves.len();
        match outcome {
            Some(o) => {
                let status = match o.termination {
                    Termination::Checkmate => "mate",
                    Termination::KingExploded => "variantEnd",
                    Termination::Stalemate => "stalemate",
                    _ => "draw",
                };
                self.finish(id, status, o.winner);
            }
            None if plies >= 600 => self.finish(id, "draw", None),
            None => {
                let line = g.state_json().to_string();
                g.broadcast(&line);
            }
        }
        Ok(())
    }

    pub(super) fn finish(&mut self, id: &str, status: &str, winner: Option<Color>) {
        let Some(g) = self.games.get_mut(id) else {
            return;
        };
        if g.is_over() {
            return;
        }
        // Freeze the clock of the side to move.
        let (w, b) = g.times();
        g.wtime = w;
        g.btime = b;
        g.status = status.to_owned();
        g.winner = winner;
        g.draw_offer = None;
        g.takeback_offer = None;
        let line = g.state_json().to_string();
        g.broadcast(&line);
        // Dropping the senders ends the streams once the final state is delivered.
        g.subs.clear();
        let (white, black) = (g.white.clone(), g.black.clone());
        for u in [white, black] {
            if let Some(g) = self.games.get(id) {
                let ev = json!({"type": "gameFinish", "game": self.game_info(g, &u)});
                self.send_event(&u, &ev);
            }
        }
    }

    pub(crate) fn chat(&mut self, id: &str, user: &str, text: &str) -> Res<()> {
        let name = self
            .account(user)
            .map_or_else(|| user.to_owned(), |a| a.username.clone());
        let (g, _) = self.game_mut(id, user).map_err(|e| (404, e))?;
        if text.is_empty() || text.chars().count() > 140 {
            return err(400, "Invalid chat text");
        }
        g.chat.push((user.to_owned(), text.to_owned()));
        let line = json!({"type": "chatLine", "room": "player", "username": name, "text": text})
            .to_string();
        g.broadcast(&line);
        Ok(())
    }

    pub(crate) fn chat_of(&self, id: &str) -> Vec<(String, String)> {
        self.games
            .get(id)
            .map(|g| g.chat.clone())
            .unwrap_or_default()
    }

    pub(crate) fn abort(&mut self, id: &str, user: &str) -> Res<()> {
        let (g, _) = self.game_mut(id, user).map_err(|e| (404, e))?;
        if g.is_over() || g.moves.len() >= 2 {
            return err(400, "This game can no longer be aborted");
        }
        self.finish(id, "aborted", None);
        Ok(())
    }

    pub(crate) fn resign(&mut self, id: &str, user: &str) -> Result<(), String> {
        let (g, color) = self.game_mut(id, user)?;
        if g.is_over() {
            return Err("This game cannot be resigned".into());
        }
        if g.moves.len() < 2 {
            self.finish(id, "aborted", None);
        } else {
            self.finish(id, "resign", Some(color.other()));
        }
        Ok(())
    }

    pub(crate) fn draw(&mut self, id: &str, user: &str, yes: bool) -> Result<(), String> {
        let (g, color) = self.game_mut(id, user)?;
        if g.is_over() {
            return Ok(());
        }
        let theirs = g.draw_offer == Some(color.other());
        if yes && theirs {
            self.finish(id, "draw", None);
            return Ok(());
        }
        g.draw_offer = if yes && g.moves.len() >= 2 {
            Some(color)
        } else if !yes {
            None
        } else {
            g.draw_offer
        };
        let line = g.state_json().to_string();
        g.broadcast(&line);
        Ok(())
    }

    pub(crate) fn takeback(&mut self, id: &str, user: &str, yes: bool) -> Result<(), String> {
        let (g, color) = self.game_mut(id, user)?;
        if g.is_over() {
            return Ok(());
        }
        let proposer = color.other();
        if yes && g.takeback_offer == Some(proposer) {
            // Take back to the proposer's turn.
            let n = if g.game.position().turn() == proposer {
                2
            } else {
                1
            };
            let keep = g.moves.len().saturating_sub(n);
            g.moves.truncate(keep);
            g.game = Game::from_uci_moves(g.start, &g.moves)
                .map_err(|e| format!("takeback replay: {e}"))?;
            g.takeback_offer = None;
            g.draw_offer = None;
            g.last_change = Instant::now();
        } else if yes && g.moves.len() >= 2 {
            g.takeback_offer = Some(color);
        } else if !yes {
            g.takeback_offer = None;
        }
        let line = g.state_json().to_string();
        g.broadcast(&line);
        Ok(())
    }

    pub(crate) fn opponent_gone(
        &mut self,
        id: &str,
        user: &str,
        claim_in: Duration,
    ) -> Result<(), String> {
        let (g, _) = self.game_mut(id, user)?;
        g.gone = Some((user.to_owned(), Instant::now() + claim_in));
        let line =
            json!({"type": "opponentGone", "gone": true, "claimWinInSeconds": claim_in.as_millis().div_ceil(1000) as u64})
                .to_string();
        let owner = user.to_owned();
        g.subs.retain(|c| c.user == owner || c.send(&line));
        Ok(())
    }

    /// `POST .../claim-victory`: once the opponent's `opponentGone` countdown ran out, in a
    /// game with a clock (lichess's `forceResignable` requires one: in correspondence and
    /// unlimited games only a draw can be claimed).
    pub(crate) fn claim(&mut self, id: &str, user: &str) -> Res<()> {
        let (g, color) = self.game_mut(id, user).map_err(|e| (404, e))?;
        match &g.gone {
            Some((u, t))
                if u != user && Instant::now() >= *t && !g.is_over() && g.clock.is_some() =>
            {
                self.finish(id, "timeout", Some(color));
                Ok(())
            }
            _ => err(400, "You cannot claim the win on this game"),
        }
    }

    /// `POST .../claim-draw`: like claim-victory, once the opponent's `opponentGone`
    /// countdown ran out, but the game ends without a winner (status `timeout`).
    pub(crate) fn claim_draw(&mut self, id: &str, user: &str) -> Res<()> {
        let (g, _) = self.game_mut(id, user).map_err(|e| (404, e))?;
        match &g.gone {
            Some((u, t)) if u != user && Instant::now() >= *t && !g.is_over() => {
                self.finish(id, "timeout", None);
                Ok(())
            }
            _ => err(400, "You cannot claim draw on this game"),
        }
    }

    /// `by` passes on the running turn of correspondence game `id` without waiting (the side
    /// to move may lose on time at the next tick).
    pub(crate) fn pass_time(&mut self, id: &str, by: Duration) -> Result<(), String> {
        let Some(g) = self.games.get_mut(id) else {
            return Err("No such game".into());
        };
        if !g.turn_running() {
            return Err("Not a running correspondence game".into());
        }
        g.passed_ms = g
            .passed_ms
            .saturating_add(i64::try_from(by.as_millis()).unwrap_or(i64::MAX));
        Ok(())
    }

    pub(crate) fn snapshot(&self, id: &str) -> Option<GameSnapshot> {
        self.games.get(id).map(|g| {
            let (w, b) = g.times();
            GameSnapshot {
                id: g.id.clone(),
                white: g.white.clone(),
                black: g.black.clone(),
                moves: g.moves.clone(),
                status: g.status.clone(),
                winner: g.winner.map(|c| color_name(c).to_owned()),
                wtime: w,
                btime: b,
            }
        })
    }
}
