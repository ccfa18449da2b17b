//! State and rules of the fake server. Everything runs under one mutex, never across an await.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use atomic_chess::{Color, Game, Position, Termination};
use axum::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{FakeAccount, FakeConfig};
use crate::lichess::client::Endpoint;

/// How castling is written in the move lists the server sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Castling {
    /// `e1h1` (lichess since Sept 2025 for Atomic).
    KingTakesRook,
    /// `e1g1` (older lichess).
    KingTwoSquares,
}

/// A challenge to create.
#[derive(Clone, Debug)]
pub struct ChallengeSpec {
    /// Rated game.
    pub rated: bool,
    /// Clock `(limit seconds, increment seconds)`.
    pub clock: Option<(u32, u32)>,
    /// Correspondence days per move (when `clock` is `None`).
    pub days: Option<u32>,
    /// Variant key.
    pub variant: String,
    /// Colour the challenger wants: `white`, `black` or `random`.
    pub color: String,
    /// Starting position as a FEN (lichess's `fen` form field); `None` is the standard start.
    /// Games from a FEN may have Black to move first.
    pub fen: Option<String>,
}

impl Default for ChallengeSpec {
    fn default() -> Self {
        Self {
            rated: false,
            clock: Some((60, 1)),
            days: None,
            variant: "atomic".into(),
            color: "random".into(),
            fen: None,
        }
    }
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

/// An open ND-JSON stream: its lines, and the token that cuts it abruptly.
pub(crate) struct Stream {
    /// Lines as the server sends them (newline included).
    pub(crate) rx: mpsc::UnboundedReceiver<Bytes>,
    /// Cancelled to cut the stream without a final line.
    pub(crate) cut: CancellationToken,
}

/// A result with lichess's error answer: `(status, error text)`.
pub(crate) type Res<T> = Result<T, (u16, String)>;

struct Conn {
    user: String,
    ua: String,
    tx: mpsc::UnboundedSender<Bytes>,
    cut: CancellationToken,
    silent: bool,
}

impl Conn {
    fn send(&self, line: &str) -> bool {
        if self.silent {
            return !self.tx.is_closed();
        }
        let mut b = line.as_bytes().to_vec();
        b.push(b'\n');
        self.tx.send(Bytes::from(b)).is_ok()
    }
}

struct ChallengeRec {
    id: String,
    from: String,
    to: String,
    spec: ChallengeSpec,
    status: String,
    decline_key: Option<String>,
    /// The challenger's colour.
    challenger_color: Color,
}

struct GameRec {
    id: String,
    white: String,
    black: String,
    rated: bool,
    clock: Option<(i64, i64)>,
    speed: String,
    /// Variant key of the challenge (the fake always applies atomic rules; a client sees the
    /// key, so tests can check what a bot does with a game of another variant).
    variant: String,
    created_at: i64,
    /// The starting position (`initialFen`), which takebacks replay from.
    start: Position,
    /// `startpos` or the FEN the game started from, as `gameFull.initialFen` reports it.
    initial_fen: String,
    moves: Vec<String>,
    game: Game,
    status: String,
    winner: Option<Color>,
    wtime: i64,
    btime: i64,
    inc: i64,
    last_change: Instant,
    /// lichess's first-move deadline (for `gameState.expiration`).
    first_move: Duration,
    draw_offer: Option<Color>,
    takeback_offer: Option<Color>,
    gone: Option<(String, Instant)>,
    subs: Vec<Conn>,
    chat: Vec<(String, String)>,
}

impl GameRec {
    fn color_of(&self, user: &str) -> Option<Color> {
        if self.white == user {
            Some(Color::White)
        } else if self.black == user {
            Some(Color::Black)
        } else {
            None
        }
    }

