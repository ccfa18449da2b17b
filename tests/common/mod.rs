//! Shared harness of the end-to-end tests: a fake lichess on 127.0.0.1:0 with short
//! keep-alives, a bot with short timeouts, and opponents that play through the same API.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atomic_bot::config::Settings;
use atomic_bot::fakelichess::{ChallengeSpec, FakeAccount, FakeConfig, FakeLichess};
use atomic_bot::lichess::client::{Endpoint, LichessClient};
use atomic_bot::lichess::game::{GameContext, GameReport, Metrics, play_game};
use atomic_bot::lichess::picker::{
    Budget, MovePicker, Pick, PickerFactory, SimplePicker, SimplePickerFactory,
};
use atomic_bot::lichess::supervisor::{BotError, Supervisor};
use atomic_chess::Game;
use secrecy::SecretString;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub const BOT: &str = "atomicbot";
pub const BOT_TOKEN: &str = "lip_bottoken_SECRET123";
pub const HUMAN: &str = "human1";
pub const HUMAN_TOKEN: &str = "lip_human1token";
pub const OTHER_BOT: &str = "otherbot";
pub const OTHER_BOT_TOKEN: &str = "lip_otherbottoken";

pub fn accounts() -> Vec<FakeAccount> {
    vec![
        FakeAccount::new("AtomicBot", BOT_TOKEN, true),
        FakeAccount::new("Human1", HUMAN_TOKEN, false),
        FakeAccount::new("Human2", "lip_human2token", false),
        FakeAccount::new("Human3", "lip_human3token", false),
        FakeAccount::new("OtherBot", OTHER_BOT_TOKEN, true),
        FakeAccount::new("NotABot", "lip_notabot", false),
    ]
}

pub async fn fake() -> FakeLichess {
    fake_with(FakeConfig::default()).await
}

/// Logs to the test output when RUST_LOG is set.
pub fn init_tracing() {
    if std::env::var("RUST_LOG").is_ok() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
    }
}

pub async fn fake_with(mut config: FakeConfig) -> FakeLichess {
    init_tracing();
    if config.accounts.is_empty() {
        config.accounts = accounts();
    }
    config.keepalive = Duration::from_millis(200);
    FakeLichess::start(config).await.expect("fake server")
}

/// Settings with short timeouts so the suite is fast.
pub fn settings(url: &str) -> Settings {
    let mut s = Settings::default();
    s.lichess.url = url.to_owned();
    s.lichess.request_timeout_ms = 5_000;
    s.lichess.stream_idle_timeout_ms = 1_500;
    s.lichess.rate_limit_cooldown_ms = 600;
    s.lichess.retry_min_ms = 20;
    s.lichess.retry_max_ms = 100;
    s.lichess.retry_max_times = 4;
    s.lichess.reconnect_min_ms = 50;
    s.lichess.reconnect_max_ms = 400;
    s.lichess.healthy_after_ms = 1_000;
    // Not the shared default /tmp/atomic-bot.heartbeat (hosting_e2e tests the heartbeat).
    s.heartbeat.enabled = false;
    s.game.ponder = false;
    s.game.greeting = "hi {opponent}".into();
    s.game.goodbye = "gg".into();
    s.game.move_overhead_ms = 50;
    s
}

/// A fake lichess and a bot connected to it, with `adjust` applied to the test settings.
pub async fn fake_and_bot(adjust: impl FnOnce(&mut Settings)) -> (FakeLichess, Bot) {
    fake_and_bot_with(Arc::new(SimplePickerFactory::default()), adjust).await
}

/// [`fake_and_bot`] with the bot's move pickers.
pub async fn fake_and_bot_with(
    pickers: Arc<dyn PickerFactory>,
    adjust: impl FnOnce(&mut Settings),
) -> (FakeLichess, Bot) {
    let fake = fake().await;
    let mut s = settings(&fake.url());
    adjust(&mut s);
    let bot = start_bot_with(s, pickers);
    wait_connected(&fake, 1).await;
    (fake, bot)
}

