//! The supervisor: checks the account, keeps the event stream open (watchdog, reconnect with
//! capped exponential backoff and jitter, reset after a healthy connection), de-duplicates the
//! `gameStart`/`challenge` events lichess replays on every connect, applies the challenge policy
//! with the real load (running games + accepted games not started yet + queue), runs one task
//! per game, and shuts down on request.
//!
//! Shutdown, passed in as a [`CancellationToken`] so tests can trigger it: stop accepting
//! (queued and new challenges are declined with `later`), then either let the running games
//! finish (`shutdown.mode = "finish"`, the default) or, after `shutdown.grace_s`, abort/resign
//! them; return once no game is left.
//!
//! This module holds the supervisor and its loop (the event stream, its watchdog and
//! reconnects, shutdown); what each event does is in `events`, incoming challenges once decided
//! in `challenges`, the game tasks in `games`, correspondence games (parked between moves, the
//! periodic check-in) in `correspondence`, matchmaking's task in `matchmaker`, and the signal
//! handling in `signal`.

mod challenges;
mod correspondence;
mod events;
mod games;
mod matchmaker;
mod signal;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backon::BackoffBuilder;
use futures_util::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::config::{Settings, ShutdownMode};
use crate::heartbeat::Heartbeat;
use crate::lichess::challenge::DeclineReason;
use crate::lichess::client::{ApiError, BodyReader, LichessClient};
use crate::lichess::game::{GameContext, GameReport, Metrics};
use crate::lichess::matchmaking::{self, Matchmaker};
use crate::lichess::model::{Account, Challenge, Event, Playing};
use crate::lichess::ndjson::{Line, StreamEnd};
use crate::lichess::picker::PickerFactory;
use matchmaker::start_matchmaking;

pub use signal::shutdown_signal;

/// Why the bot stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    /// The token was rejected (401).
    #[error("{0}")]
    Unauthorized(String),
    /// The account is not a bot account.
    #[error(
        "the lichess account `{0}` is not a BOT account; the Bot API only works for bot \
         accounts. Upgrade it with `atomic-bot upgrade --confirm` (irreversible, and only \
         possible for an account that has never played a game)"
    )]
    NotBot(String),
    /// Another API failure at start-up.
    #[error("{0}")]
    Api(#[from] ApiError),
}

/// An accepted challenge counts as a game until its `gameStart` arrives or this long passed.
const PENDING_TTL: Duration = Duration::from_secs(60);
/// How long answered challenge ids are remembered (replays come on every reconnect).
const DECIDED_TTL: Duration = Duration::from_secs(3600);

/// The running bot.
pub struct Supervisor {
    settings: Arc<Settings>,
    client: LichessClient,
    pickers: Arc<dyn PickerFactory>,
    metrics: Arc<Metrics>,
    reports: Option<mpsc::UnboundedSender<GameReport>>,
}

impl Supervisor {
    /// A bot with this configuration, client and move pickers.
    pub fn new(
        settings: Arc<Settings>,
        client: LichessClient,
        pickers: Arc<dyn PickerFactory>,
    ) -> Self {
        Self {
            settings,
            client,
            pickers,
            metrics: Arc::new(Metrics::default()),
            reports: None,
        }
    }

    /// Sends every finished game's report here (the demo and tests use it).
    pub fn with_reports(mut self, tx: mpsc::UnboundedSender<GameReport>) -> Self {
        self.reports = Some(tx);
        self
    }

    /// Turn latency samples (benchmark).
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Checks the account: the token works and the account is a bot.
    pub async fn check_account(&self) -> Result<Account, BotError> {
        let account = self.client.account().await.map_err(|e| match e {
            e @ ApiError::Unauthorized { .. } => BotError::Unauthorized(e.to_string()),
            e => BotError::Api(e),
        })?;
        if !account.is_bot() {
            return Err(BotError::NotBot(account.username));
        }
        self.client.set_user(&account.username);
        info!(user = %account.username, search_threads = %self.settings.search.effective_threads(), "logged in");
        Ok(account)
    }

    /// Runs until `shutdown` is cancelled and the games are done, or a fatal error.
    pub async fn run(self, shutdown: CancellationToken) -> Result<(), BotError> {
        let account = self.check_account().await?;
        let ctx = GameContext {
            client: self.client.clone(),
            settings: self.settings.clone(),
            me: Arc::new(account),
            pickers: self.pickers.clone(),
            running: Arc::new(AtomicUsize::new(0)),
            metrics: self.metrics.clone(),
        };
        let mut state = State::new(ctx, self.reports.clone());
        if self.settings.matchmaking.enabled {
            state.matchmaker = Some(start_matchmaking(&state, &shutdown));
        }
        state.run(shutdown).await
    }
}

struct GameEntry {
    quit: CancellationToken,
    /// The task playing it, to find the game when that task panics.
    task: tokio::task::Id,
    /// Times its task panicked and was restarted.
    restarts: u32,
    /// A correspondence game: not counted against `max_games`, parked between moves.
    correspondence: bool,
}

