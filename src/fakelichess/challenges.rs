//! Challenges: created, cancelled, declined, or accepted into a game; and lichess's daily
//! limit of games between bots.

use atomic_chess::{Color, Game, Position};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::challenge_record::{BotLimit, ChallengeRec, ChallengeSpec};
use super::game_record::GameRec;
use super::state::{Inner, Res, err};

pub(super) fn speed_of(clock: Option<(u32, u32)>, days: Option<u32>) -> &'static str {
    match (clock, days) {
        (Some((l, i)), _) => {
            let est = u64::from(l) + 40 * u64::from(i);
            if est < 30 {
                "ultraBullet"
            } else if est < 180 {
                "bullet"
            } else if est < 480 {
                "blitz"
            } else if est < 1500 {
                "rapid"
            } else {
                "classical"
            }
        }
        (None, Some(_)) => "correspondence",
        (None, None) => "unlimited",
    }
}

impl Inner {
    /// Simulates lichess's daily bot-game limit from now on.
    pub(crate) fn limit_bot_games(&mut self, limit: BotLimit) {
        self.bot_limit = Some(limit);
    }

    /// Bot-versus-bot games `user` started (counted while a limit is simulated or not).
    pub(super) fn bot_games_of(&self, user: &str) -> usize {
        self.games
            .values()
            .filter(|g| {
                g.color_of(user).is_some()
                    && [&g.white, &g.black]
                        .iter()
                        .all(|p| self.account(p).is_some_and(|a| a.bot))
            })
            .count()
    }

    /// lichess's answer when a game between bots `user` and `other` would pass the daily
    /// limit: 429 when `user` (who asks) has played its games, 400 when `other` has. `None`
    /// when no limit is simulated, one of them is human, or both may still play.
    pub(crate) fn bot_limit_reply(&self, user: &str, other: &str) -> Option<(u16, Value)> {
        let limit = self.bot_limit?;
        let bots = [user, other]
            .iter()
            .all(|u| self.account(u).is_some_and(|a| a.bot));
        if !bots {
            return None;
        }
        let body = |error: String| {
            json!({"error": error,
                "ratelimit": {"key": "bot.vsBot.day", "seconds": limit.reset_s}})
        };
        if self.bot_games_of(user) >= limit.per_day {
            return Some((
                429,
                body(format!(
                    "You played {} games against other bots today, please wait before challenging another bot.",
                    limit.per_day
                )),
            ));
        }
        if self.bot_games_of(other) >= limit.per_day {
            return Some((
                400,
                body(format!(
                    "{other} played {} games against other bots today, please wait.",
                    limit.per_day
                )),
            ));
        }
        None
    }

    /// The daily limit, checked on accepting challenge `id` (lila's `acceptLimitError`).
    pub(crate) fn bot_limit_on_accept(&self, id: &str, user: &str) -> Option<(u16, Value)> {
        let c = self.challenges.get(id)?;
        if c.to != user {
            return None;
        }
        self.bot_limit_reply(user, &c.from)
    }

    pub(crate) fn create_challenge(
        &mut self,
        from: &str,
        to: &str,
        spec: &ChallengeSpec,
    ) -> Result<String, String> {
        let from = from.to_lowercase();
        let to = to.to_lowercase();
        if self.account(&to).is_none() {
            return Err(format!("No such user: {to}"));
        }
        if let Some(fen) = &spec.fen {
            Position::from_fen(fen).map_err(|e| format!("Invalid FEN {fen}: {e}"))?;
        }
        let id = self.new_id();
        let challenger_color = match spec.color.as_str() {
            "white" => Color::White,
            "black" => Color::Black,
            _ if self.rand().is_multiple_of(2) => Color::White,
            _ => Color::Black,
        };
        self.challenges.insert(
            id.clone(),
            ChallengeRec {
                id: id.clone(),
                from: from.clone(),
                to: to.clone(),
                spec: spec.clone(),
                status: "created".into(),
                decline_key: None,
                challenger_color,
            },
        );
        let ev = self.challenge_event("challenge", &id);
        self.send_event(&to, &ev);
        self.send_event(&from, &ev);
        Ok(id)
    }

    pub(crate) fn challenge_status(&self, id: &str) -> Option<(String, Option<String>)> {
        self.challenges
            .get(id)
            .map(|c| (c.status.clone(), c.decline_key.clone()))
    }

    pub(crate) fn cancel_challenge(&mut self, id: &str) -> Result<(), String> {
        let Some(c) = self.challenges.get_mut(id) else {
            return Err("No such challenge".into());
        };
        if c.status != "created" {
            return Err("Challenge is not pending".into());
        }
        c.status = "canceled".into();
        let (from, to) = (c.from.clone(), c.to.clone());
        let ev = self.challenge_event("challengeCanceled", id);
        self.send_event(&to, &ev);
        self.send_event(&from, &ev);
        Ok(())
    }

    pub(crate) fn accept(&mut self, id: &str, user: &str) -> Res<()> {
        let Some(c) = self.challenges.get_mut(id) else {
            return err(404, "Challenge not found");
        };
        if c.to != user || c.status != "created" {
            return err(404, "Challenge not found");
        }
        c.status = "accepted".into();
        let (white, black) = match c.challenger_color {
            Color::White => (c.from.clone(), c.to.clone()),
            Color::Black => (c.to.clone(), c.from.clone()),
        };
        let spec = c.spec.clone();
        // Checked when the challenge was created.
        let start = match &spec.fen {
            Some(fen) => Position::from_fen(fen).map_err(|e| (400, format!("Invalid FEN: {e}")))?,
            None => Position::startpos(),
        };
        let (clock, time) = match (spec.clock, spec.days) {
            (Some((l, i)), _) => (
                Some((i64::from(l) * 1000, i64::from(i) * 1000)),
                i64::from(l) * 1000,
            ),
            (None, Some(d)) => (None, i64::from(d) * 86_400_000),
            (None, None) => (None, i64::from(i32::MAX)),
        };
        let g = GameRec {
            id: id.to_owned(),
            white: white.clone(),
            black: black.clone(),
            rated: spec.rated,
            clock,
            days: if clock.is_none() { spec.days } else { None },
            passed_ms: 0,
            speed: speed_of(spec.clock, spec.days).into(),
            variant: spec.variant.clone(),
            created_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64),
            start,
            initial_fen: spec.fen.clone().unwrap_or_else(|| "startpos".into()),
            moves: Vec::new(),
            game: Game::new(start),
            status: "started".into(),
            winner: None,
            wtime: time,
            btime: time,
            inc: clock.map_or(0, |c| c.1),
            last_change: Instant::now(),
            first_move: self.config.first_move_timeout,
            draw_offer: None,
            takeback_offer: None,
            gone: None,
            subs: Vec::new(),
            chat: Vec::new(),
        };
        self.games.insert(id.to_owned(), g);
        self.game_order.push(id.to_owned());
        for u in [white, black] {
            if let Some(g) = self.games.get(id) {
                let ev = json!({"type": "gameStart", "game": self.game_info(g, &u)});
                self.send_event(&u, &ev);
            }
        }
        Ok(())
    }

    pub(crate) fn decline(&mut self, id: &str, user: &str, reason: &str) -> Res<()> {
        let Some(c) = self.challenges.get_mut(id) else {
            return err(404, "Challenge not found");
        };
        if c.to != user || c.status != "created" {
            return err(404, "Challenge not found");
        }
        c.status = "declined".into();
        c.decline_key = Some(reason.to_lowercase());
        let from = c.from.clone();
        let ev = self.challenge_event("challengeDeclined", id);
        self.send_event(&from, &ev);
        Ok(())
    }
}