pub struct Bot {
    pub task: JoinHandle<Result<(), BotError>>,
    pub stop: CancellationToken,
    pub reports: mpsc::UnboundedReceiver<GameReport>,
    pub metrics: Arc<Metrics>,
    /// The exported counters (`/metrics`).
    pub counters: Arc<atomic_bot::metrics::Metrics>,
}

pub fn start_bot(settings: Settings) -> Bot {
    start_bot_with(settings, Arc::new(SimplePickerFactory::default()))
}

pub fn start_bot_with(settings: Settings, pickers: Arc<dyn PickerFactory>) -> Bot {
    let client = LichessClient::new(&settings.lichess, SecretString::from(BOT_TOKEN)).unwrap();
    let counters = client.metrics().clone();
    let (tx, rx) = mpsc::unbounded_channel();
    let sup = Supervisor::new(Arc::new(settings), client, pickers).with_reports(tx);
    let metrics = sup.metrics();
    let stop = CancellationToken::new();
    let task = tokio::spawn(sup.run(stop.clone()));
    Bot {
        task,
        stop,
        reports: rx,
        metrics,
        counters,
    }
}

/// Ends the bot at once (like a crash), for tests that leave a game running.
pub async fn kill(bot: Bot) {
    bot.task.abort();
    let _ = bot.task.await;
}