/// A game whose task panicked this often is left (a panic loop must not spin).
const MAX_GAME_RESTARTS: u32 = 3;

struct State {
    ctx: GameContext,
    reports: Option<mpsc::UnboundedSender<GameReport>>,
    games: HashMap<String, GameEntry>,
    finished: HashSet<String>,
    /// Correspondence games going on without a task (waiting for the opponent).
    parked: HashSet<String>,
    /// Correspondence games waiting for one of the `max_games` correspondence tasks.
    corr_waiting: VecDeque<String>,
    tasks: JoinSet<GameReport>,
    pending: HashMap<String, Instant>,
    queue: VecDeque<Challenge>,
    decided: HashMap<String, Instant>,
    answers: JoinSet<(String, Result<(), ApiError>)>,
    shutting_down: bool,
    /// Rewritten on every event-stream line (`atomic-bot healthcheck`).
    heartbeat: Option<Heartbeat>,
    /// Event-stream connections so far (all but the first count as reconnects).
    connections: u64,
    /// Matchmaking state, shared with its task (when enabled).
    matchmaker: Option<Arc<Mutex<Matchmaker>>>,
    /// Our load as the matchmaking task sees it, refreshed every loop iteration.
    published_load: Arc<Mutex<matchmaking::Load>>,
    /// lichess's daily bot-game limit, once an answer said it is reached (shared with
    /// matchmaking): bots' challenges are declined with `later` while it holds.
    daily_limit: matchmaking::DailyLimit,
}

enum Ev {
    Connected(Result<BodyReader, ApiError>),
    Line(Box<Result<Line<Event>, StreamEnd>>),
    GameDone(Result<(tokio::task::Id, GameReport), tokio::task::JoinError>),
    Answered(Result<(String, Result<(), ApiError>), tokio::task::JoinError>),
    CheckIn,
    CheckedIn(Result<Playing, ApiError>),
    Shutdown,
    Grace,
    Tick,
    Reconnect,
}

impl State {
    fn new(ctx: GameContext, reports: Option<mpsc::UnboundedSender<GameReport>>) -> Self {
        let heartbeat = Heartbeat::from_settings(&ctx.settings.heartbeat);
        Self {
            ctx,
            reports,
            games: HashMap::new(),
            finished: HashSet::new(),
            parked: HashSet::new(),
            corr_waiting: VecDeque::new(),
            tasks: JoinSet::new(),
            pending: HashMap::new(),
            queue: VecDeque::new(),
            decided: HashMap::new(),
            answers: JoinSet::new(),
            shutting_down: false,
            heartbeat,
            connections: 0,
            matchmaker: None,
            published_load: Arc::new(Mutex::new(matchmaking::Load::default())),
            daily_limit: matchmaking::DailyLimit::default(),
        }
    }

