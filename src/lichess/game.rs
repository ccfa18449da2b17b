//! One game: a task that owns the game stream, rebuilds the position from the full move list
//! on every `gameState`, thinks on a blocking thread with a stop flag and a deadline, and posts
//! exactly one move per turn.
//!
//! The turn rule ("never two moves for one turn"): a move is searched only when the game is
//! running, it is our turn, no search or move request is in flight, and the current move list
//! differs from the last one we answered. A `gameState` that only carries a draw or takeback
//! offer has the same list, so it triggers nothing; a takeback shortens the list, which makes it
//! our turn on a new list; a 400 on the move POST forgets the answered list and re-syncs by
//! reopening the stream (whose first line is a fresh `gameFull`), searching again only once
//! that state arrives (or after a short wait, so a stream that cannot be reopened never
//! stalls the game).
//!
//! Everything the task waits for (stream lines, the search, the move POST, the abort and
//! claim-victory timers, the quit signal) is one `select!`, so a search never stops the task from
//! reading the stream and a slow POST never blocks a takeback.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atomic_chess::{Color, Game, Position};
use backon::BackoffBuilder;
use futures_util::future::BoxFuture;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, info, warn};

use crate::config::{DrawPolicy, Engine, GameSettings, Settings, ShutdownMode};
use crate::lichess::chat_commands::{ChatContext, ChatResponder, EvalReport, QueueReport, Room};
use crate::lichess::client::{ApiError, BodyReader, LichessClient};
use crate::lichess::clock::{TurnClock, budget};
use crate::lichess::model::{Account, GameEvent, GameFull, GameState};
use crate::lichess::ndjson::{Line, StreamEnd};
use crate::lichess::pgn;
use crate::lichess::picker::{Budget, MovePicker, Pick, PickerFactory, Proven, SimplePicker};
use crate::telemetry::{GameResult, GameStats, GameSummary};

/// Shared by all game tasks of one bot.
#[derive(Clone)]
pub struct GameContext {
    /// The API client.
    pub client: LichessClient,
    /// The configuration.
    pub settings: Arc<Settings>,
    /// Our account (id is lowercase).
    pub me: Arc<Account>,
    /// Creates a move picker per game.
    pub pickers: Arc<dyn PickerFactory>,
    /// Games currently running (for the CPU share of each search).
    pub running: Arc<AtomicUsize>,
    /// Turn latency samples (receive → move request leaves, minus think time).
    pub metrics: Arc<Metrics>,
}

/// Measurements for the benchmark.
#[derive(Debug, Default)]
pub struct Metrics {
    turn_overheads: Mutex<Vec<Duration>>,
}

impl Metrics {
    /// Records one turn's overhead.
    pub fn record(&self, d: Duration) {
        if let Ok(mut v) = self.turn_overheads.lock() {
            v.push(d);
        }
    }

    /// All samples so far.
    pub fn samples(&self) -> Vec<Duration> {
        self.turn_overheads
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }
}

/// How a game task ended.
#[derive(Clone, Debug, PartialEq)]
pub struct GameReport {
    /// Game id.
    pub id: String,
    /// Final status name (`mate`, `variantEnd`, ...) or why the task gave up.
    pub status: String,
    /// Winner colour, if any.
    pub winner: Option<String>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
    /// PGN of the game (when it finished normally).
    pub pgn: Option<String>,
    /// Set when the token was rejected: the bot must stop.
    pub fatal: Option<String>,
}

type ThinkOut = (Box<dyn MovePicker>, Option<Pick>, Duration);

enum Job {
    Think {
        handle: JoinHandle<ThinkOut>,
        stop: Arc<AtomicBool>,
        /// The move list this search answers.
        key: String,
        deadline: Instant,
        /// The deadline already passed once (stop flag set).
        stopped: bool,
        /// When the line that made it our turn was read.
        received: Instant,
    },
    Ponder {
        /// The ponder thread sends the picker back when it stops.
        handle: tokio::sync::oneshot::Receiver<Box<dyn MovePicker>>,
        stop: Arc<AtomicBool>,
    },
}

