//! End-to-end tests of the hosting features against the local lichess-compatible server on
//! 127.0.0.1:0, through the same supervisor and client as production: matchmaking challenges an
//! online bot, backs off after repeated declines and never adds a game beyond `max_games`;
//! `!eval` is answered in the game chat; the heartbeat follows the event stream; the metrics
//! count reconnects and finished games.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use atomic_bot::config::Settings;
use atomic_bot::fakelichess::{ChallengeSpec, FakeAccount, FakeConfig, FakeLichess};
use atomic_bot::lichess::client::LichessClient;
use atomic_bot::lichess::model::Event;
use atomic_bot::lichess::ndjson::Line;
use atomic_bot::lichess::picker::{PickerFactory, SearcherFactory, SimplePickerFactory};
use atomic_bot::lichess::supervisor::{BotError, Supervisor};
use atomic_bot::metrics::Metrics;
use secrecy::SecretString;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const BOT_TOKEN: &str = "lip_hostingbot_SECRET";
const PARTNER_TOKEN: &str = "lip_partnerbot";
const HUMAN_TOKEN: &str = "lip_hostinghuman";
const T: Duration = Duration::from_secs(45);

async fn fake() -> FakeLichess {
    FakeLichess::start(FakeConfig {
        accounts: vec![
            FakeAccount::new("AtomicBot", BOT_TOKEN, true),
            FakeAccount::new("PartnerBot", PARTNER_TOKEN, true),
            FakeAccount::new("Human1", HUMAN_TOKEN, false),
        ],
        keepalive: Duration::from_millis(200),
        ..FakeConfig::default()
    })
    .await
    .expect("fake server")
}

/// A fresh directory, removed when dropped (also if the test fails).
fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("atomic-bot-hosting-e2e-{name}-"))
        .tempdir()
        .expect("temp dir")
}

/// Settings with short timeouts; matchmaking off unless a test turns it on.
fn settings(url: &str, heartbeat: PathBuf) -> Settings {
    let mut s = Settings::default();
    s.lichess.url = url.to_owned();
    s.lichess.request_timeout_ms = 5_000;
    s.lichess.stream_idle_timeout_ms = 1_500;
    s.lichess.rate_limit_cooldown_ms = 600;
    s.lichess.retry_min_ms = 20;
    s.lichess.retry_max_ms = 100;
    s.lichess.reconnect_min_ms = 50;
    s.lichess.reconnect_max_ms = 400;
    s.lichess.healthy_after_ms = 1_000;
    s.game.ponder = false;
    s.game.greeting = String::new();
    s.game.goodbye = String::new();
    s.game.move_overhead_ms = 50;
    s.game.min_reserve_ms = 200;
    s.chat.cooldown_s = 0;
    s.heartbeat.path = heartbeat;
    s
}

struct Bot {
    stop: CancellationToken,
    task: JoinHandle<Result<(), BotError>>,
    metrics: Arc<Metrics>,
}

fn start_bot(s: Settings) -> Bot {
    start_bot_with(s, Arc::new(SimplePickerFactory::default()))
}

fn start_bot_with(s: Settings, pickers: Arc<dyn PickerFactory>) -> Bot {
    let client = LichessClient::new(&s.lichess, SecretString::from(BOT_TOKEN)).expect("client");
    let metrics = client.metrics().clone();
    let stop = CancellationToken::new();
    let sup = Supervisor::new(Arc::new(s), client, pickers);
    let task = tokio::spawn(sup.run(stop.clone()));
    Bot {
        stop,
        task,
        metrics,
    }
}

impl Bot {
    /// Asks the supervisor to stop (as on SIGTERM) and waits briefly; games may still run.
    async fn stop(self) {
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(2), self.task).await;
    }
}

/// POSTs the bot made to create a challenge to `user`.
fn challenges_to(fake: &FakeLichess, user: &str) -> usize {
    let path = format!("/api/challenge/{user}");
    fake.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path == path && r.user.as_deref() == Some("atomicbot"))
        .count()
}

