//! The JSON documents the server sends, shaped as lichess's: game states, `gameFull`, the
//! game entries of events and of `/api/account/playing`, challenges.

use atomic_chess::Color;
use serde_json::{Value, json};

use super::challenges::speed_of;
use super::game_record::GameRec;
use super::state::Inner;

impl GameRec {
    pub(super) fn state_json(&self) -> Value {
        let (w, b) = self.times();
        let mut v = json!({
            "type": "gameState",
            "moves": self.moves.join(" "),
            "wtime": w, "btime": b, "winc": self.inc, "binc": self.inc,
            "status": self.status,
        });
        if let Some(c) = self.winner {
            v["winner"] = json!(color_name(c));
        }
        match self.draw_offer {
            Some(Color::White) => v["wdraw"] = json!(true),
            Some(Color::Black) => v["bdraw"] = json!(true),
            None => {}
        }
        match self.takeback_offer {
            Some(Color::White) => v["wtakeback"] = json!(true),
            Some(Color::Black) => v["btakeback"] = json!(true),
            None => {}
        }
        if let Some(e) = self.expiration_json() {
            v["expiration"] = e;
        }
        v
    }

    /// `expiration` while a first move is pending in a game with a clock (lichess aborts the
    /// game after `millisToMove`; `idleMillis` have passed since the last move or the start).
    pub(super) fn expiration_json(&self) -> Option<Value> {
        if self.is_over() || self.moves.len() >= 2 || self.clock.is_none() {
            return None;
        }
        Some(json!({
            "idleMillis": self.last_change.elapsed().as_millis() as u64,
            "millisToMove": self.first_move.as_millis() as u64,
        }))
    }
}

/// `rating` (ours) in game events, and once a rated game is over `ratingDiff` for both
/// sides, like lichess since 2025 (every account is rated 1500; a win is worth 6 points).
fn add_ratings(v: &mut Value, g: &GameRec, ours: Color) {
    v["rating"] = json!(1500);
    if !g.is_over() || !g.rated || g.status == "aborted" {
        return;
    }
    let diff = |c: Color| match g.winner {
        Some(w) if w == c => 6,
        Some(_) => -6,
        None => 0,
    };
    v["ratingDiff"] = json!(diff(ours));
    v["opponent"]["ratingDiff"] = json!(diff(ours.other()));
}

pub(super) fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

fn variant_json(key: &str) -> Value {
    let mut chars = key.chars();
    let name = match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    };
    json!({"key": key, "name": name})
}

impl Inner {
    /// `GET /api/account/playing?nb=…`: `user`'s running games, most urgent first (ours to
    /// move, then by the time left), at most `nb` of them (lichess: 9 by default, 1 to 50);
    /// `nbMyTurn` counts all of them.
    pub(crate) fn playing_json(&self, user: &str, nb: Option<usize>) -> Value {
        let mut games: Vec<Value> = self
            .game_order
            .iter()
            .filter_map(|id| self.games.get(id))
            .filter(|g| !g.is_over() && g.color_of(user).is_some())
            .map(|g| self.game_info(g, user))
            .collect();
        let my_turn = games
            .iter()
            .filter(|g| g["isMyTurn"] == json!(true))
            .count();
        games.sort_by_key(|g| (g["isMyTurn"] != json!(true), g["secondsLeft"].as_i64()));
        games.truncate(nb.unwrap_or(9).clamp(1, 50));
        json!({"nowPlaying": games, "nbMyTurn": my_turn})
    }

    pub(super) fn game_full(&self, g: &GameRec) -> Value {
        let mut v = json!({
            "type": "gameFull", "id": g.id, "variant": variant_json(&g.variant),
            "speed": g.speed, "perf": {"name": "Atomic"}, "rated": g.rated,
            "createdAt": g.created_at,
            "white": self.user_json(&g.white), "black": self.user_json(&g.black),
            "initialFen": g.initial_fen, "state": g.state_json(),
        });
        if let Some((initial, inc)) = g.clock {
            v["clock"] = json!({"initial": initial, "increment": inc});
        }
        if let Some(days) = g.days {
            v["daysPerTurn"] = json!(days);
        }
        v
    }

    pub(super) fn game_info(&self, g: &GameRec, user: &str) -> Value {
        let color = g.color_of(user).unwrap_or(Color::White);
        let opp = g.player(color.other());
        let (w, b) = g.times();
        let ours = if color == Color::White { w } else { b };
        let mut v = json!({
            "fullId": format!("{}abcd", g.id), "gameId": g.id, "id": g.id,
            "fen": g.game.position().to_fen(), "color": color_name(color),
            "lastMove": g.moves.last().cloned().unwrap_or_default(), "source": "friend",
            "status": {"id": 20, "name": g.status}, "variant": variant_json(&g.variant),
            "speed": g.speed, "perf": "atomic", "rated": g.rated, "hasMoved": !g.moves.is_empty(),
            "opponent": {"id": opp, "username": self.account(opp).map_or_else(|| opp.to_owned(), |a| a.username.clone()), "rating": 1500},
            "isMyTurn": g.status == "started" && g.game.position().turn() == color,
            "secondsLeft": ours / 1000,
            "winner": g.winner.map(color_name),
            "compat": {"bot": true, "board": false},
        });
        add_ratings(&mut v, g, color);
        v
    }

    pub(crate) fn challenge_json(&self, id: &str) -> Value {
        let Some(c) = self.challenges.get(id) else {
            return Value::Null;
        };
        let tc = match (c.spec.clock, c.spec.days) {
            (Some((l, i)), _) => {
                json!({"type": "clock", "limit": l, "increment": i, "show": format!("{}+{}", l / 60, i)})
            }
            (None, Some(d)) => json!({"type": "correspondence", "daysPerTurn": d}),
            (None, None) => json!({"type": "unlimited"}),
        };
        let mut v = json!({
            "id": c.id, "url": format!("https://lichess.org/{}", c.id), "status": c.status,
            "challenger": self.user_json(&c.from), "destUser": self.user_json(&c.to),
            "variant": variant_json(&c.spec.variant), "rated": c.spec.rated,
            "speed": speed_of(c.spec.clock, c.spec.days), "timeControl": tc,
            "color": c.spec.color, "finalColor": color_name(c.challenger_color),
            "perf": {"icon": "", "name": "Atomic"},
        });
        if let Some(fen) = &c.spec.fen {
            v["initialFen"] = json!(fen);
        }
        if let Some(k) = &c.decline_key {
            v["declineReasonKey"] = json!(k);
            v["declineReason"] = json!(format!("declined: {k}"));
        }
        v
    }

    pub(super) fn challenge_event(&self, kind: &str, id: &str) -> Value {
        let mut v = json!({"type": kind, "challenge": self.challenge_json(id)});
        if kind == "challenge"
            && let Some(c) = self.challenges.get(id)
        {
            let ultra = speed_of(c.spec.clock, c.spec.days) == "ultraBullet";
            v["compat"] = json!({"bot": !ultra, "board": true});
        }
        v
    }
}
