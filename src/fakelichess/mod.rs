//! A local lichess-compatible server speaking the Bot API subset the bot uses (API.md §2-4),
//! with real clocks. `atomic-bot demo` runs the bot against it offline, and the end-to-end
//! tests use it on `127.0.0.1:0`.
//!
//! What it implements: bearer-token accounts, `/api/account`, account upgrade,
//! `/api/account/playing`, the event stream (one per account, a new one closes the old one;
//! `gameStart`/`challenge` replayed on connect; keep-alive blank lines), game streams
//! (`gameFull` first, a `gameState` with the whole move list on every change, closed after the
//! final state), moves validated by `atomic-chess` (castling emitted king-takes-rook like
//! lichess today, both spellings accepted), clocks with increment that start after both first
//! moves, the first-move deadline (abort), flagging, draw and takeback offers, abort, resign,
//! claim-victory, claim-draw, chat, challenge create/accept/decline/cancel (optionally from a
//! FEN, which `gameFull.initialFen` reports), and lichess's 2025-2026 additions:
//! `gameState.expiration` while a first move is pending, `rating` and `ratingDiff` in game
//! events, `nbMyTurn`, and (when asked) the daily bot-versus-bot game limit. It also serves
//! the online move sources (the atomic tablebase, the opening explorer and the cloud eval,
//! `online_tables`) on the same port: the bot's hosts for them are configurable.
//!
//! For tests it can also decorate every JSON document it sends with junk ([`junk`]), inject
//! raw lines, cut or silence streams, make an endpoint answer with a given status a number of
//! times, and record every request; [`faults`] drives those hooks from a seeded schedule (the
//! soak, `tests/soak.rs`). The in-process control methods ([`FakeLichess::play`],
//! [`FakeLichess::challenge`], ...) run the same code as the HTTP handlers.
//!
//! The HTTP side is an axum router (`routes.rs`): one route per [`Endpoint`], each behind the
//! same middleware (lag, junk, request log, token and injected faults), so the handlers only
//! read their extracted path, query or form and call the state.
//!
//! The modules, in the order they depend on each other (each imports only modules above it,
//! besides this facade's [`FakeLichess`] and config types):
//!
//! - what the state holds, knowing nothing of it: `conn` (a stream connection),
//!   `challenge_record`, `game_record`, `log` (a request record), [`junk`] (the decorator),
//!   `http` (the lock, the bearer token, lichess's kinds of answers), `lag` (the lag links);
//! - `state`: `Inner`, everything the server knows, and its shared handle;
//! - the rules, each adding its part of `impl Inner`: `accounts`, `challenges`, `json`,
//!   `games`, `clock`, `streams`; `online_tables` (the online sources' answers);
//! - the HTTP front: `layers` (the lag, junk and log middleware, and `Guarded`, what a layer
//!   knows), `gate` (the token and the queued answers), then `routes` (with
//!   `online_routes`);
//! - beside it, driving a running server: [`faults`] (with `rng` and `bad_lines`) and [`cli`].

mod accounts;
mod bad_lines;
mod challenge_record;
mod challenges;
pub mod cli;
mod clock;
mod conn;
pub mod faults;
mod game_record;
mod games;
mod gate;
mod http;
mod json;
pub mod junk;
mod lag;
mod layers;
mod log;
mod online_routes;
mod online_tables;
mod rng;
mod routes;
mod state;
mod streams;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::lichess::client::Endpoint;
pub use challenge_record::ChallengeSpec;
pub use games::{Castling, GameSnapshot};
use http::lock;
pub use log::RequestRecord;
use state::{Inner, Shared};

/// One account of the fake server.
#[derive(Clone, Debug)]
pub struct FakeAccount {
    /// Lowercase id.
    pub id: String,
    /// Display name.
    pub username: String,
    /// Bearer token.
    pub token: String,
    /// Bot account (title `BOT`).
    pub bot: bool,
}

