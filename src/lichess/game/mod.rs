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
//!
//! A correspondence game's task ([`play_correspondence_game`]) lives only while the game needs
//! us: it thinks `correspondence.move_time_s`, never ponders, and ends as parked once the
//! opponent has not moved for `correspondence.disconnect_time_s` (`lichess::correspondence`).
//!
//! This module holds the task and its loop; what it does on each stream line is in `events`,
//! our turn (search, ponder, move POST) in `think`, chat and the other requests in
//! `actions`, and the end of a game in `ending`.

mod actions;
mod ending;
mod events;
mod think;
pub mod threads;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atomic_chess::{Color, Game, Position};
use backon::BackoffBuilder;
use futures_util::future::BoxFuture;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::config::{GameSettings, Settings};
use crate::lichess::chat_commands::{ChatResponder, EvalReport};
use crate::lichess::client::{ApiError, BodyReader, LichessClient};
use crate::lichess::model::{Account, GameEvent, GameFull, GameState};
use crate::lichess::ndjson::{Line, StreamEnd};
use crate::lichess::pgn;
use crate::lichess::picker::{MovePicker, PickerFactory};
use crate::telemetry::GameStats;
use think::{Job, ThinkOut};

pub use think::hash_share;

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
    /// The online move sources of this game (`None`: all off), with their answer cache.
    online: Option<Arc<crate::lichess::online::OnlineSources>>,
    /// A correspondence game (`lichess::correspondence`): its own think time, no ponder, and
    /// the task ends as parked when the game waits for the opponent (or on `quit`).
    correspondence: bool,
    /// When this correspondence game, waiting for the opponent, closes its stream.
    park_at: Option<Instant>,
}

/// Plays the game `id` to its end. `quit` asks to abort/resign it (shutdown mode).
pub async fn play_game(ctx: GameContext, id: String, quit: CancellationToken) -> GameReport {
    let _running = ctx.client.metrics().game_started();
    let span = crate::telemetry::game_span(&id);
    let mut task = Task::new(ctx, id);
    tracing::Instrument::instrument(task.run(quit), span).await
}

/// Plays the correspondence game `id` while it needs us: our move (if it is our turn), then
/// the task ends with the status [`crate::lichess::correspondence::PARKED`] once
/// `correspondence.disconnect_time_s` passed without the opponent moving, or at once on
/// `quit` (a correspondence game is never aborted or resigned on shutdown: a restart resumes
/// it). A game that is over when its stream opens ends the task like any game, PGN included.
pub async fn play_correspondence_game(
    ctx: GameContext,
    id: String,
    quit: CancellationToken,
) -> GameReport {
    let _running = ctx.client.metrics().game_started();
    let span = crate::telemetry::game_span(&id);
    let mut task = Task::new(ctx, id);
    task.correspondence = true;
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
        let online =
            crate::lichess::online::OnlineSources::new(&ctx.settings.online, &ctx.client, &id)
                .map(Arc::new);
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
            online,
            correspondence: false,
            park_at: None,
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
                .map_or_else(|| "*".into(), |s| pgn::result_token(s).to_owned()),
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
                Ev::Quit if self.correspondence => {
                    info!("shutting down: leaving the correspondence game for the next start");
                    return self.park();
                }
                Ev::Quit => {
                    self.quitting = Some(Instant::now());
                    self.quit_game();
                }
                Ev::Reconnect => {}
            }
            if self.correspondence && self.park_due() {
                info!(
                    idle_s = self.ctx.settings.correspondence.disconnect_time_s,
                    "the opponent has not moved: closing the stream until the next check-in"
                );
                return self.park();
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
        let ponder_check = match &self.job {
            Some(Job::Ponder { recheck, .. }) => Some(*recheck),
            _ => None,
        };
        [
            self.abort_at.map(|(t, _)| t),
            self.claim_at,
            quit_check,
            self.resync_until,
            ponder_check,
            self.park_at,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether this correspondence game has waited `disconnect_time_s` for the opponent with
    /// nothing of ours in flight; arms or clears that wait.
    fn park_due(&mut self) -> bool {
        let waiting = match (&self.state, &self.game, self.color) {
            (Some(state), Some(game), Some(color)) => {
                !state.is_terminal() && game.position().turn() != color
            }
            _ => false,
        };
        if !waiting || self.job.is_some() || self.post.is_some() || self.quitting.is_some() {
            self.park_at = None;
            return false;
        }
        let wait = Duration::from_secs(self.ctx.settings.correspondence.disconnect_time_s);
        let at = *self.park_at.get_or_insert_with(|| Instant::now() + wait);
        at <= Instant::now()
    }

    /// Ends the task of a correspondence game that goes on without us for now: its stream is
    /// dropped with the task, nothing is summarized or counted (the game is not over).
    fn park(&mut self) -> GameReport {
        if let Some(Job::Think { stop, .. } | Job::Ponder { stop, .. }) = &self.job {
            stop.store(true, Ordering::Relaxed);
        }
        self.report(crate::lichess::correspondence::PARKED, None)
    }

    fn on_timer(&mut self) {
        self.recheck_ponder();
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
}

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