    fn player(&self, c: Color) -> &str {
        match c {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    fn clock_running(&self) -> bool {
        self.status == "started" && self.moves.len() >= 2 && self.clock.is_some()
    }

    /// Remaining times now (the side to move's clock runs).
    fn times(&self) -> (i64, i64) {
        let (mut w, mut b) = (self.wtime, self.btime);
        if self.clock_running() {
            let e = self.last_change.elapsed().as_millis() as i64;
            match self.game.position().turn() {
                Color::White => w -= e,
                Color::Black => b -= e,
            }
        }
        (w.max(0), b.max(0))
    }

    fn state_json(&self) -> Value {
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
    fn expiration_json(&self) -> Option<Value> {
        if self.is_over() || self.moves.len() >= 2 || self.clock.is_none() {
            return None;
        }
        Some(json!({
            "idleMillis": self.last_change.elapsed().as_millis() as u64,
            "millisToMove": self.first_move.as_millis() as u64,
        }))
    }

    fn is_over(&self) -> bool {
        self.status != "started"
    }

    fn broadcast(&mut self, line: &str) {
        self.subs.retain(|c| c.send(line));
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

fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

fn speed_of(clock: Option<(u32, u32)>, days: Option<u32>) -> &'static str {
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

fn variant_json(key: &str) -> Value {
    let mut chars = key.chars();
    let name = match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    };
    json!({"key": key, "name": name})
}

fn err<T>(status: u16, text: &str) -> Res<T> {
    Err((status, text.to_owned()))
}

pub(crate) struct Inner {
    pub(crate) config: FakeConfig,
    event_conns: HashMap<String, Conn>,
    pub(crate) event_connects: HashMap<String, usize>,
    pub(crate) silent_event_streams: usize,
    challenges: HashMap<String, ChallengeRec>,
    games: HashMap<String, GameRec>,
    pub(crate) game_order: Vec<String>,
    /// Answers queued by `fail_next`, by endpoint (`gate.rs`).
    pub(crate) faults: HashMap<Endpoint, VecDeque<(u16, String)>>,
    pub(crate) requests: Vec<super::log::RequestRecord>,
    rng: u64,
    /// Lagged accounts (`lag.rs`).
    pub(crate) lags: super::lag::Lags,
    /// lichess's daily bot-versus-bot game limit, when simulated.
    bot_limit: Option<BotLimit>,
    /// Junk added to every JSON document sent, when asked (`FakeLichess::junk`).
    pub(crate) junk: Option<super::junk::Junk>,
}

/// The daily limit of bot-versus-bot games (lichess: 100 a day per bot, counted at game start
/// for both bots).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BotLimit {
    /// Games a bot may start against bots.
    pub(crate) per_day: usize,
    /// `ratelimit.seconds` answered (time until the reset).
    pub(crate) reset_s: u64,
}

impl Inner {
    pub(crate) fn new(config: FakeConfig) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Self {
            config,
            event_conns: HashMap::new(),
            event_connects: HashMap::new(),
            silent_event_streams: 0,
            challenges: HashMap::new(),
            games: HashMap::new(),
            game_order: Vec::new(),
            faults: HashMap::new(),
            requests: Vec::new(),
            rng: seed | 1,
            lags: super::lag::Lags::default(),
            bot_limit: None,
            junk: None,
        }
    }

    fn rand(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn new_id(&mut self) -> String {
        const A: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        loop {
            let mut x = self.rand();
            let id: String = (0..8)
                .map(|_| {
                    let c = A[(x % A.len() as u64) as usize] as char;
                    x /= A.len() as u64;
                    c
                })
                .collect();
            if !self.games.contains_key(&id) && !self.challenges.contains_key(&id) {
                return id;
            }
        }
    }

    pub(crate) fn account(&self, id: &str) -> Option<&FakeAccount> {
        self.config
            .accounts
            .iter()
            .find(|a| a.id == id.to_lowercase())
    }

    pub(crate) fn user_json(&self, id: &str) -> Value {
        match self.account(id) {
            Some(a) => json!({"id": a.id, "name": a.username,
                "title": if a.bot { json!("BOT") } else { Value::Null }, "rating": 1500}),
            None => json!({"id": id, "name": id, "title": null, "rating": 1500}),
        }
    }

    /// Simulates lichess's daily bot-game limit from now on.
    pub(crate) fn limit_bot_games(&mut self, limit: BotLimit) {
        self.bot_limit = Some(limit);
    }

    /// Bot-versus-bot games `user` started (counted while a limit is simulated or not).
    fn bot_games_of(&self, user: &str) -> usize {
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

    /// The account id of a bearer token.
    pub(crate) fn user_of_token(&self, token: Option<&str>) -> Option<String> {
        let token = token?;
        self.config
            .accounts
            .iter()
            .find(|a| a.token == token)
            .map(|a| a.id.clone())
    }

    /// `GET /api/account`.
    pub(crate) fn account_json(&self, user: &str) -> Value {
        let mut v = self.user_json(user);
        v["username"] = v["name"].clone();
        v
    }

    /// `GET /api/account/playing`: `user`'s running games.
    pub(crate) fn playing_json(&self, user: &str) -> Value {
        let games: Vec<Value> = self
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
        json!({"nowPlaying": games, "nbMyTurn": my_turn})
    }

    /// `GET /api/bot/online`: the other bot accounts, as lichess's ND-JSON user list
    /// (matchmaking).
    pub(crate) fn online_lines(&self, user: &str) -> String {
        self.config
            .accounts
            .iter()
            .filter(|a| a.bot && a.id != user)
            .map(|a| {
                let u = json!({"id": a.id, "username": a.username, "title": "BOT",
                    "perfs": {"atomic": {"games": 10, "rating": 1500, "rd": 60, "prog": 0}}});
                format!("{u}\n")
            })
            .collect()
    }

    pub(crate) fn upgrade(&mut self, user: &str) -> Res<()> {
        if self.games.values().any(|g| g.color_of(user).is_some()) {
            return err(400, "This account has already played games");
        }
        match self.config.accounts.iter_mut().find(|a| a.id == user) {
            Some(a) => {
                a.bot = true;
                Ok(())
            }
            None => err(404, "No such user"),
        }
    }

    pub(crate) fn open_event_stream(&mut self, user: &str, ua: &str) -> Stream {
        *self.event_connects.entry(user.to_owned()).or_default() += 1;
        if let Some(old) = self.event_conns.remove(user) {
            old.cut.cancel();
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let cut = CancellationToken::new();
        let silent = self.silent_event_streams > 0;
        if silent {
            self.silent_event_streams -= 1;
        }
        let conn = Conn {
            user: user.to_owned(),
            ua: ua.to_owned(),
            tx,
            cut: cut.clone(),
            silent,
        };
        // Replay: ongoing games, then pending incoming challenges.
        for id in &self.game_order {
            if let Some(g) = self.games.get(id)
                && !g.is_over()
                && g.color_of(user).is_some()
            {
                conn.send(
                    &json!({"type": "gameStart", "game": self.game_info(g, user)}).to_string(),
                );
            }
        }
        let mut pending: Vec<&ChallengeRec> = self
            .challenges
            .values()
            .filter(|c| c.to == user && c.status == "created")
            .collect();
        pending.sort_by(|a, b| a.id.cmp(&b.id));
        for c in pending {
            conn.send(&self.challenge_event("challenge", &c.id).to_string());
        }
        self.event_conns.insert(user.to_owned(), conn);
        Stream { rx, cut }
    }

    pub(crate) fn open_game_stream(&mut self, user: &str, ua: &str, id: &str) -> Res<Stream> {
        let full = {
            let Some(g) = self.games.get(id) else {
                return err(404, "No such game");
            };
            if g.color_of(user).is_none() {
                return err(404, "Not your game");
            }
            self.game_full(g)
        };
        let Some(g) = self.games.get_mut(id) else {
            return err(404, "No such game");
        };
        // Same game, same user and User-Agent: the older stream is closed (like lila).
        g.subs.retain(|c| {
            let same = c.user == user && c.ua == ua;
            if same {
                c.cut.cancel();
            }
            !same
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let cut = CancellationToken::new();
        let conn = Conn {
            user: user.to_owned(),
            ua: ua.to_owned(),
            tx,
            cut: cut.clone(),
            silent: false,
        };
        conn.send(&full.to_string());
        if !g.is_over() {
            g.subs.push(conn);
        }
        Ok(Stream { rx, cut })
    }

    fn game_full(&self, g: &GameRec) -> Value {
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
        v
    }

    fn game_info(&self, g: &GameRec, user: &str) -> Value {
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
            "opponent": {"id": opp, "username": self.account(opp).map(|a| a.username.clone()).unwrap_or_else(|| opp.to_owned()), "rating": 1500},
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

    fn challenge_event(&self, kind: &str, id: &str) -> Value {
        let mut v = json!({"type": kind, "challenge": self.challenge_json(id)});
        if kind == "challenge"
            && let Some(c) = self.challenges.get(id)
        {
            let ultra = speed_of(c.spec.clock, c.spec.days) == "ultraBullet";
            v["compat"] = json!({"bot": !ultra, "board": true});
        }
        v
    }

    fn send_event(&mut self, user: &str, v: &Value) {
        let line = v.to_string();
        if let Some(c) = self.event_conns.get(user)
            && !c.send(&line)
        {
            self.event_conns.remove(user);
        }
    }

    pub(crate) fn push_event_line(&mut self, user: &str, line: &str) {
        if let Some(c) = self.event_conns.get(user) {
            c.send(line);
        }
    }

    pub(crate) fn push_game_line(&mut self, game: &str, line: &str) {
        if let Some(g) = self.games.get_mut(game) {
            g.broadcast(line);
        }
    }

    pub(crate) fn cut_streams(&mut self) {
        for (_, c) in self.event_conns.drain() {
            c.cut.cancel();
        }
        for g in self.games.values_mut() {
            for c in g.subs.drain(..) {
                c.cut.cancel();
            }
        }
    }

    pub(crate) fn close_all(&mut self) {
        self.cut_streams();
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
            speed: speed_of(spec.clock, spec.days).into(),
            variant: spec.variant.clone(),
            created_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0),
            start,
            initial_fen: spec.fen.clone().unwrap_or_else(|| "startpos".into()),
            moves: Vec::new(),
            game: Game::new(start),
            status: "started".into(),
            winner: None,
            wtime: time,
            btime: time,
            inc: clock.map(|c| c.1).unwrap_or(0),
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

    fn game_mut(&mut self, id: &str, user: &str) -> Result<(&mut GameRec, Color), String> {
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

    fn finish(&mut self, id: &str, status: &str, winner: Option<Color>) {
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
            .map(|a| a.username.clone())
            .unwrap_or_else(|| user.to_owned());
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

    pub(crate) fn game_ids(&self) -> Vec<String> {
        self.game_order.clone()
    }

    pub(crate) fn running_games(&self, user: &str) -> usize {
        self.games
            .values()
            .filter(|g| !g.is_over() && g.color_of(user).is_some())
            .count()
    }

    /// Keep-alives, dead connections, first-move deadlines and flags.
    pub(crate) fn tick(&mut self, keepalive: bool) {
        if keepalive {
            self.event_conns.retain(|_, c| c.send(""));
            for g in self.games.values_mut() {
                g.subs.retain(|c| c.send(""));
            }
        } else {
            self.event_conns.retain(|_, c| !c.tx.is_closed());
        }
        let first_move = self.config.first_move_timeout;
        let mut ends = Vec::new();
        for g in self.games.values() {
            if g.is_over() {
                continue;
            }
            if g.moves.len() < 2 {
                // Like lila (`expirable` needs a clock): games without one never expire.
                if g.clock.is_some() && g.last_change.elapsed() > first_move {
                    ends.push((g.id.clone(), "aborted", None));
                }
            } else if g.clock.is_some() {
                let (w, b) = g.times();
                let turn = g.game.position().turn();
                let left = if turn == Color::White { w } else { b };
                if left <= 0 {
                    ends.push((g.id.clone(), "outoftime", Some(turn.other())));
                }
            }
        }
        for (id, status, winner) in ends {
            self.finish(&id, status, winner);
        }
    }
}

/// Hooks of the fault injector (`super::faults`): targeted cuts and silences of live streams,
/// and real lines with fields lichess might add one day. They act on the connections as they
/// are now; what lichess does on its own (keep-alives, replays) is left to the rest of `Inner`.
impl Inner {
    /// Cuts `user`'s event stream; whether one was open.
    pub(crate) fn cut_event_stream(&mut self, user: &str) -> bool {
        match self.event_conns.remove(user) {
            Some(c) => {
                c.cut.cancel();
                true
            }
            None => false,
        }
    }

    /// Cuts `user`'s streams of `game`; how many.
    pub(crate) fn cut_game_streams(&mut self, game: &str, user: &str) -> usize {
        let Some(g) = self.games.get_mut(game) else {
            return 0;
        };
        let before = g.subs.len();
        g.subs.retain(|c| {
            let hit = c.user == user;
            if hit {
                c.cut.cancel();
            }
            !hit
        });
        before - g.subs.len()
    }

    /// From now on `user`'s open event stream sends nothing (socket open, no keep-alive), until
    /// the client replaces it; whether one was open.
    pub(crate) fn silence_event_stream(&mut self, user: &str) -> bool {
        match self.event_conns.get_mut(user) {
            Some(c) if !c.tx.is_closed() => {
                c.silent = true;
                true
            }
            _ => false,
        }
    }

    /// The same for `user`'s streams of `game`; how many.
    pub(crate) fn silence_game_streams(&mut self, game: &str, user: &str) -> usize {
        let Some(g) = self.games.get_mut(game) else {
            return 0;
        };
        let mut n = 0;
        for c in g.subs.iter_mut().filter(|c| c.user == user) {
            c.silent = true;
            n += 1;
        }
        n
    }

    /// Whether `user` holds an open event stream that is not silenced.
    pub(crate) fn event_stream_live(&self, user: &str) -> bool {
        self.event_conns
            .get(user)
            .is_some_and(|c| !c.silent && !c.tx.is_closed())
    }

    /// Whether `user` holds an open stream of `game` (silenced or not: lichess counts a
    /// player as connected while its socket is open).
    pub(crate) fn game_stream_open(&self, game: &str, user: &str) -> bool {
        self.games
            .get(game)
            .is_some_and(|g| g.subs.iter().any(|c| c.user == user && !c.tx.is_closed()))
    }

    /// The current `gameState` of a running `game` with `extra`'s fields added, to its streams;
    /// whether the game was running.
    pub(crate) fn push_game_state_with(&mut self, game: &str, extra: &Value) -> bool {
        let Some(g) = self.games.get_mut(game).filter(|g| !g.is_over()) else {
            return false;
        };
        let mut v = g.state_json();
        merge_fields(&mut v, extra);
        g.broadcast(&v.to_string());
        true
    }

    /// `gameStart` again (as on a reconnect) for each running game of `user`, with `extra`'s
    /// fields added at the top and inside `game`; how many.
    pub(crate) fn push_game_starts_with(&mut self, user: &str, extra: &Value) -> usize {
        let mut lines = Vec::new();
        for id in &self.game_order {
            if let Some(g) = self.games.get(id)
                && !g.is_over()
                && g.color_of(user).is_some()
            {
                let mut game = self.game_info(g, user);
                merge_fields(&mut game, extra);
                let mut v = json!({"type": "gameStart", "game": game});
                merge_fields(&mut v, extra);
                lines.push(v.to_string());
            }
        }
        if let Some(c) = self.event_conns.get(user) {
            for l in &lines {
                c.send(l);
            }
        }
        lines.len()
    }
}

/// Adds the fields of the object `extra` to the object `v` (existing fields are kept).
fn merge_fields(v: &mut Value, extra: &Value) {
    if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in extra {
            v.entry(k.clone()).or_insert_with(|| x.clone());
        }
    }
}