    fn backoff(&self) -> impl Iterator<Item = Duration> + Send + use<> {
        let s = &self.ctx.settings.lichess;
        backon::ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(s.reconnect_min_ms))
            .with_max_delay(Duration::from_millis(s.reconnect_max_ms))
            .without_max_times()
            .with_jitter()
            .build()
    }

    async fn run(&mut self, shutdown: CancellationToken) -> Result<(), BotError> {
        let mut backoff = self.backoff();
        let mut reader: Option<BodyReader> = None;
        let mut connecting: Option<BoxFuture<'static, Result<BodyReader, ApiError>>> = None;
        let mut reconnect_at = Some(Instant::now());
        let mut connected_at = Instant::now();
        let mut grace_at: Option<Instant> = None;
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        let mut check_in_at =
            Instant::now() + correspondence::FIRST_CHECK_IN.min(self.check_in_period());
        let mut checking_in: Option<BoxFuture<'static, Result<Playing, ApiError>>> = None;
        let healthy = Duration::from_millis(self.ctx.settings.lichess.healthy_after_ms);
        loop {
            self.publish_load();
            if self.shutting_down && self.games.is_empty() && self.pending.is_empty() {
                info!("no game left: exiting");
                return Ok(());
            }
            if reader.is_none()
                && connecting.is_none()
                && reconnect_at.is_some_and(|t| t <= Instant::now())
            {
                reconnect_at = None;
                let client = self.ctx.client.clone();
                connecting = Some(Box::pin(async move { client.stream_events().await }));
            }
            let ev = tokio::select! {
                r = async { match &mut connecting { Some(f) => f.await, None => std::future::pending().await } } => Ev::Connected(r),
                r = async { match &mut reader { Some(rd) => rd.next::<Event>().await, None => std::future::pending().await } } => {
                    // Any line, keep-alives included, proves the stream is alive.
                    if let (Ok(_), Some(hb)) = (&r, &mut self.heartbeat) {
                        hb.beat();
                    }
                    Ev::Line(Box::new(r))
                }
                Some(r) = self.tasks.join_next_with_id() => Ev::GameDone(r),
                Some(r) = self.answers.join_next() => Ev::Answered(r),
                _ = shutdown.cancelled(), if !self.shutting_down => Ev::Shutdown,
                r = async { match &mut checking_in { Some(f) => f.await, None => std::future::pending().await } } => Ev::CheckedIn(r),
                _ = tokio::time::sleep_until(check_in_at), if checking_in.is_none() => Ev::CheckIn,
                _ = sleep_opt(grace_at) => Ev::Grace,
                _ = sleep_opt(reconnect_at), if reader.is_none() && connecting.is_none() => Ev::Reconnect,
                _ = tick.tick() => Ev::Tick,
            };
            match ev {
                Ev::Connected(r) => {
                    connecting = None;
                    match r {
                        Ok(rd) => {
                            info!("event stream connected");
                            reader = Some(rd);
                            connected_at = Instant::now();
                            self.connections += 1;
                            if self.connections > 1 {
                                crate::metrics::Metrics::inc(
                                    &self.ctx.client.metrics().stream_reconnects,
                                );
                            }
                            if let Some(hb) = &mut self.heartbeat {
                                hb.beat();
                            }
                        }
                        Err(e @ ApiError::Unauthorized { .. }) => {
                            return Err(BotError::Unauthorized(e.to_string()));
                        }
                        Err(e) => {
                            let delay = backoff.next().unwrap_or(Duration::from_secs(1));
                            warn!(error = %e, retry_in_ms = delay.as_millis() as u64, "cannot open the event stream");
                            reconnect_at = Some(Instant::now() + delay);
                        }
                    }
                }
                Ev::Line(r) => match *r {
                    Ok(Line::KeepAlive) => {}
                    Ok(Line::Item(ev, kind)) => self.on_event(ev, kind),
                    Ok(Line::Unknown { kind }) => debug!(?kind, "unknown event line ignored"),
                    Ok(Line::Malformed { excerpt, error }) => {
                        warn!(%excerpt, %error, "malformed event line skipped");
                    }
                    Err(end) => {
                        reader = None;
                        if connected_at.elapsed() >= healthy {
                            backoff = self.backoff();
                        }
                        let delay = backoff.next().unwrap_or(Duration::from_secs(1));
                        warn!(reason = %end, retry_in_ms = delay.as_millis() as u64, "event stream lost, reconnecting");
                        reconnect_at = Some(Instant::now() + delay);
                    }
                },
                Ev::GameDone(r) => {
                    match r {
                        Ok((_task, report)) if self.parked_report(&report) => {}
                        Ok((_task, report)) => {
                            self.games.remove(&report.id);
                            let aborted = report.status == "aborted";
                            self.with_matchmaker(|m| {
                                m.game_finished(&report.id, aborted, Instant::now());
                            });
                            self.finished.insert(report.id.clone());
                            if let Some(fatal) = report.fatal.clone() {
                                return Err(BotError::Unauthorized(fatal));
                            }
                            if let Some(tx) = &self.reports {
                                let _ = tx.send(report);
                            }
                        }
                        Err(e) => self.on_game_panic(&e),
                    }
                    self.drain_queue();
                    self.drain_correspondence();
                }
                Ev::Answered(r) => {
                    if let Ok((id, Err(e))) = r {
                        warn!(challenge = %id, error = %e, "accepting failed");
                        if matches!(e, ApiError::Unauthorized { .. }) {
                            return Err(BotError::Unauthorized(e.to_string()));
                        }
                        self.pending.remove(&id);
                        self.drain_queue();
                    }
                }
                Ev::CheckIn => {
                    // One request per period, whatever its answer (429s included).
                    check_in_at = Instant::now() + self.check_in_period();
                    if self.checks_in() {
                        let client = self.ctx.client.clone();
                        checking_in = Some(Box::pin(async move { client.playing().await }));
                    }
                }
                Ev::CheckedIn(r) => {
                    checking_in = None;
                    self.on_checked_in(r);
                }
                Ev::Shutdown => {
                    self.shutting_down = true;
                    info!(games = self.games.len(), "shutting down: no new games");
                    // Correspondence games are left for the next start, never resigned.
                    for g in self.games.values().filter(|g| g.correspondence) {
                        g.quit.cancel();
                    }
                    self.parked.extend(self.corr_waiting.drain(..));
                    for c in std::mem::take(&mut self.queue) {
                        self.decline(&c.id, DeclineReason::Later);
                    }
                    let s = &self.ctx.settings.shutdown;
                    if s.mode != ShutdownMode::Finish && !self.games.is_empty() {
                        grace_at = Some(Instant::now() + Duration::from_secs(s.grace_s));
                    }
                }
                Ev::Grace => {
                    grace_at = None;
                    info!("grace period over: leaving the running games");
                    for g in self.games.values() {
                        g.quit.cancel();
                    }
                }
                Ev::Tick => self.expire(),
                Ev::Reconnect => {}
            }
        }
    }
}

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