impl FakeAccount {
    /// An account whose id is the lowercase username.
    pub fn new(username: &str, token: &str, bot: bool) -> Self {
        Self {
            id: username.to_lowercase(),
            username: username.into(),
            token: token.into(),
            bot,
        }
    }
}

/// Server settings.
#[derive(Clone, Debug)]
pub struct FakeConfig {
    /// Accounts.
    pub accounts: Vec<FakeAccount>,
    /// Keep-alive period of streams (lichess: 6-7 s).
    pub keepalive: Duration,
    /// A game without both first moves after this long is aborted.
    pub first_move_timeout: Duration,
    /// How castling is written in move lists.
    pub castling: Castling,
    /// How often clocks, deadlines and keep-alives are checked (25 ms). A test that lets days
    /// pass in tokio's paused time raises it, so each simulated second costs few wake-ups.
    pub tick: Duration,
}

impl Default for FakeConfig {
    fn default() -> Self {
        Self {
            accounts: Vec::new(),
            keepalive: Duration::from_secs(6),
            first_move_timeout: Duration::from_secs(25),
            castling: Castling::KingTakesRook,
            tick: Duration::from_millis(25),
        }
    }
}

/// A running fake server; stops when dropped or on [`FakeLichess::stop`].
pub struct FakeLichess {
    addr: SocketAddr,
    shared: Shared,
    stop: CancellationToken,
}

impl Drop for FakeLichess {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl FakeLichess {
    /// Starts on `127.0.0.1:0`.
    pub async fn start(config: FakeConfig) -> std::io::Result<FakeLichess> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        Self::start_on(listener, config)
    }