enum Ev {
    Connected(Result<BodyReader, ApiError>),
    Line(Result<Line<GameEvent>, StreamEnd>, Instant),
    Thought(Result<ThinkOut, tokio::task::JoinError>),
    Pondered(Result<Box<dyn MovePicker>, tokio::sync::oneshot::error::RecvError>),
    ThinkDeadline,
    Posted(Result<(), ApiError>),
    Timer,
    Quit,
    Reconnect,
}

/// Grace after the hard deadline before a stuck picker is abandoned.
const STUCK_GRACE: Duration = Duration::from_millis(250);
/// Delay after the `opponentGone` countdown before claiming the win.
const CLAIM_MARGIN: Duration = Duration::from_millis(500);
/// Give up on a turn after this many rejected moves.
const MAX_REJECTED: u32 = 3;
/// After a rejected move, how long to wait for the reopened stream's `gameFull` before
/// searching the position we have anyway. Reopening takes one round trip on lichess; this only
/// fires when the stream cannot be reopened, so the game goes on (our clock is running).
const RESYNC_WAIT: Duration = Duration::from_secs(1);

struct Task {
    ctx: GameContext,
    id: String,
    picker: Option<Box<dyn MovePicker>>,
    full: Option<GameFull>,
    color: Option<Color>,
    start: Position,
    state: Option<GameState>,
    game: Option<Game>,
    answered: Option<String>,
    /// The move list last pondered on.
    pondered: Option<String>,
    win_probability: f32,
    draw_answered: Option<usize>,
    takeback_answered: Option<usize>,
    greeted: bool,
    abort_at: Option<(Instant, usize)>,
    claim_at: Option<Instant>,
    rejected: (usize, u32),
    /// A move was rejected (400) and the stream is being reopened: no search until a state
    /// arrives (it may show the game moved on or ended) or this deadline passes.
    resync_until: Option<Instant>,
    job: Option<Job>,
    /// The move POST in flight and the list it answers.
    post: Option<(BoxFuture<'static, Result<(), ApiError>>, String)>,
    reader: Option<BodyReader>,
    connecting: Option<BoxFuture<'static, Result<BodyReader, ApiError>>>,
    reconnect_at: Option<Instant>,
    connected_at: Instant,
    backoff: Box<dyn Iterator<Item = Duration> + Send>,
    quitting: Option<Instant>,
    received: Instant,
    /// Our searched moves (think time, nodes) for the summary line.
    stats: GameStats,
    /// The latest evaluation, for `!eval`.
    eval: Option<EvalReport>,
    /// Chat command state (cooldowns).
    chat: ChatResponder,
    /// When the line that made it our turn was read and how long we thought, for the move
    /// latency histogram once the move POST answers.
    post_timing: Option<(Instant, Duration)>,
}

/// Plays the game `id` to its end. `quit` asks to abort/resign it (shutdown mode).
pub async fn play_game(ctx: GameContext, id: String, quit: CancellationToken) -> GameReport {
    let _running = ctx.client.metrics().game_started();
    let span = crate::telemetry::game_span(&id);
    let mut task = Task::new(ctx, id);
    tracing::Instrument::instrument(task.run(quit), span).await
}

fn reconnect_backoff(
    s: &crate::config::LichessSettings,
) -> Box<dyn Iterator<Item = Duration> + Send> {
    Box::new(
        backon::ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(s.reconnect_min_ms))
            .with_max_delay(Duration::from_millis(s.reconnect_max_ms))
            .without_max_times()
            .with_jitter()
            .build(),
    )
}

impl Task {
    fn new(ctx: GameContext, id: String) -> Self {
        let backoff = reconnect_backoff(&ctx.settings.lichess);
        let mut picker = ctx.pickers.create(hash_share(&ctx.settings));
        picker.new_game();
        Task {
            id,
            picker: Some(picker),
            full: None,
            color: None,
            start: Position::startpos(),
            state: None,
            game: None,
            answered: None,
            pondered: None,
            win_probability: 0.5,
            draw_answered: None,
            takeback_answered: None,
            greeted: false,
            abort_at: None,
            claim_at: None,
            rejected: (usize::MAX, 0),
            resync_until: None,
            job: None,
            post: None,
            reader: None,
            connecting: None,
            reconnect_at: Some(Instant::now()),
            connected_at: Instant::now(),
            backoff,
            quitting: None,
            received: Instant::now(),
            stats: GameStats::default(),
            eval: None,
            chat: ChatResponder::new(&ctx.me.username, ctx.settings.chat.cooldown()),
            post_timing: None,
            ctx,
        }
    }

