//! End-to-end tests of the hosting features against the local lichess-compatible server on
//! 127.0.0.1:0, through the same supervisor and client as production: matchmaking challenges an
//! online bot, backs off after repeated declines and never adds a game beyond `max_games`;
//! `!eval` is answered in the game chat, also after a search that missed its deadline; the
//! heartbeat follows the event stream; the metrics count reconnects and finished games.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use atomic_bot::config::Settings;
use atomic_bot::fakelichess::{ChallengeSpec, FakeLichess};
use atomic_bot::lichess::client::LichessClient;
use atomic_bot::lichess::model::Event;
use atomic_bot::lichess::ndjson::Line;
use atomic_bot::lichess::picker::SearcherFactory;
use common::*;
use secrecy::SecretString;

/// The bot matchmaking challenges: the only other bot account, online for the fake server.
const PARTNER: &str = "OtherBot";
const T: Duration = Duration::from_secs(45);

/// Asks `!eval` in game `id`'s player room and waits until the bot has a chat line there that
/// `accept` takes.
async fn eval_reply(fake: &FakeLichess, id: &str, accept: impl Fn(&str) -> bool) -> bool {
    fake.push_game_line(
        id,
        r#"{"type":"chatLine","room":"player","username":"Human1","text":"!eval"}"#,
    );
    fake.wait_until(T, |f| f.chat(id).iter().any(|(u, t)| u == BOT && accept(t)))
        .await
}

/// Matchmaking on, at once and every second; `adjust` changes more.
fn matchmaking(s: &mut Settings) {
    s.matchmaking.enabled = true;
    s.matchmaking.idle_s = 0;
    s.matchmaking.min_interval_s = 1;
}

/// POSTs the bot made to create a challenge to `user`.
fn challenges_to(fake: &FakeLichess, user: &str) -> usize {
    let path = format!("/api/challenge/{user}");
    fake.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path == path && r.user.as_deref() == Some(BOT))
        .count()
}

/// Waits on `client`'s event stream for a challenge from the bot; returns its id.
async fn next_challenge_from_bot(reader: &mut atomic_bot::lichess::client::BodyReader) -> String {
    let wait = async {
        loop {
            match reader.next::<Event>().await {
                Ok(Line::Item(Event::Challenge { challenge, .. }, _))
                    if challenge.challenger.as_ref().is_some_and(|c| c.id == BOT) =>
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
    LichessClient::new(&s.lichess, SecretString::from(OTHER_BOT_TOKEN)).expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matchmaking_challenges_an_online_bot_and_backs_off_after_declines() {
    let fake = fake().await;
    let partner = partner_client(&fake.url());
    let mut events = partner.stream_events().await.expect("partner stream");
    let mut s = settings(&fake.url());
    matchmaking(&mut s);
    s.matchmaking.max_declines = 2;
    let bot = start_bot(s);

    // First challenge: to the only other online bot, atomic, with a configured time control.
    let first = next_challenge_from_bot(&mut events).await;
    // The event comes before the fake logs the request (`FakeLichess::requests`).
    assert!(
        fake.wait_until(T, |f| challenges_to(f, PARTNER) == 1).await,
        "the bot's challenge is recorded: {}",
        challenges_to(&fake, PARTNER)
    );
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
        challenges_to(&fake, PARTNER),
        2,
        "no third challenge after two declines"
    );
    assert_eq!(bot.counters.challenges_sent.load(Ordering::Relaxed), 2);
    kill(bot).await;
}

/// A search that ignores its stop flag is abandoned and the quick fallback plays; `!eval` then
/// says so, where it used to answer "No evaluation yet: I have not searched in this game" (the
/// reply a fresh-clone CI on a loaded machine got once, session 42, in the test below).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_after_a_missed_deadline_names_the_fallback() {
    let fake = fake().await;
    let mut s = settings(&fake.url());
    s.chat.cooldown_s = 0;
    s.game.first_move_think_ms = 200;
    // Every pick sleeps 5 s without looking at its stop flag.
    let bot = start_bot_with(s, ScriptedFactory::new(&[], Duration::from_secs(5)));
    wait_connected(&fake, 1).await;
    let id = challenge_bot(&fake, "black", Some((180, 2)));
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some_and(|g| !g.moves.is_empty()))
            .await,
        "the fallback made the first move"
    );
    assert!(
        eval_reply(&fake, &id, |t| t
            .starts_with("Move from the quick fallback search")
            && t.contains("missed its deadline")
            && t.contains(" PV: "))
        .await,
        "an !eval reply naming the fallback: {:?}",
        fake.chat(&id)
    );
    kill(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matchmaking_never_exceeds_max_games() {
    let fake = fake().await;
    let partner = partner_client(&fake.url());
    let mut events = partner.stream_events().await.expect("partner stream");
    let mut s = settings(&fake.url());
    matchmaking(&mut s);
    s.challenge.max_games = 1;
    let bot = start_bot(s);

    let id = next_challenge_from_bot(&mut events).await;
    partner.accept_challenge(&id).await.expect("accept");
    assert!(
        fake.wait_until(T, |f| f.running_games(BOT) == 1).await,
        "the accepted challenge became a game"
    );
    // While that game runs: no new challenge, and an incoming one is not accepted.
    let human = fake
        .challenge(HUMAN, BOT, &ChallengeSpec::default())
        .expect("challenge");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        challenges_to(&fake, PARTNER),
        1,
        "no second challenge while busy"
    );
    assert_eq!(fake.running_games(BOT), 1);
    let status = fake.challenge_status(&human).map(|(s, _)| s);
    assert_ne!(
        status.as_deref(),
        Some("accepted"),
        "incoming challenge beyond max_games"
    );
    kill(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_command_is_answered_in_chat_and_the_game_is_counted() {
    let fake = fake().await;
    let hb_dir = tempfile::Builder::new()
        .prefix("atomic-bot-hosting-e2e-")
        .tempdir()
        .expect("temp dir");
    let heartbeat = hb_dir.path().join("hb");
    // The real MCTS search, briefly: `!eval` then reports its score, nodes and line.
    let mut s = settings(&fake.url());
    s.heartbeat.enabled = true;
    s.heartbeat.path = heartbeat.clone();
    s.chat.cooldown_s = 0;
    // A second: on a loaded machine a 300 ms first move once missed its deadline (most likely
    // its search thread, reniced to 5, saw the stop flag late), and the fallback played with no
    // search to report.
    s.game.first_move_think_ms = 1000;
    let bot = start_bot_with(s, Arc::new(SearcherFactory::default()));
    wait_connected(&fake, 1).await;
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
    let id = fake.challenge(HUMAN, BOT, &spec).expect("challenge");
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
    assert!(
        eval_reply(&fake, &id, |t| t.starts_with("Eval")
            && t.contains(" nodes. PV: "))
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
    fake.play(&id, HUMAN, "g8f6").expect("a legal reply");
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some_and(|g| g.moves.len() >= 3))
            .await,
        "the bot answered"
    );
    fake.resign(&id, HUMAN).expect("resign");
    let m = bot.counters.clone();
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
    kill(bot).await;
}
