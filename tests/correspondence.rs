//! Correspondence games end to end, against the local lichess-compatible server: the bot checks
//! in through `/api/account/playing`, opens a game's stream only when it is its turn, thinks
//! `correspondence.move_time_s` (at most a tenth of the time left), closes the stream after
//! `correspondence.disconnect_time_s`, keeps correspondence games out of `max_games`, resumes
//! them after a restart and keeps their PGN. Days pass without waiting: the fake's
//! `pass_time` moves a game's correspondence clock on, and the bot's periods are set to a
//! second.

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use atomic_bot::config::Settings;
use atomic_bot::fakelichess::{ChallengeSpec, FakeConfig, FakeLichess};
use atomic_bot::lichess::client::Endpoint;
use atomic_bot::lichess::picker::{Budget, MovePicker, Pick, PickerFactory, SimplePicker};
use atomic_chess::{Game, Position};
use common::*;

const DAY: Duration = Duration::from_secs(86_400);
const T: Duration = Duration::from_secs(30);

/// Correspondence on, with periods of a second so a "day" of the test takes a few seconds.
fn corr(s: &mut Settings) {
    s.challenge.correspondence = true;
    s.correspondence.move_time_s = 1;
    s.correspondence.checkin_period_s = 1;
    s.correspondence.disconnect_time_s = 1;
}

/// `from` challenges the bot to a correspondence game of `days` per turn, playing `color`.
fn corr_challenge(fake: &FakeLichess, from: &str, color: &str, days: u32) -> String {
    let spec = ChallengeSpec {
        color: color.into(),
        clock: None,
        days: Some(days),
        ..ChallengeSpec::default()
    };
    fake.challenge(from, BOT, &spec).expect("challenge")
}

/// `user` plays a quiet legal move (no capture, nothing that ends the game) in `game`, so the
/// game lasts as long as the test needs.
fn quiet_move(fake: &FakeLichess, game: &str, user: &str) -> String {
    let moves = fake.game(game).expect("game").moves;
    let g = Game::from_uci_moves(Position::startpos(), &moves).expect("legal moves");
    let mv = g
        .position()
        .legal_moves()
        .into_iter()
        .find(|m| {
            let mut next = g.clone();
            !m.is_capture() && next.play(*m).is_ok() && next.outcome().is_none()
        })
        .expect("a quiet move");
    let uci = mv.to_string();
    fake.play(game, user, &uci).expect("the move is accepted");
    uci
}

/// Requests the bot sent to `/api/account/playing` so far.
fn check_ins(fake: &FakeLichess) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.user.as_deref() == Some(BOT) && r.endpoint == Some(Endpoint::Playing))
        .count()
}

/// Waits until game `id` has `plies` moves; returns how long that took.
async fn plies_within(fake: &FakeLichess, id: &str, plies: usize, within: Duration) -> Duration {
    let t = Instant::now();
    assert!(
        fake.wait_until(within, |f| f
            .game(id)
            .is_some_and(|g| g.moves.len() >= plies))
            .await,
        "game {id} never reached {plies} plies: {:?}",
        fake.game(id)
    );
    t.elapsed()
}

/// Waits until the bot holds no stream of `id`.
async fn stream_closed(fake: &FakeLichess, id: &str, within: Duration) {
    assert!(
        fake.wait_until(within, |f| !f.game_stream_open(id, BOT))
            .await,
        "the bot keeps the stream of {id} open"
    );
}

/// The budgets the bot's searches got, and a picker that uses each one whole when `patient`
/// (it waits for the stop flag or the hard deadline, like a search), else moves at once.
#[derive(Default)]
struct Recorder {
    budgets: Mutex<Vec<Budget>>,
    patient: bool,
}

struct RecordingPicker(Arc<Recorder>);