/// Waits on `client`'s event stream for a challenge from the bot; returns its id.
async fn next_challenge_from_bot(reader: &mut atomic_bot::lichess::client::BodyReader) -> String {
    let wait = async {
        loop {
            match reader.next::<Event>().await {
                Ok(Line::Item(Event::Challenge { challenge, .. }, _))
                    if challenge
                        .challenger
                        .as_ref()
                        .is_some_and(|c| c.id == "atomicbot") =>
                {
                    return challenge.id;
                }
                Ok(_) => {}
                Err(e) => panic!("partner event stream ended: {e}"),
            }
        }
    };
    tokio::time::timeout(T, wait)
        .await
        .expect("a challenge from the bot")
}

fn partner_client(url: &str) -> LichessClient {
    let mut s = Settings::default();
    s.lichess.url = url.to_owned();
    s.lichess.stream_idle_timeout_ms = 5_000;
    LichessClient::new(&s.lichess, SecretString::from(PARTNER_TOKEN)).expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matchmaking_challenges_an_online_bot_and_backs_off_after_declines() {
    let fake = fake().await;
    let partner = partner_client(&fake.url());
    let mut events = partner.stream_events().await.expect("partner stream");
    let hb_dir = temp_dir("mm1");
    let mut s = settings(&fake.url(), hb_dir.path().join("hb"));
    s.matchmaking.enabled = true;
    s.matchmaking.idle_s = 0;
    s.matchmaking.min_interval_s = 1;
    s.matchmaking.max_declines = 2;
    let bot = start_bot(s);

    // First challenge: to the only other online bot, atomic, with a configured time control.
    let first = next_challenge_from_bot(&mut events).await;
    assert_eq!(challenges_to(&fake, "PartnerBot"), 1);
    partner
        .decline_challenge(&first, "later")
        .await
        .expect("decline");
    // After min_interval_s, a second one; declined too.
    let second = next_challenge_from_bot(&mut events).await;
    assert_ne!(first, second);
    partner
        .decline_challenge(&second, "timeControl")
        .await
        .expect("decline");
    // Two declines: the partner is skipped, and it is the only candidate.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        challenges_to(&fake, "PartnerBot"),
        2,
        "no third challenge after two declines"
    );
    assert_eq!(bot.metrics.challenges_sent.load(Ordering::Relaxed), 2);
    bot.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matchmaking_never_exceeds_max_games() {
    let fake = fake().await;
    let partner = partner_client(&fake.url());
    let mut events = partner.stream_events().await.expect("partner stream");
    let hb_dir = temp_dir("mm2");
    let mut s = settings(&fake.url(), hb_dir.path().join("hb"));
    s.matchmaking.enabled = true;
    s.matchmaking.idle_s = 0;
    s.matchmaking.min_interval_s = 1;
    s.challenge.max_games = 1;
    let bot = start_bot(s);

    let id = next_challenge_from_bot(&mut events).await;
    partner.accept_challenge(&id).await.expect("accept");
    assert!(
        fake.wait_until(T, |f| f.running_games("atomicbot") == 1)
            .await,
        "the accepted challenge became a game"
    );
    // While that game runs: no new challenge, and an incoming one is not accepted.
    let human = fake
        .challenge("human1", "atomicbot", &ChallengeSpec::default())
        .expect("challenge");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        challenges_to(&fake, "PartnerBot"),
        1,
        "no second challenge while busy"
    );
    assert_eq!(fake.running_games("atomicbot"), 1);
    let status = fake.challenge_status(&human).map(|(s, _)| s);
    assert_ne!(
        status.as_deref(),
        Some("accepted"),
        "incoming challenge beyond max_games"
    );
    bot.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_command_is_answered_in_chat_and_the_game_is_counted() {
    let fake = fake().await;
    let hb_dir = temp_dir("eval");
    let heartbeat = hb_dir.path().join("hb");
    // The real MCTS search, briefly: `!eval` then reports its score, nodes and line.
    let mut s = settings(&fake.url(), heartbeat.clone());
    s.game.first_move_think_ms = 300;
    let bot = start_bot_with(s, Arc::new(SearcherFactory::default()));
    assert!(
        fake.wait_until(T, |f| f.event_stream_connections("atomicbot") > 0)
            .await,
        "bot connected"
    );
    // The heartbeat follows the event stream.
    assert!(
        fake.wait_until(T, |_| heartbeat.exists()).await,
        "heartbeat written on stream lines"
    );
    let health = atomic_bot::heartbeat::check(
        &heartbeat,
        Duration::from_secs(90),
        std::time::SystemTime::now(),
    );
    assert_eq!(health.exit_code(), 0, "{health}");

    // The human plays black, so the bot moves first and has an evaluation.
    let spec = ChallengeSpec {
        color: "black".into(),
        clock: Some((180, 2)),
        ..ChallengeSpec::default()
    };
    let id = fake
        .challenge("human1", "atomicbot", &spec)
        .expect("challenge");
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some_and(|g| !g.moves.is_empty()))
            .await,
        "the bot made its first move"
    );
    // Spectators were greeted.
    assert!(
        fake.wait_until(T, |f| f
            .chat(&id)
            .iter()
            .any(|(_, t)| t.contains("Commands: !help")))
            .await,
        "spectator greeting: {:?}",
        fake.chat(&id)
    );
    fake.push_game_line(
        &id,
        r#"{"type":"chatLine","room":"player","username":"Human1","text":"!eval"}"#,
    );
    assert!(
        fake.wait_until(T, |f| f.chat(&id).iter().any(|(u, t)| u == "atomicbot"
            && t.starts_with("Eval")
            && t.contains(" nodes. PV: ")))
            .await,
        "an !eval reply: {:?}",
        fake.chat(&id)
    );
    fake.push_game_line(
        &id,
        r#"{"type":"chatLine","room":"spectator","username":"watcher","text":"!queue"}"#,
    );
    assert!(
        fake.wait_until(T, |f| f
            .chat(&id)
            .iter()
            .any(|(_, t)| t.starts_with("Playing 1 of 1 games")))
            .await,
        "a !queue reply: {:?}",
        fake.chat(&id)
    );
    // Our own echoed lines are not answered.
    let before = fake.chat(&id).len();
    fake.push_game_line(
        &id,
        r#"{"type":"chatLine","room":"player","username":"AtomicBot","text":"!help"}"#,
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fake.chat(&id).len(), before, "the bot answered itself");

    // The human answers (so the game can no longer be aborted), then resigns: one game
    // played, won, and the gauge back to zero.
    fake.play(&id, "human1", "g8f6").expect("a legal reply");
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some_and(|g| g.moves.len() >= 3))
            .await,
        "the bot answered"
    );
    fake.resign(&id, "human1").expect("resign");
    let m = bot.metrics.clone();
    assert!(
        fake.wait_until(T, |_| m.games_played.load(Ordering::Relaxed) == 1)
            .await,
        "game counted"
    );
    assert_eq!(m.games_won.load(Ordering::Relaxed), 1);
    assert!(
        fake.wait_until(T, |_| m.games_in_progress.load(Ordering::Relaxed) == 0)
            .await,
        "gauge back to zero"
    );
    assert!(m.move_latency.count() >= 1, "move latency observed");
    let body = m.render();
    assert!(body.contains("atomic_bot_games_won_total 1"), "{body}");

    // A cut stream is a counted reconnect.
    let reconnects = m.stream_reconnects.load(Ordering::Relaxed);
    fake.cut_streams();
    assert!(
        fake.wait_until(T, |_| m.stream_reconnects.load(Ordering::Relaxed)
            > reconnects)
            .await,
        "reconnect counted"
    );
    bot.stop().await;
}
