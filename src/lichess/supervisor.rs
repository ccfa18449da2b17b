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

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
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
use crate::lichess::challenge::{self, Decision, DeclineReason, Load};
use crate::lichess::client::{ApiError, BodyReader, LichessClient};
use crate::lichess::game::{GameContext, GameReport, Metrics, play_game};
use crate::lichess::matchmaking::{self, Matchmaker};
use crate::lichess::model::{Account, Challenge, Event};
use crate::lichess::ndjson::{Line, StreamEnd};
use crate::lichess::picker::PickerFactory;

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
        info!(user = %account.username, "logged in");
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
}

/// A game whose task panicked this often is left (a panic loop must not spin).
const MAX_GAME_RESTARTS: u32 = 3;

struct State {
    ctx: GameContext,
    reports: Option<mpsc::UnboundedSender<GameReport>>,
    games: HashMap<String, GameEntry>,
    finished: HashSet<String>,
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
    Shutdown,
    Grace,
    Tick,
    Reconnect,
}

impl State {
    fn new(ctx: GameContext, reports: Option<mpsc::UnboundedSender<GameReport>>) -> Self {
        let heartbeat = crate::heartbeat::Heartbeat::from_settings(&ctx.settings.heartbeat);
        Self {
            ctx,
            reports,
            games: HashMap::new(),
            finished: HashSet::new(),
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

    /// Runs `f` on the matchmaker, if matchmaking is on.
    fn with_matchmaker<T>(&self, f: impl FnOnce(&mut Matchmaker) -> T) -> Option<T> {
        let mm = self.matchmaker.as_ref()?;
        let mut guard = mm.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(f(&mut guard))
    }

    /// Shares the current load with the matchmaking task and the `!queue` gauge.
    fn publish_load(&self) {
        let waiting = self.pending.len() + self.queue.len();
        let load = matchmaking::Load {
            games_running: self.games.len(),
            challenges_waiting: waiting,
            max_games: self.ctx.settings.challenge.max_games as usize,
        };
        *self
            .published_load
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = load;
        self.ctx.client.metrics().challenges_waiting.store(
            i64::try_from(waiting).unwrap_or(i64::MAX),
            Ordering::Relaxed,
        );
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
                    self.ctx.running.store(self.tasks.len(), Ordering::Relaxed);
                    match r {
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
                Ev::Shutdown => {
                    self.shutting_down = true;
                    info!(games = self.games.len(), "shutting down: no new games");
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

    fn load(&self) -> Load {
        // Our own matchmaking challenge (pending or being sent) takes a slot too.
        let ours = self
            .with_matchmaker(|m| m.pending_challenges())
            .unwrap_or(0);
        Load {
            playing: self.games.len() as u32,
            pending: (self.pending.len() + ours) as u32,
            queued: self.queue.len() as u32,
            shutting_down: self.shutting_down,
            bot_games_limited: self.daily_limit.until(Instant::now()).is_some(),
        }
    }

    fn on_event(&mut self, ev: Event, kind: Option<String>) {
        match ev {
            Event::GameStart { game } => {
                let id = game.id().to_owned();
                self.pending.remove(&id);
                if self.games.contains_key(&id) || self.finished.contains(&id) {
                    debug!(game_id = %id, "replayed gameStart ignored");
                    return;
                }
                if id.is_empty() {
                    warn!("gameStart without a game id ignored");
                    return;
                }
                info!(game_id = %id, opponent = %game.opponent.username, "game start");
                let opponent = game.opponent.id.clone().unwrap_or_default();
                self.with_matchmaker(|m| m.game_started(&id, &opponent, false, Instant::now()));
                self.spawn_game(id, 0);
            }
            Event::GameFinish { game } => {
                debug!(game_id = %game.id(), "gameFinish");
            }
            Event::Challenge { challenge, compat } => {
                if self.decided.contains_key(&challenge.id)
                    || self.queue.iter().any(|c| c.id == challenge.id)
                {
                    debug!(challenge = %challenge.id, "replayed challenge ignored");
                    return;
                }
                let decision = challenge::decide(
                    &challenge,
                    compat.as_ref(),
                    &self.ctx.settings.challenge,
                    self.load(),
                    &self.ctx.me.id,
                );
                let from = challenge
                    .challenger
                    .as_ref()
                    .map(|c| c.id.clone())
                    .unwrap_or_default();
                info!(challenge = %challenge.id, %from, ?decision, "challenge");
                if matches!(decision, Decision::Accept | Decision::Queue)
                    && challenge.challenger.as_ref().is_some_and(|c| c.is_bot())
                {
                    self.with_matchmaker(|m| m.incoming_bot_challenge(&challenge.id));
                }
                match decision {
                    Decision::Accept => self.accept(challenge),
                    Decision::Queue => self.queue.push_back(challenge),
                    Decision::Decline(reason) => self.decline(&challenge.id, reason),
                    Decision::Ignore => {}
                }
            }
            Event::ChallengeCanceled { challenge } => {
                info!(challenge = %challenge.id, "challenge canceled");
                self.with_matchmaker(|m| m.challenge_canceled(&challenge.id));
                self.queue.retain(|c| c.id != challenge.id);
                if self.pending.remove(&challenge.id).is_some() {
                    self.drain_queue();
                }
            }
            Event::ChallengeDeclined { challenge } => {
                info!(challenge = %challenge.id, reason = ?challenge.decline_reason_key, "our challenge was declined");
                self.with_matchmaker(|m| m.challenge_declined(&challenge.id, Instant::now()));
            }
            Event::Unknown => debug!(?kind, "unknown event type ignored"),
        }
    }

    /// Starts the task of game `id` (again, after `restarts` panics).
    fn spawn_game(&mut self, id: String, restarts: u32) {
        let quit = CancellationToken::new();
        let task = self
            .tasks
            .spawn(play_game(self.ctx.clone(), id.clone(), quit.clone()))
            .id();
        self.games.insert(
            id,
            GameEntry {
                quit,
                task,
                restarts,
            },
        );
        self.ctx.running.store(self.tasks.len(), Ordering::Relaxed);
    }

    /// A game task panicked: the game is still running on lichess, so restart its task (the
    /// new game stream starts with a fresh `gameFull`), at most [`MAX_GAME_RESTARTS`] times.
    /// Only that game's entry changes: the others keep theirs (a replayed `gameStart` must not
    /// start a second task for a game being played).
    fn on_game_panic(&mut self, e: &tokio::task::JoinError) {
        let Some(id) = self
            .games
            .iter()
            .find(|(_, g)| g.task == e.id())
            .map(|(id, _)| id.clone())
        else {
            warn!(error = %e, "a game task failed");
            return;
        };
        let restarts = self.games.remove(&id).map_or(0, |g| g.restarts) + 1;
        if restarts > MAX_GAME_RESTARTS {
            tracing::error!(game_id = %id, error = %e, "game task failed again: leaving the game");
            self.ctx
                .client
                .metrics()
                .record_game(crate::telemetry::GameResult::Left, false);
            self.finished.insert(id);
            return;
        }
        tracing::error!(game_id = %id, error = %e, restarts, "game task failed: restarting it");
        self.spawn_game(id, restarts);
    }

    /// Accepts `challenge`. lichess's daily bot-game limit may refuse it (429: ours, which
    /// then holds for bots' challenges and matchmaking; 400: the challenger's, which
    /// matchmaking then leaves alone); the challenge is then declined with `later` rather than
    /// left hanging.
    fn accept(&mut self, challenge: Challenge) {
        let id = challenge.id;
        let challenger = challenge.challenger.map(|c| c.id);
        self.decided.insert(id.clone(), Instant::now());
        self.pending.insert(id.clone(), Instant::now());
        let client = self.ctx.client.clone();
        let daily = self.daily_limit.clone();
        let matchmaker = self.matchmaker.clone();
        self.answers.spawn(async move {
            let r = client.accept_challenge(&id).await;
            if let Err(ApiError::BotGameLimit { ours, seconds, .. }) = &r {
                if *ours {
                    warn!(challenge = %id, reset_in_s = ?seconds,
                        "daily bot-game limit reached: declining bots with `later` until it resets");
                    daily.reached(*seconds, Instant::now());
                } else if let (Some(mm), Some(opponent)) = (&matchmaker, &challenger) {
                    mm.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .opponent_limited(opponent, *seconds, Instant::now());
                }
                if let Err(e) = client
                    .decline_challenge(&id, DeclineReason::Later.key())
                    .await
                {
                    warn!(challenge = %id, error = %e, "declining failed");
                }
            }
            (id, r)
        });
    }

    fn decline(&mut self, id: &str, reason: DeclineReason) {
        self.decided.insert(id.to_owned(), Instant::now());
        let client = self.ctx.client.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            if let Err(e) = client.decline_challenge(&id, reason.key()).await {
                warn!(challenge = %id, error = %e, "declining failed");
            }
        });
    }

    /// Accepts queued challenges while slots are free.
    fn drain_queue(&mut self) {
        while let Some(c) = self.queue.front() {
            let load = Load {
                queued: 0,
                ..self.load()
            };
            let decision =
                challenge::decide(c, None, &self.ctx.settings.challenge, load, &self.ctx.me.id);
            match decision {
                Decision::Accept => {
                    let Some(c) = self.queue.pop_front() else {
                        break;
                    };
                    info!(challenge = %c.id, "accepting a queued challenge");
                    self.accept(c);
                }
                Decision::Decline(r) => {
                    let id = self.queue.pop_front().map(|c| c.id).unwrap_or_default();
                    self.decline(&id, r);
                }
                Decision::Queue | Decision::Ignore => break,
            }
        }
    }

    fn expire(&mut self) {
        let now = Instant::now();
        let before = self.pending.len();
        self.pending.retain(|id, t| {
            let keep = now.duration_since(*t) < PENDING_TTL;
            if !keep {
                warn!(challenge = %id, "accepted challenge never started");
            }
            keep
        });
        self.decided
            .retain(|_, t| now.duration_since(*t) < DECIDED_TTL);
        if self.pending.len() != before {
            self.drain_queue();
        }
    }
}

/// Starts the matchmaking task (it stops on `shutdown`) and returns its shared state.
fn start_matchmaking(state: &State, shutdown: &CancellationToken) -> Arc<Mutex<Matchmaker>> {
    let settings = &state.ctx.settings;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x9e37_79b9);
    let mm = Arc::new(Mutex::new(
        Matchmaker::new(settings.matchmaking.clone(), Instant::now(), seed)
            .with_daily_limit(state.daily_limit.clone()),
    ));
    let me = &state.ctx.me;
    let identity = matchmaking::Identity {
        id: me.id.clone(),
        atomic_rating: me
            .perfs
            .get("atomic")
            .and_then(|p| p.rating)
            .and_then(|r| u32::try_from(r).ok()),
    };
    info!(idle_s = settings.matchmaking.idle_s, rating = ?identity.atomic_rating, "matchmaking on");
    let client = state.ctx.client.clone();
    let load = state.published_load.clone();
    let shared = mm.clone();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let metrics = client.metrics().clone();
        matchmaking::run(
            &client,
            shared,
            identity,
            move || {
                *load
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
            },
            move || crate::metrics::Metrics::inc(&metrics.challenges_sent),
            stop.cancelled_owned(),
        )
        .await;
    });
    mm
}

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Resolves on the first SIGTERM or SIGINT, then exits the process at once on a second one.
pub async fn shutdown_signal(token: CancellationToken) {
    wait_signal().await;
    info!("signal received: finishing (a second signal exits at once)");
    token.cancel();
    wait_signal().await;
    warn!("second signal: exiting now");
    std::process::exit(130);
}

async fn wait_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