impl MovePicker for RecordingPicker {
    fn pick(&mut self, game: &Game, budget: &Budget, stop: &AtomicBool) -> Option<Pick> {
        self.0.budgets.lock().unwrap().push(*budget);
        if self.0.patient {
            let t = Instant::now();
            while t.elapsed() < budget.hard && !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        SimplePicker::default().pick(game, budget, stop)
    }
}

struct RecorderFactory(Arc<Recorder>);

impl PickerFactory for RecorderFactory {
    fn create(&self, _hash_mb: u64) -> Box<dyn MovePicker> {
        Box::new(RecordingPicker(self.0.clone()))
    }
}

/// The opponent moves once a "day" (the fake's clock moved on by most of a day before each of
/// its moves): each time the bot is found by the check-in, moves within its think time, and
/// closes the stream again; the opponent resigns while the bot is away, and the finished
/// game's PGN is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_a_day_found_by_the_check_in_with_the_stream_closed_in_between() {
    let dir = tempfile::Builder::new()
        .prefix("atomic-bot-corr-pgn-")
        .tempdir()
        .unwrap();
    let recorder = Arc::new(Recorder::default());
    let pgn_dir = dir.path().to_path_buf();
    let (fake, mut bot) =
        fake_and_bot_with(Arc::new(RecorderFactory(recorder.clone())), move |s| {
            corr(s);
            s.game.pgn_dir = Some(pgn_dir);
        })
        .await;
    let started = Instant::now();
    let id = corr_challenge(&fake, HUMAN, "white", 2);
    wait_game(&fake, &id, 0).await;
    // The opponent's turn: the bot does not open the game.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(!fake.game_stream_open(&id, BOT), "opened while waiting");
    for day in 0..3 {
        let plies = fake.game(&id).unwrap().moves.len();
        // Most of a day goes by on the opponent's clock, then it moves.
        fake.pass_time(&id, DAY - Duration::from_secs(3_600))
            .unwrap();
        stream_closed(&fake, &id, Duration::from_secs(5)).await;
        quiet_move(&fake, &id, HUMAN);
        // Found by the next check-in (a second), then a second to think, plus slack.
        let took = plies_within(&fake, &id, plies + 2, Duration::from_secs(10)).await;
        assert!(took < Duration::from_secs(6), "day {day}: {took:?}");
        stream_closed(&fake, &id, Duration::from_secs(5)).await;
    }
    let budgets = recorder.budgets.lock().unwrap().clone();
    assert_eq!(budgets.len(), 3, "one search per move: {budgets:?}");
    for b in &budgets {
        // move_time_s, less the moment since the stream's state was read.
        assert!(
            b.hard <= Duration::from_secs(1) && b.hard > Duration::from_millis(900),
            "move_time_s: {b:?}"
        );
    }
    // The opponent resigns while the bot is away: its gameFinish brings the bot back once.
    fake.resign(&id, HUMAN).unwrap();
    let report = tokio::time::timeout(T, bot.reports.recv())
        .await
        .expect("a report")
        .expect("the bot runs");
    assert_eq!(report.id, id, "parked games send no report: {report:?}");
    assert_eq!(report.status, "resign");
    assert_eq!(report.result, "0-1");
    let pgn = std::fs::read_to_string(dir.path().join("atomic-bot.pgn")).expect("the PGN file");
    assert!(pgn.contains(&id), "{pgn}");
    assert!(pgn.contains("[Result \"0-1\"]"), "{pgn}");
    // One check-in a period at most (one a second here), never a burst.
    let periods = started.elapsed().as_secs() as usize + 1;
    let n = check_ins(&fake);
    assert!(n >= 3 && n <= periods, "{n} check-ins in {periods} s");
    bot.stop.cancel();
    tokio::time::timeout(T, bot.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

/// Three correspondence games running do not take the one real-time slot: a real-time
/// challenge is still accepted and played. With `max_games = 1` they are opened one at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_correspondence_games_leave_the_real_time_slot_free() {
    let (fake, bot) = fake_and_bot(|s| {
        corr(s);
        s.challenge.max_games = 1;
        s.challenge.queue_size = 0;
    })
    .await;
    // The bot is White in each: its turn at once in all three.
    let corr_games: Vec<String> = [HUMAN, "human2", "human3"]
        .into_iter()
        .map(|user| corr_challenge(&fake, user, "black", 3))
        .collect();
    // Each gets its move, one game open at a time (at most max_games correspondence tasks).
    let mut most_open = 0;
    assert!(
        fake.wait_until(Duration::from_secs(20), |f| {
            let open = corr_games
                .iter()
                .filter(|id| f.game_stream_open(id, BOT))
                .count();
            most_open = most_open.max(open);
            corr_games
                .iter()
                .all(|id| f.game(id).is_some_and(|g| g.moves.len() == 1))
        })
        .await,
        "not every correspondence game got its move"
    );
    assert_eq!(most_open, 1, "correspondence games open at once");
    for id in &corr_games {
        assert_eq!(fake.game(id).unwrap().status, "started");
    }
    assert_eq!(fake.running_games(BOT), 3);
    let live = challenge_bot(&fake, "white", Some((60, 1)));
    wait_game(&fake, &live, 0).await;
    assert_eq!(
        fake.challenge_status(&live).map(|s| s.0).as_deref(),
        Some("accepted")
    );
    let opp = slow_opponent(&fake, &live, Duration::from_millis(20)).await;
    wait_game(&fake, &live, 6).await;
    // A second real-time challenge finds the slot taken.
    let second = fake
        .challenge(
            "human2",
            BOT,
            &ChallengeSpec {
                clock: Some((60, 1)),
                ..ChallengeSpec::default()
            },
        )
        .unwrap();
    assert_eq!(
        decline_reason(&fake, &second).await.as_deref(),
        Some("later")
    );
    kill(bot).await;
    opp.abort();
}

/// A restart with two correspondence games, the bot's turn in one and the opponent's in the
/// other: the first is played at once (from the event stream's replay, before any check-in),
/// the second only once the opponent has moved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_plays_our_turn_at_once_and_the_other_game_when_the_opponent_moves() {
    let slow_check_in = |s: &mut Settings| {
        corr(s);
        s.correspondence.checkin_period_s = 3;
    };
    let (fake, bot) = fake_and_bot(slow_check_in).await;
    let ours = corr_challenge(&fake, HUMAN, "white", 1);
    let theirs = corr_challenge(&fake, "human2", "white", 1);
    wait_game(&fake, &ours, 0).await;
    wait_game(&fake, &theirs, 0).await;
    kill(bot).await;
    // While the bot is away the opponent moves in the first game only.
    quiet_move(&fake, &ours, HUMAN);
    let mut s = settings(&fake.url());
    slow_check_in(&mut s);
    let bot = start_bot(s);
    let took = plies_within(&fake, &ours, 2, Duration::from_secs(10)).await;
    assert!(took < Duration::from_millis(2_500), "not at once: {took:?}");
    // The other game waits for its opponent, without a stream.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(fake.game(&theirs).unwrap().moves.len(), 0);
    assert!(!fake.game_stream_open(&theirs, BOT));
    quiet_move(&fake, &theirs, "human2");
    // The next check-in (3 s) finds it.
    let took = plies_within(&fake, &theirs, 2, Duration::from_secs(10)).await;
    assert!(took < Duration::from_secs(6), "{took:?}");
    bot.stop.cancel();
    tokio::time::timeout(T, bot.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    // Shutdown leaves correspondence games running: never resigned or aborted.
    for id in [&ours, &theirs] {
        assert_eq!(fake.game(id).unwrap().status, "started", "{id}");
    }
}

/// A game with little time left to move: the think is a tenth of it, not `move_time_s`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_think_time_is_at_most_a_tenth_of_the_time_left() {
    let recorder = Arc::new(Recorder {
        patient: true,
        ..Recorder::default()
    });
    let (fake, bot) = fake_and_bot_with(Arc::new(RecorderFactory(recorder.clone())), |s| {
        corr(s);
        s.correspondence.move_time_s = 30;
    })
    .await;
    let id = corr_challenge(&fake, HUMAN, "white", 1);
    wait_game(&fake, &id, 0).await;
    quiet_move(&fake, &id, HUMAN);
    // 20 s left of the bot's day: 2 s to think.
    fake.pass_time(&id, DAY - Duration::from_secs(20)).unwrap();
    let took = plies_within(&fake, &id, 2, Duration::from_secs(15)).await;
    assert!(took < Duration::from_secs(8), "{took:?}");
    let budgets = recorder.budgets.lock().unwrap().clone();
    assert_eq!(budgets.len(), 1, "{budgets:?}");
    let hard = budgets[0].hard;
    assert!(
        hard <= Duration::from_secs(2) && hard > Duration::from_secs(1),
        "{hard:?}"
    );
    assert_eq!(fake.game(&id).unwrap().status, "started");
    kill(bot).await;
}