pub async fn wait_connected(fake: &FakeLichess, n: usize) {
    assert!(
        fake.wait_until(Duration::from_secs(10), |f| f.event_stream_connections(BOT)
            >= n)
            .await,
        "the bot did not open its event stream"
    );
    // Let the replay be read.
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// An opponent that plays the game through the API with the same game loop.
pub async fn opponent(url: &str, token: &str, game_id: &str) -> JoinHandle<GameReport> {
    opponent_with(
        url,
        token,
        game_id,
        Arc::new(SimplePickerFactory::default()),
    )
    .await
}

pub async fn opponent_with(
    url: &str,
    token: &str,
    game_id: &str,
    pickers: Arc<dyn PickerFactory>,
) -> JoinHandle<GameReport> {
    let mut s = settings(url);
    s.game.greeting = String::new();
    s.game.goodbye = String::new();
    s.game.draw_policy = atomic_bot::config::DrawPolicy::Decline;
    let client = LichessClient::new(&s.lichess, SecretString::from(token.to_owned())).unwrap();
    let account = client.account().await.unwrap();
    let ctx = GameContext {
        client,
        settings: Arc::new(s),
        me: Arc::new(account),
        pickers,
        running: Arc::new(AtomicUsize::new(1)),
        metrics: Arc::new(Metrics::default()),
    };
    tokio::spawn(play_game(ctx, game_id.to_owned(), CancellationToken::new()))
}

/// HUMAN plays game `id` with the simple picker, thinking `think` per move.
pub async fn slow_opponent(
    fake: &FakeLichess,
    id: &str,
    think: Duration,
) -> JoinHandle<GameReport> {
    opponent_with(
        &fake.url(),
        HUMAN_TOKEN,
        id,
        ScriptedFactory::new(&[], think),
    )
    .await
}

/// Plays a fixed list of moves while they are legal, then falls back to the simple picker;
/// optionally sleeps in every pick (to let states arrive while "thinking").
pub struct ScriptedPicker {
    pub script: Vec<String>,
    pub delay: Duration,
    pub fallback: SimplePicker,
}

impl MovePicker for ScriptedPicker {
    fn pick(&mut self, game: &Game, budget: &Budget, stop: &AtomicBool) -> Option<Pick> {
        std::thread::sleep(self.delay);
        if !self.script.is_empty() {
            let uci = self.script.remove(0);
            if let Ok(m) = game.position().parse_uci(&uci) {
                return Some(Pick {
                    mv: m,
                    win_probability: 0.5,
                    proven: None,
                });
            }
        }
        self.fallback.pick(game, budget, stop)
    }
}

pub struct ScriptedFactory {
    pub script: Mutex<Vec<String>>,
    pub delay: Duration,
}

impl ScriptedFactory {
    pub fn new(script: &[&str], delay: Duration) -> Arc<Self> {
        Arc::new(Self {
            script: Mutex::new(script.iter().map(ToString::to_string).collect()),
            delay,
        })
    }
}

impl PickerFactory for ScriptedFactory {
    fn create(&self, _hash_mb: u64) -> Box<dyn MovePicker> {
        Box::new(ScriptedPicker {
            script: self.script.lock().unwrap().clone(),
            delay: self.delay,
            fallback: SimplePicker { seed: 7 },
        })
    }
}

/// HUMAN challenges the bot, playing `human_color` (`white`, `black` or `random`) with `clock`
/// (`(limit s, increment s)`); returns the challenge id, which is also the game id.
pub fn challenge_bot(fake: &FakeLichess, human_color: &str, clock: Option<(u32, u32)>) -> String {
    let spec = ChallengeSpec {
        color: human_color.into(),
        clock,
        ..ChallengeSpec::default()
    };
    fake.challenge(HUMAN, BOT, &spec).expect("challenge")
}

/// Waits until game `id` exists with at least `plies` moves.
pub async fn wait_game(fake: &FakeLichess, id: &str, plies: usize) {
    assert!(
        fake.wait_until(Duration::from_secs(30), |f| f
            .game(id)
            .is_some_and(|g| g.moves.len() >= plies))
            .await,
        "game {id} never reached {plies} plies: {:?}",
        fake.game(id)
    );
}

/// Waits until game `id` has exactly `plies` moves.
pub async fn wait_plies(fake: &FakeLichess, id: &str, plies: usize) {
    assert!(
        fake.wait_until(Duration::from_secs(30), |f| f
            .game(id)
            .is_some_and(|g| g.moves.len() == plies))
            .await,
        "game {id} never reached {plies} plies: {:?}",
        fake.game(id)
    );
}

/// Whether the bot sent a request to `path` (e.g. `/api/bot/game/{id}/abort`).
pub fn bot_requested(fake: &FakeLichess, path: &str) -> bool {
    fake.requests()
        .iter()
        .any(|r| r.user.as_deref() == Some(BOT) && r.path == path)
}

/// Whether the bot sends a request to `path` within five seconds. The fake logs a request once
/// it has answered it, so a test that saw the request's effect (a game aborted) may look at the
/// log a moment before the request is in it.
pub async fn bot_requests_soon(fake: &FakeLichess, path: &str) -> bool {
    fake.wait_until(Duration::from_secs(5), |f| bot_requested(f, path))
        .await
}

/// Stops the bot as on SIGTERM and checks that it exits cleanly.
pub async fn stop_cleanly(bot: Bot) {
    bot.stop.cancel();
    let exit = tokio::time::timeout(Duration::from_secs(30), bot.task).await;
    assert!(
        matches!(exit, Ok(Ok(Ok(())))),
        "the bot did not exit cleanly: {exit:?}"
    );
}

/// The bot's move requests (path `/api/bot/game/{id}/move/{uci}`).
pub fn bot_moves(fake: &FakeLichess, game: &str) -> Vec<atomic_bot::fakelichess::RequestRecord> {
    fake.requests()
        .into_iter()
        .filter(|r| {
            r.user.as_deref() == Some(BOT)
                && r.endpoint == Some(Endpoint::Move)
                && r.path.starts_with(&format!("/api/bot/game/{game}/"))
        })
        .collect()
}

/// Checks the final move list replays legally.
pub fn assert_legal(moves: &[String]) {
    Game::from_uci_moves(atomic_chess::Position::startpos(), moves).expect("every move legal");
}

/// Waits until challenge `id` is declined (or fails the test); returns the reason key.
pub async fn decline_reason(fake: &FakeLichess, id: &str) -> Option<String> {
    assert!(
        fake.wait_until(Duration::from_secs(30), |f| f
            .challenge_status(id)
            .is_some_and(|s| s.0 == "declined"))
            .await,
        "{id} not declined: {:?}",
        fake.challenge_status(id)
    );
    fake.challenge_status(id).and_then(|s| s.1)
}