    fn report(&self, status: &str, fatal: Option<String>) -> GameReport {
        GameReport {
            id: self.id.clone(),
            status: status.into(),
            winner: self.state.as_ref().and_then(|s| s.winner.clone()),
            result: self
                .state
                .as_ref()
                .map(|s| pgn::result_token(s).to_owned())
                .unwrap_or_else(|| "*".into()),
            pgn: None,
            fatal,
        }
    }

    async fn run(&mut self, quit: CancellationToken) -> GameReport {
        loop {
            if self.reader.is_none()
                && self.connecting.is_none()
                && self.reconnect_at.is_some_and(|t| t <= Instant::now())
            {
                self.reconnect_at = None;
                let client = self.ctx.client.clone();
                let id = self.id.clone();
                self.connecting = Some(Box::pin(async move { client.stream_game(&id).await }));
            }
            let timer = self.next_timer();
            let think_deadline = match &self.job {
                Some(Job::Think { deadline, .. }) => Some(*deadline),
                _ => None,
            };
            let quit_pending = self.quitting.is_none();
            let ev = tokio::select! {
                r = async { match &mut self.connecting { Some(f) => f.await, None => std::future::pending().await } } => Ev::Connected(r),
                r = async {
                    match &mut self.reader {
                        Some(rd) => {
                            let line = rd.next::<GameEvent>().await;
                            (line, Instant::from_std(rd.line_at()))
                        }
                        None => std::future::pending().await,
                    }
                } => Ev::Line(r.0, r.1),
                r = async {
                    match &mut self.job {
                        Some(Job::Think { handle, .. }) => Ev::Thought(handle.await),
                        Some(Job::Ponder { handle, .. }) => Ev::Pondered(handle.await),
                        None => std::future::pending().await,
                    }
                } => r,
                _ = sleep_opt(think_deadline) => Ev::ThinkDeadline,
                r = async { match &mut self.post { Some((f, _)) => f.await, None => std::future::pending().await } } => Ev::Posted(r),
                _ = sleep_opt(timer) => Ev::Timer,
                _ = sleep_opt(self.reconnect_at), if self.reader.is_none() && self.connecting.is_none() => Ev::Reconnect,
                _ = quit.cancelled(), if quit_pending => Ev::Quit,
            };
            match ev {
                Ev::Connected(r) => {
                    self.connecting = None;
                    match r {
                        Ok(reader) => {
                            self.reader = Some(reader);
                            self.connected_at = Instant::now();
                        }
                        Err(e @ ApiError::Unauthorized { .. }) => {
                            return self.leave("unauthorized", Some(e.to_string()));
                        }
                        Err(
                            e @ ApiError::Status {
                                status: 400 | 404, ..
                            },
                        ) => {
                            warn!(error = %e, "game stream refused: the game is gone");
                            return self.leave("gone", None);
                        }
                        Err(e) => {
                            let delay = self.backoff.next().unwrap_or(Duration::from_secs(1));
                            warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "cannot open the game stream");
                            self.reconnect_at = Some(Instant::now() + delay);
                        }
                    }
                }
                Ev::Line(r, at) => match r {
                    Ok(Line::KeepAlive) => {}
                    Ok(Line::Item(ev, kind)) => {
                        self.received = at;
                        if let Some(done) = self.on_event(ev, kind).await {
                            return done;
                        }
                    }
                    Ok(Line::Unknown { kind }) => {
                        debug!(?kind, "unknown game stream line ignored");
                    }
                    Ok(Line::Malformed { excerpt, error }) => {
                        warn!(%excerpt, %error, "malformed game stream line skipped");
                    }
                    Err(end) => {
                        self.reader = None;
                        if self.connected_at.elapsed()
                            >= Duration::from_millis(self.ctx.settings.lichess.healthy_after_ms)
                        {
                            self.backoff = reconnect_backoff(&self.ctx.settings.lichess);
                        }
                        let delay = self.backoff.next().unwrap_or(Duration::from_secs(1));
                        info!(reason = %end, retry_in_ms = delay.as_millis() as u64, "game stream ended, reconnecting");
                        self.reconnect_at = Some(Instant::now() + delay);
                    }
                },
                Ev::Thought(r) => self.on_thought(r),
                Ev::Pondered(r) => {
                    self.job = None;
                    if let Ok(p) = r {
                        self.picker = Some(p);
                    }
                    self.act();
                }
                Ev::ThinkDeadline => self.on_think_deadline(),
                Ev::Posted(r) => {
                    if let Some(done) = self.on_posted(r) {
                        return done;
                    }
                }
                Ev::Timer => self.on_timer(),
                Ev::Quit => {
                    self.quitting = Some(Instant::now());
                    self.quit_game();
                }
                Ev::Reconnect => {}
            }
            if let Some(t) = self.quitting
                && t.elapsed() > Duration::from_secs(15)
            {
                warn!("no final state after abort/resign; leaving the game");
                return self.leave("left", None);
            }
        }
    }

    fn next_timer(&self) -> Option<Instant> {
        let quit_check = self.quitting.map(|t| t + Duration::from_secs(16));
        [
            self.abort_at.map(|(t, _)| t),
            self.claim_at,
            quit_check,
            self.resync_until,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Handles one game stream item; `Some` when the game is over.
    async fn on_event(&mut self, ev: GameEvent, kind: Option<String>) -> Option<GameReport> {
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

    fn chat_text(&self, template: &str, full: &GameFull) -> String {
        let opponent = match self.color {
            Some(Color::White) => full.black.display(),
            _ => full.white.display(),
        };
        template
            .replace("{me}", &self.ctx.me.username)
            .replace("{opponent}", &opponent)
    }

    fn spawn_chat(&self, text: String) {
        self.spawn_chat_in(Room::Player, text);
    }

    /// Answers a chat command (`lichess::chat_commands`) in the room it was asked in.
    fn answer_chat(&mut self, room: &str, user: &str, text: &str) {
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

    fn spawn_chat_in(&self, room: Room, text: String) {
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

    fn spawn_action(&self, what: &'static str) {
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

    async fn on_state(&mut self, state: GameState) -> Option<GameReport> {
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

    /// Starts a search or a ponder when the turn rule allows it.
    fn act(&mut self) {
        let (Some(state), Some(game), Some(color)) = (&self.state, &self.game, self.color) else {
            return;
        };
        if state.is_terminal() || self.quitting.is_some() {
            return;
        }
        let key = state.moves.trim().to_owned();
        let our_turn = game.position().turn() == color;
        if let Some(Job::Ponder { stop, .. }) = &self.job {
            if our_turn {
                stop.store(true, Ordering::Relaxed);
            }
            return;
        }
        if self.job.is_some() {
            return;
        }
        let picker = match self.picker.take() {
            Some(p) => p,
            None => self.ctx.pickers.create(hash_share(&self.ctx.settings)),
        };
        if our_turn
            && self.post.is_none()
            && self.resync_until.is_none()
            && self.answered.as_deref() != Some(key.as_str())
        {
            let (ours, inc) = match color {
                Color::White => (state.wtime, state.winc),
                Color::Black => (state.btime, state.binc),
            };
            let turn = TurnClock {
                remaining_ms: ours,
                increment_ms: inc,
                ply: u32::try_from(game.moves().len()).unwrap_or(u32::MAX),
                first_move: game.moves().len() < 2,
                first_move_left: state.expiration.map(|e| e.left()),
                clocked: self.full.as_ref().is_some_and(|f| f.clock.is_some()),
            };
            let mut budget = budget(
                &self.ctx.settings.game,
                &turn,
                self.ctx.running.load(Ordering::Relaxed),
                self.ctx.settings.search.threads,
            );
            // Our clock has run since the line that made it our turn was read (stopping a
            // ponder, a re-sync): that time comes out of this move's budget, not the reserve.
            let spent = self.received.elapsed();
            budget.soft = budget.soft.saturating_sub(spent);
            budget.hard = budget.hard.saturating_sub(spent);
            let stop = Arc::new(AtomicBool::new(false));
            let flag = stop.clone();
            let game = game.clone();
            let mut picker = picker;
            let handle = tokio::task::spawn_blocking(move || {
                lower_thread_priority();
                let t = std::time::Instant::now();
                let pick = picker.pick(&game, &budget, &flag);
                (picker, pick, t.elapsed())
            });
            debug!(
                soft_ms = budget.soft.as_millis() as u64,
                hard_ms = budget.hard.as_millis() as u64,
                "thinking"
            );
            self.answered = Some(key.clone());
            self.job = Some(Job::Think {
                handle,
                stop,
                key,
                deadline: Instant::now() + budget.hard + Duration::from_millis(20),
                stopped: false,
                received: self.received,
            });
        } else if !our_turn
            && self.ctx.settings.game.ponder
            && self.ctx.running.load(Ordering::Relaxed) <= 1
            && !game.moves().is_empty()
            && self.pondered.as_deref() != Some(key.as_str())
        {
            // Once per position: a ponder that returns early (tree full, root proven) must not
            // be restarted in a loop.
            self.pondered = Some(key.clone());
            let stop = Arc::new(AtomicBool::new(false));
            let flag = stop.clone();
            let game = game.clone();
            let mut picker = picker;
            let (tx, handle) = tokio::sync::oneshot::channel();
            // Its own thread at normal priority (not the reniced blocking pool): pondering only
            // runs with a single game, and it must notice `stop` at once when our turn comes,
            // even on a loaded machine (a reniced ponder thread took ~100 ms to stop there).
            let spawned = std::thread::Builder::new()
                .name("ponder".into())
                .spawn(move || {
                    picker.ponder(&game, &flag);
                    let _ = tx.send(picker);
                });
            match spawned {
                Ok(_) => self.job = Some(Job::Ponder { handle, stop }),
                Err(e) => warn!(error = %e, "cannot start the ponder thread"),
            }
        } else {
            self.picker = Some(picker);
        }
    }

    fn on_thought(&mut self, r: Result<ThinkOut, tokio::task::JoinError>) {
        let Some(Job::Think { key, received, .. }) = self.job.take() else {
            return;
        };
        let (pick, think) = match r {
            Ok((picker, pick, think)) => {
                self.picker = Some(picker);
                (pick, think)
            }
            Err(e) => {
                warn!(error = %e, "the move picker failed; playing a fallback move");
                (None, Duration::ZERO)
            }
        };
        let current = self.state.as_ref().map(|s| s.moves.trim().to_owned());
        if current.as_deref() != Some(key.as_str()) {
            // The position changed while thinking (takeback): forget this answer.
            if self.answered.as_deref() == Some(key.as_str()) {
                self.answered = None;
            }
            self.act();
            return;
        }
        let pick = pick.or_else(|| self.fallback_pick());
        let Some(pick) = pick else {
            warn!("no legal move");
            return;
        };
        self.win_probability = pick.win_probability;
        let eval = self
            .picker
            .as_ref()
            .and_then(|p| p.last_eval())
            .unwrap_or_else(|| EvalReport {
                win_probability: Some(pick.win_probability),
                pv: vec![pick.mv.to_string()],
                ..EvalReport::default()
            });
        self.stats.record_move(think, eval.nodes);
        self.eval = Some(eval);
        if pick.proven == Some(Proven::Loss) && self.ctx.settings.game.resign_proven_loss {
            info!("proven loss: resigning");
            self.spawn_action("resign");
            return;
        }
        self.post_move(pick, key, received, think);
    }

    fn fallback_pick(&self) -> Option<Pick> {
        let game = self.game.as_ref()?;
        let budget = Budget {
            soft: Duration::ZERO,
            hard: Duration::ZERO,
            threads: 1,
        };
        SimplePicker::default().pick(game, &budget, &AtomicBool::new(false))
    }

    fn post_move(&mut self, pick: Pick, key: String, received: Instant, think: Duration) {
        let uci = pick.mv.to_string();
        self.post_timing = Some((received, think));
        let client = self.ctx.client.clone();
        let id = self.id.clone();
        let metrics = self.ctx.metrics.clone();
        let win = pick.win_probability;
        self.post = Some((
            Box::pin(async move {
                // Measured as the request leaves: everything but the think time is overhead.
                let overhead = received.elapsed().saturating_sub(think);
                metrics.record(overhead);
                info!(mv = %uci, think_ms = think.as_millis() as u64,
                    overhead_us = overhead.as_micros() as u64, win, "move");
                client.make_move(&id, &uci, None).await
            }),
            key,
        ));
    }

    fn on_think_deadline(&mut self) {
        let Some(Job::Think {
            stop,
            deadline,
            stopped,
            ..
        }) = &mut self.job
        else {
            return;
        };
        stop.store(true, Ordering::Relaxed);
        if !*stopped {
            *stopped = true;
            *deadline += STUCK_GRACE;
            return;
        }
        // The picker ignores its stop flag: abandon it (a new one is created) and play now.
        let Some(Job::Think { key, received, .. }) = self.job.take() else {
            return;
        };
        warn!("move picker missed its deadline; playing a fallback move");
        if let Some(pick) = self.fallback_pick() {
            self.post_move(pick, key, received, Duration::ZERO);
        }
    }

    fn on_posted(&mut self, r: Result<(), ApiError>) -> Option<GameReport> {
        let (_, key) = self.post.take()?;
        let timing = self.post_timing.take();
        match r {
            Ok(()) => {
                if let Some((received, think)) = timing {
                    self.ctx
                        .client
                        .metrics()
                        .record_move(received.elapsed(), think);
                }
            }
            Err(e @ ApiError::Unauthorized { .. }) => {
                return Some(self.leave("unauthorized", Some(e.to_string())));
            }
            Err(e) => {
                let current = self.state.as_ref().map(|s| s.moves.trim().to_owned());
                if current.as_deref() != Some(key.as_str()) {
                    debug!(error = %e, "move error after the position moved on; ignored");
                } else {
                    let ply = key.split_ascii_whitespace().count();
                    self.rejected = if self.rejected.0 == ply {
                        (ply, self.rejected.1 + 1)
                    } else {
                        (ply, 1)
                    };
                    warn!(error = %e, attempt = self.rejected.1, "move not accepted; re-syncing from the stream");
                    self.answered = None;
                    if self.rejected.1 >= MAX_REJECTED {
                        warn!("giving up on this game after repeated move rejections");
                        self.quit_game();
                        return None;
                    }
                    if e.status() == Some(400) {
                        // Reopen the stream: its gameFull is the truth. Searching the state we
                        // have now would often be wasted (the game may have moved on or
                        // ended), so wait for that gameFull, or RESYNC_WAIT at most.
                        self.reader = None;
                        self.connecting = None;
                        self.reconnect_at = Some(Instant::now());
                        self.resync_until = Some(Instant::now() + RESYNC_WAIT);
                    } else {
                        self.act();
                    }
                }
            }
        }
        self.act();
        None
    }

    fn on_timer(&mut self) {
        let now = Instant::now();
        if let Some(t) = self.resync_until
            && t <= now
        {
            self.resync_until = None;
            warn!("no fresh game state after a rejected move; searching the last known one");
            self.act();
        }
        if let Some((t, _)) = self.abort_at
            && t <= now
        {
            self.abort_at = None;
            info!("the opponent never made a first move: aborting");
            self.spawn_action("abort");
        }
        if let Some(t) = self.claim_at
            && t <= now
        {
            self.claim_at = None;
            info!("claiming the win: the opponent left");
            self.spawn_claim();
        }
    }

    /// Claims the win over an opponent who left. Lichess refuses that in some games (those
    /// from a challenge among them: only a draw can be claimed there); the draw is claimed
    /// instead when we would take a draw anyway (the draw policy and our last win probability),
    /// or when the game has no clock (the opponent's clock would never end it). Otherwise we
    /// play on: a clocked opponent who stays away loses on time.
    fn spawn_claim(&self) {
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

    /// A game we cannot play (another variant, a FEN our rules reject): abort it while that is
    /// allowed, else resign, and wait for the final state like any other quit.
    fn leave_unplayable(&mut self, state: GameState) {
        let abortable = state.move_list().len() < 2;
        self.state = Some(state);
        self.quitting.get_or_insert_with(Instant::now);
        self.spawn_action(if abortable { "abort" } else { "resign" });
    }

    fn quit_game(&mut self) {
        if let Some(Job::Think { stop, .. } | Job::Ponder { stop, .. }) = &self.job {
            stop.store(true, Ordering::Relaxed);
        }
        self.quitting.get_or_insert_with(Instant::now);
        let abortable = self.state.as_ref().is_none_or(|s| s.move_list().len() < 2);
        let action = match self.ctx.settings.shutdown.mode {
            ShutdownMode::Abort | ShutdownMode::Finish if abortable => "abort",
            _ => "resign",
        };
        info!(action, "leaving the game");
        self.spawn_action(action);
    }

    async fn finish(&mut self) -> GameReport {
        if let Some(Job::Think { stop, .. } | Job::Ponder { stop, .. }) = &self.job {
            stop.store(true, Ordering::Relaxed);
        }
        let Some(state) = self.state.clone() else {
            return self.leave("finished", None);
        };
        let mut report = self.report(&state.status, None);
        if let Some(full) = &self.full {
            let text = pgn::render(self.ctx.client.base_url(), full, &state);
            if let Some(dir) = &self.ctx.settings.game.pgn_dir
                && let Err(e) = pgn::append(dir, &text)
            {
                warn!(error = %e, dir = %dir.display(), "cannot write the PGN");
            }
            report.pgn = Some(text);
            let goodbye = self.chat_text(&self.ctx.settings.game.goodbye, full);
            if !goodbye.is_empty() && state.status != "aborted" {
                let chat = self.ctx.client.chat(&self.id, "player", &goodbye);
                if let Ok(Err(e)) = tokio::time::timeout(Duration::from_secs(3), chat).await {
                    warn!(error = %e, "goodbye chat failed");
                }
            }
        }
        info!(status = %state.status, result = %report.result, "game over");
        self.summarize(&state);
        report
    }

    /// Ends the task without lichess's final state (`status` says why): the result is
    /// unknown, but the game is still summarized and counted, as left.
    fn leave(&self, status: &str, fatal: Option<String>) -> GameReport {
        self.log_summary(GameResult::Left, status, None);
        self.report(status, fatal)
    }

    /// Logs the per-game summary line and counts the result in the metrics.
    fn summarize(&self, state: &GameState) {
        let Some(color) = self.color else {
            // A final state before any gameFull: we never knew our side.
            self.log_summary(GameResult::Left, &state.status, None);
            return;
        };
        let (our_color, clock_ms) = match color {
            Color::White => ("white", state.wtime),
            Color::Black => ("black", state.btime),
        };
        let result = GameResult::from_lichess(&state.status, state.winner.as_deref(), our_color);
        let has_clock = self.full.as_ref().is_some_and(|f| f.clock.is_some());
        let clock_left = has_clock.then(|| Duration::from_millis(clock_ms.max(0) as u64));
        self.log_summary(result, &state.status, clock_left);
    }

    fn log_summary(&self, result: GameResult, termination: &str, clock_left: Option<Duration>) {
        let opponent = match (&self.full, self.color) {
            (Some(f), Some(Color::White)) => f.black.display(),
            (Some(f), Some(Color::Black)) => f.white.display(),
            _ => "?".into(),
        };
        let summary = GameSummary {
            game_id: self.id.clone(),
            opponent,
            result,
            termination: termination.to_owned(),
            clock_left,
            stats: self.stats,
        };
        summary.log();
        self.ctx
            .client
            .metrics()
            .record_game(result, summary.is_time_forfeit());
    }
}

/// Each game's search memory (`Hash`): `search.hash_mb` bounds all games together. The MCTS
/// copies the kept subtree into a fresh arena between moves, so one tree can briefly use twice
/// its `Hash`: each game gets half of its share. The alpha-beta table never copies, and its
/// pages are committed only as the search writes them: it gets the whole share.
pub fn hash_share(settings: &Settings) -> u64 {
    let share = settings.search.hash_mb / u64::from(settings.challenge.max_games.max(1));
    let share = match settings.search.engine {
        Engine::Mcts => share / 2,
        Engine::Alphabeta | Engine::Simple => share,
    };
    share.max(1)
}

/// Runs the calling (blocking-pool) thread at a lower CPU priority, once per thread, so that the
/// async runtime (reading streams, posting moves) is never queued behind the searches when
/// several games share two cores: this is what keeps the turn latency small.
fn lower_thread_priority() {
    thread_local!(static LOWERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    LOWERED.with(|done| {
        if done.replace(true) {
            return;
        }
        #[cfg(target_os = "linux")]
        // SAFETY: setpriority takes plain integers and has no memory-safety preconditions. On
        // Linux, PRIO_PROCESS with who = 0 changes only the calling thread (NPTL threads have
        // their own nice value); raising the nice value needs no privilege.
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS, 0, SEARCH_NICE);
        }
    });
}

/// Nice value of search threads (the runtime stays at 0).
#[cfg(target_os = "linux")]
const SEARCH_NICE: libc::c_int = 5;

/// A task dropped while a search or ponder runs (its game task panicked and is restarted, or
/// was aborted) must stop that blocking thread: nothing else would, and an infinite ponder
/// would burn a core for the rest of the process.
impl Drop for Task {
    fn drop(&mut self) {
        if let Some(Job::Think { stop, .. } | Job::Ponder { stop, .. }) = &self.job {
            stop.store(true, Ordering::Relaxed);
        }
    }
}

/// How long the opponent may take over its first move before we abort: `abort_after_s` in a
/// game with a clock (lichess aborts those itself after 20-35 s, so ours is a backstop), and
/// `abort_unclocked_s` without one (correspondence or unlimited, which lichess never aborts).
pub fn first_move_wait(g: &GameSettings, clocked: bool) -> Duration {
    Duration::from_secs(if clocked {
        g.abort_after_s
    } else {
        g.abort_unclocked_s
    })
}

/// The ply (0 or 1) of `side`'s first move in a game whose initial position has `first_to_move`
/// to move. From the standard start White moves at ply 0, but a game from a FEN may start with
/// Black to move (`initialFen`), and then White's first move is ply 1.
fn first_move_ply(first_to_move: Color, side: Color) -> usize {
    usize::from(first_to_move != side)
}

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_mcts_halves_its_share_of_the_hash() {
        let mut settings = Settings::default();
        settings.search.hash_mb = 512;
        settings.challenge.max_games = 4;
        settings.search.engine = Engine::Alphabeta;
        assert_eq!(hash_share(&settings), 128);
        settings.search.engine = Engine::Mcts;
        assert_eq!(hash_share(&settings), 64);
        settings.search.hash_mb = 1;
        assert_eq!(hash_share(&settings), 1);
    }

    #[test]
    fn first_move_wait_depends_on_the_clock() {
        let g = GameSettings::default();
        // Above lichess's longest first-move deadline (35 s): lichess aborts first.
        assert!(first_move_wait(&g, true) > Duration::from_secs(35));
        // Correspondence and unlimited games are never aborted by lichess: a day.
        assert_eq!(first_move_wait(&g, false), Duration::from_secs(86_400));
    }

    #[test]
    fn first_move_ply_follows_the_side_to_move_of_the_initial_position() {
        assert_eq!(first_move_ply(Color::White, Color::White), 0);
        assert_eq!(first_move_ply(Color::White, Color::Black), 1);
        assert_eq!(first_move_ply(Color::Black, Color::Black), 0);
        assert_eq!(first_move_ply(Color::Black, Color::White), 1);
    }
}