/// The fake's correspondence clock: the side to move loses once its days are gone, and
/// `/api/account/playing` shows what the check-in reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_serves_correspondence_games_to_the_check_in() {
    let (fake, bot) = fake_and_bot(corr).await;
    let id = corr_challenge(&fake, HUMAN, "white", 2);
    wait_game(&fake, &id, 0).await;
    kill(bot).await;
    let client = atomic_bot::lichess::client::LichessClient::new(
        &settings(&fake.url()).lichess,
        secrecy::SecretString::from(BOT_TOKEN),
    )
    .unwrap();
    let p = client.playing().await.unwrap();
    assert_eq!(p.now_playing.len(), 1);
    let g = &p.now_playing[0];
    assert_eq!(g.speed, "correspondence");
    assert!(!g.is_my_turn);
    assert_eq!(p.nb_my_turn, Some(0));
    assert!(g.seconds_left.is_some_and(|s| s > 86_400), "{g:?}");
    quiet_move(&fake, &id, HUMAN);
    let p = client.playing().await.unwrap();
    assert!(p.now_playing[0].is_my_turn);
    assert_eq!(p.nb_my_turn, Some(1));
    // Two days less a minute pass on the bot's turn: a minute left.
    fake.pass_time(&id, 2 * DAY - Duration::from_secs(60))
        .unwrap();
    let left = client.playing().await.unwrap().now_playing[0].seconds_left;
    assert!(left.is_some_and(|s| (55..=60).contains(&s)), "{left:?}");
    fake.pass_time(&id, Duration::from_secs(61)).unwrap();
    let over = fake.wait_game_over(&id, T).await.expect("flagged");
    assert_eq!(over.status, "outoftime");
    assert_eq!(over.winner.as_deref(), Some("white"));
}