    /// Starts on a bound listener.
    pub fn start_on(listener: TcpListener, config: FakeConfig) -> std::io::Result<FakeLichess> {
        let addr = listener.local_addr()?;
        let (keepalive, period) = (config.keepalive, config.tick);
        let shared = Arc::new(Mutex::new(Inner::new(config)));
        let stop = CancellationToken::new();
        let app = routes::router(&shared);
        let s = stop.clone();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(s.cancelled_owned());
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "fake lichess stopped");
            }
        });
        // Keep-alives and clocks.
        let (s2, sh2) = (stop.clone(), shared.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period.max(Duration::from_millis(1)));
            let mut last_keepalive = tokio::time::Instant::now();
            loop {
                tokio::select! {
                    _ = s2.cancelled() => break,
                    _ = tick.tick() => {}
                }
                let keep = last_keepalive.elapsed() >= keepalive;
                if keep {
                    last_keepalive = tokio::time::Instant::now();
                }
                if let Ok(mut inner) = sh2.lock() {
                    inner.tick(keep);
                }
            }
            if let Ok(mut inner) = sh2.lock() {
                inner.close_all();
            }
        });
        Ok(FakeLichess { addr, shared, stop })
    }

    /// Base URL, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the server (streams end).
    pub fn stop(&self) {
        self.stop.cancel();
        self.with(Inner::close_all);
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        f(&mut lock(&self.shared))
    }

    /// `from` challenges `to` (as `POST /api/challenge/{to}`); returns the challenge id.
    pub fn challenge(&self, from: &str, to: &str, spec: &ChallengeSpec) -> Result<String, String> {
        self.with(|i| i.create_challenge(from, to, spec))
    }

    /// Cancels a challenge (as its challenger).
    pub fn cancel_challenge(&self, id: &str) -> Result<(), String> {
        self.with(|i| i.cancel_challenge(id))
    }

    /// Status of a challenge and its decline reason key (lowercase, as lichess reports it).
    pub fn challenge_status(&self, id: &str) -> Option<(String, Option<String>)> {
        self.with(|i| i.challenge_status(id))
    }

    /// `user` plays `uci` in `game` (as `POST .../move/{uci}`).
    pub fn play(&self, game: &str, user: &str, uci: &str) -> Result<(), String> {
        self.with(|i| i.play(game, user, uci, None))
    }

    /// Lets `by` pass on the running turn of correspondence game `id` at once: tests simulate
    /// days without waiting them (the side to move loses on time once its days are gone).
    pub fn pass_time(&self, id: &str, by: Duration) -> Result<(), String> {
        self.with(|i| i.pass_time(id, by))
    }

    /// `user` offers a draw (`true`) or declines one.
    pub fn draw(&self, game: &str, user: &str, yes: bool) -> Result<(), String> {
        self.with(|i| i.draw(game, user, yes))
    }

    /// `user` proposes (or accepts) a takeback.
    pub fn takeback(&self, game: &str, user: &str, yes: bool) -> Result<(), String> {
        self.with(|i| i.takeback(game, user, yes))
    }

    /// `user` resigns.
    pub fn resign(&self, game: &str, user: &str) -> Result<(), String> {
        self.with(|i| i.resign(game, user))
    }

    /// Tells the other player that `user` left; the win may be claimed after `claim_in`.
    pub fn opponent_gone(&self, game: &str, user: &str, claim_in: Duration) -> Result<(), String> {
        self.with(|i| i.opponent_gone(game, user, claim_in))
    }

    /// A raw line to `user`'s event stream (newline added).
    pub fn push_event_line(&self, user: &str, line: &str) {
        self.with(|i| i.push_event_line(user, line));
    }

    /// A raw line to every stream of `game` (newline added).
    pub fn push_game_line(&self, game: &str, line: &str) {
        self.with(|i| i.push_game_line(game, line));
    }

    /// Cuts every open stream abruptly.
    pub fn cut_streams(&self) {
        self.with(Inner::cut_streams);
    }

    /// Cuts `user`'s event stream abruptly; whether one was open.
    pub fn cut_event_stream(&self, user: &str) -> bool {
        self.with(|i| i.cut_event_stream(user))
    }

    /// Cuts `user`'s streams of `game` abruptly; how many.
    pub fn cut_game_streams(&self, game: &str, user: &str) -> usize {
        self.with(|i| i.cut_game_streams(game, user))
    }

    /// `user`'s open event stream goes silent (socket open, nothing sent, not even
    /// keep-alives) until the client replaces it; whether one was open.
    pub fn silence_event_stream(&self, user: &str) -> bool {
        self.with(|i| i.silence_event_stream(user))
    }

    /// `user`'s open streams of `game` go silent until the client replaces them; how many.
    pub fn silence_game_streams(&self, game: &str, user: &str) -> usize {
        self.with(|i| i.silence_game_streams(game, user))
    }

    /// Answers still queued by [`FakeLichess::fail_next`] for `endpoint`.
    pub fn pending_faults(&self, endpoint: Endpoint) -> usize {
        self.with(|i| i.pending_faults(endpoint))
    }

    /// Drops every answer queued by [`FakeLichess::fail_next`].
    pub fn clear_faults(&self) {
        self.with(Inner::clear_faults);
    }

    /// Whether `user` holds an open event stream that is not silenced.
    pub fn event_stream_live(&self, user: &str) -> bool {
        self.with(|i| i.event_stream_live(user))
    }

    /// Whether `user` holds an open stream of `game` (silenced or not).
    pub fn game_stream_open(&self, game: &str, user: &str) -> bool {
        self.with(|i| i.game_stream_open(game, user))
    }

    /// The current `gameState` of a running `game`, with the fields of the JSON object `extra`
    /// added, to its streams; whether the game was running.
    pub fn push_game_state_with(&self, game: &str, extra: &serde_json::Value) -> bool {
        self.with(|i| i.push_game_state_with(game, extra))
    }

    /// `gameStart` again for each running game of `user`, with the fields of `extra` added
    /// (at the top and inside `game`); how many.
    pub fn push_game_starts_with(&self, user: &str, extra: &serde_json::Value) -> usize {
        self.with(|i| i.push_game_starts_with(user, extra))
    }

    /// The next `n` event-stream connections send nothing at all (not even keep-alives).
    pub fn silence_next_event_streams(&self, n: usize) {
        self.with(|i| i.silent_event_streams += n);
    }

    /// The next `times` requests to `endpoint` get `status` with `body` (sent as JSON when it
    /// is JSON, else as an HTML page), whoever asks.
    pub fn fail_next(&self, endpoint: Endpoint, status: u16, body: &str, times: usize) {
        self.with(|i| i.fail_next(endpoint, status, body, times));
    }

    /// Simulates lichess's daily limit of bot-versus-bot games: once a bot has started
    /// `per_day` games against bots (since the server started: the fake's day never ends),
    /// its challenges to bots and its accepts of bots'
    /// challenges get 429 (400 for the other bot when it is that one's limit), with the body
    /// `{"error", "ratelimit": {"key": "bot.vsBot.day", "seconds": reset_s}}`. Games with
    /// humans are not limited. (The in-process [`FakeLichess::challenge`] skips the check,
    /// like a challenge created before the limit was reached.)
    pub fn limit_bot_games(&self, per_day: usize, reset_s: u64) {
        self.with(|i| i.limit_bot_games(challenge_record::BotLimit { per_day, reset_s }));
    }

    /// From now on every JSON document sent (answers and stream lines) carries seeded junk
    /// that a lichess change could bring, leaving what a bot needs readable (see [`junk`]).
    pub fn junk(&self, seed: u64) {
        self.with(|i| i.junk = Some(junk::Junk::new(seed)));
    }

    /// From now on the online source `endpoint` ([`Endpoint::Tablebase`],
    /// [`Endpoint::Explorer`] or [`Endpoint::CloudEval`]) answers `answer` for the position
    /// `fen` (its move counters aside) instead of its built-in rule; an error names a bad FEN.
    pub fn set_online_answer(
        &self,
        endpoint: Endpoint,
        fen: &str,
        answer: serde_json::Value,
    ) -> Result<(), String> {
        self.with(|i| i.online.set(endpoint, fen, answer))
    }

    /// From now on the online source `endpoint` answers after `delay` (a slow source).
    pub fn delay_online(&self, endpoint: Endpoint, delay: Duration) {
        self.with(|i| i.online.delay(endpoint, delay));
    }

    /// Every request answered so far. A request is logged (with its status) once its answer is
    /// complete, which is after whatever it changed: events it sent to streams, games it made.
    /// A test that sees such an effect and then reads the log waits for the record
    /// (`wait_until`) rather than reading it at once.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.with(|i| i.requests.clone())
    }

    /// Chat lines of a game (`(user, text)`).
    pub fn chat(&self, game: &str) -> Vec<(String, String)> {
        self.with(|i| i.chat_of(game))
    }

    /// A game's current state.
    pub fn game(&self, id: &str) -> Option<GameSnapshot> {
        self.with(|i| i.snapshot(id))
    }

    /// Ids of all games.
    pub fn game_ids(&self) -> Vec<String> {
        self.with(|i| i.game_ids())
    }

    /// Games of `user` that are running (neither finished nor aborted).
    pub fn running_games(&self, user: &str) -> usize {
        self.with(|i| i.running_games(user))
    }

    /// How many event-stream connections `user` opened.
    pub fn event_stream_connections(&self, user: &str) -> usize {
        self.with(|i| i.event_connects.get(user).copied().unwrap_or(0))
    }

    /// Waits until the game is over (or `timeout`).
    pub async fn wait_game_over(&self, id: &str, timeout: Duration) -> Option<GameSnapshot> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(s) = self.game(id)
                && s.is_over()
            {
                return Some(s);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until `cond` holds on the server state (or `timeout`); returns whether it did.
    pub async fn wait_until(
        &self,
        timeout: Duration,
        mut cond: impl FnMut(&FakeLichess) -> bool,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if cond(self) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