/// Days in tokio's paused time, at the default periods (a check-in every 600 s, a 30 s think,
/// the stream closed 150 s after our move): the opponent moves once a day for three days; each
/// time the bot is away before it moves, finds the game at the next check-in and moves, and
/// asks `/api/account/playing` once per period, never more. The whole test takes seconds.
#[tokio::test(start_paused = true)]
async fn three_days_at_the_default_periods_in_paused_time() {
    init_tracing();
    let fake = FakeLichess::start(FakeConfig {
        accounts: accounts(),
        tick: Duration::from_secs(1),
        ..FakeConfig::default()
    })
    .await
    .expect("fake server");
    let mut s = Settings::default();
    s.lichess.url = fake.url();
    s.heartbeat.enabled = false;
    s.game.ponder = false;
    s.challenge.correspondence = true;
    // In paused time the clock jumps to the next timer whenever the runtime waits, loopback
    // reads included: the watchdog sees silences and the bot reconnects its streams now and
    // then, as it would on lichess; what is checked here is the correspondence rhythm.
    let c = s.correspondence.clone();
    let bot = start_bot(s);
    wait_connected(&fake, 1).await;
    let start = tokio::time::Instant::now();
    let id = corr_challenge(&fake, HUMAN, "white", 3);
    wait_game(&fake, &id, 0).await;
    let period = Duration::from_secs(c.checkin_period_s);
    for day in 0..3 {
        let plies = fake.game(&id).unwrap().moves.len();
        tokio::time::sleep(DAY - Duration::from_secs(3_600)).await;
        assert!(!fake.game_stream_open(&id, BOT), "day {day}: stream open");
        quiet_move(&fake, &id, HUMAN);
        let t = tokio::time::Instant::now();
        assert!(
            fake.wait_until(2 * period, |f| f.game(&id).unwrap().moves.len()
                >= plies + 2)
                .await,
            "day {day}: no move"
        );
        let took = t.elapsed();
        assert!(
            took <= period + Duration::from_secs(c.move_time_s + 30),
            "day {day}: {took:?}"
        );
        stream_closed(&fake, &id, Duration::from_secs(c.disconnect_time_s + 60)).await;
    }
    assert_eq!(fake.game(&id).unwrap().status, "started");
    let periods = (start.elapsed().as_secs() / c.checkin_period_s) as usize;
    let n = check_ins(&fake);
    assert!(
        n + 2 >= periods && n <= periods + 2,
        "{n} check-ins in {periods} periods"
    );
    kill(bot).await;
}
