//! The online move sources (`[online]`: tablebase, opening explorer, cloud eval) against the
//! fake lichess, which serves all three on its own port: the bot's hosts point at it, nothing
//! reaches the internet. Every log line of this binary is captured (at TRACE level) to check
//! what the sources log, and that the token never appears.

mod common;

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use atomic_bot::config::Settings;
use atomic_bot::fakelichess::{ChallengeSpec, FakeLichess};
use atomic_bot::lichess::client::{Endpoint, LichessClient};
use atomic_bot::lichess::online::{MoveSource, OnlineSources};
use atomic_bot::lichess::picker::{Budget, MovePicker, SimplePicker};
use atomic_chess::{Game, Position};
use common::*;
use secrecy::SecretString;
use serde_json::json;

/// Everything logged by this test binary.
fn logs() -> &'static Mutex<Vec<u8>> {
    static LOGS: OnceLock<Mutex<Vec<u8>>> = OnceLock::new();
    LOGS.get_or_init(|| Mutex::new(Vec::new()))
}

#[derive(Clone, Copy)]
struct Capture;

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        logs().lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn capture_logs() {
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(|| Capture)
            .try_init();
    });
}

fn logged() -> String {
    String::from_utf8_lossy(&logs().lock().unwrap()).into_owned()
}

/// The bot's settings with the sources pointed at the fake.
fn online(s: &mut Settings, url: &str) {
    s.online.tablebase.enabled = true;
    s.online.tablebase.url = url.to_owned();
    s.online.explorer.enabled = true;
    s.online.explorer.url = url.to_owned();
}

/// A bot with the sources pointed at a fresh fake (its settings adjusted by `tweak`), connected,
/// its logs captured.
async fn online_bot(tweak: impl FnOnce(&mut Settings)) -> (FakeLichess, Bot) {
    capture_logs();
    let fake = fake().await;
    let mut s = settings(&fake.url());
    online(&mut s, &fake.url());
    tweak(&mut s);
    let bot = start_bot(s);
    wait_connected(&fake, 1).await;
    (fake, bot)
}

/// The bot's requests to an online source.
fn asked(fake: &FakeLichess, endpoint: Endpoint) -> Vec<atomic_bot::fakelichess::RequestRecord> {
    fake.requests()
        .into_iter()
        .filter(|r| r.endpoint == Some(endpoint))
        .collect()
}

/// HUMAN (Black) challenges the bot (White) from `fen`.
fn challenge_from(fake: &FakeLichess, fen: &str) -> String {
    fake.challenge(
        HUMAN,
        BOT,
        &ChallengeSpec {
            color: "black".into(),
            clock: Some((120, 1)),
            fen: Some(fen.into()),
            ..ChallengeSpec::default()
        },
    )
    .expect("challenge")
}

/// The game as it stands.
fn replay(fake: &FakeLichess, id: &str, fen: &str) -> Game {
    let g = fake.game(id).expect("game");
    Game::from_uci_moves(Position::from_fen(fen).unwrap(), &g.moves).expect("legal moves")
}

/// HUMAN answers with the rule-based picker's move.
fn human_moves(fake: &FakeLichess, id: &str, fen: &str) {
    let game = replay(fake, id, fen);
    let budget = Budget {
        soft: Duration::ZERO,
        hard: Duration::ZERO,
        threads: 1,
    };
    let pick = SimplePicker { seed: 3 }
        .pick(&game, &budget, &AtomicBool::new(false))
        .expect("a legal move");
    fake.play(id, HUMAN, &pick.mv.to_string()).unwrap();
}

/// Kings, a white rook and pawn, a black knight: 5 units. The rule-based picker takes the
/// knight (Rxb1, +3); the table says e2e3 wins.
const SMALL: &str = "4k3/8/8/8/8/8/4P3/Rn2K3 w - - 0 1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tablebase_best_move_is_played_with_the_token_and_asked_once_per_position() {
    let (fake, bot) = online_bot(|_| {}).await;
    // Every answer carries seeded junk (new fields, re-typed numbers, odd list entries).
    fake.junk(11);
    fake.set_online_answer(
        Endpoint::Tablebase,
        SMALL,
        json!({"category": "win", "dtz": 9, "dtm": null, "moves": [
            {"uci": "a1b1", "category": "draw", "dtz": 0},
            {"uci": "e2e3", "category": "loss", "dtz": -8},
            {"uci": "e2e4", "category": "loss", "dtz": -12},
            {"uci": "e1d2", "category": "win", "dtz": 3}
        ]}),
    )
    .unwrap();
    let id = challenge_from(&fake, SMALL);
    wait_game(&fake, &id, 1).await;
    assert_eq!(fake.game(&id).unwrap().moves[0], "e2e3");
    let tb = asked(&fake, Endpoint::Tablebase);
    assert_eq!(tb.len(), 1, "{tb:?}");
    // The token went with it (the fake names the account of the token; a missing or unknown
    // token is a 401), and the FEN was in the query.
    assert_eq!(
        (tb[0].user.as_deref(), tb[0].status, tb[0].path.as_str()),
        (Some(BOT), 200, "/atomic")
    );
    // The next position comes from the fake's rule (kings and pawns only: draws).
    human_moves(&fake, &id, SMALL);
    wait_game(&fake, &id, 3).await;
    assert_eq!(asked(&fake, Endpoint::Tablebase).len(), 2);
    assert!(
        logged().contains("source=tablebase"),
        "no move line names the tablebase"
    );
    assert!(!logged().contains(BOT_TOKEN), "the token was logged");
    kill(bot).await;
}

/// A 500, a body that is no answer, an HTML 429 and a source slower than its timeout: each
/// time the search plays at once; the 429 pauses the source (no request while paused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_tablebase_falls_back_to_the_search_and_a_429_pauses_it() {
    let (fake, bot) = online_bot(|s| {
        s.online.tablebase.timeout_ms = 300;
        s.lichess.rate_limit_cooldown_ms = 2_000;
    })
    .await;
    let fen = "4k3/7p/8/8/8/8/P7/4K3 w - - 0 1";
    let turns: [(u16, &str); 3] = [
        (500, r#"{"error":"boom"}"#),
        (200, "<html><body>maintenance</body></html>"),
        (429, "<html><body>Too many requests</body></html>"),
    ];
    // The bot moves first, as soon as the game starts: its fault is queued before.
    fake.fail_next(Endpoint::Tablebase, turns[0].0, turns[0].1, 1);
    let id = challenge_from(&fake, fen);
    let mut plies = 0;
    for (i, (status, body)) in turns.into_iter().enumerate() {
        if i > 0 {
            fake.fail_next(Endpoint::Tablebase, status, body, 1);
            human_moves(&fake, &id, fen);
        }
        plies += if i == 0 { 1 } else { 2 };
        wait_plies(&fake, &id, plies).await;
        assert_eq!(fake.pending_faults(Endpoint::Tablebase), 0);
        let last = asked(&fake, Endpoint::Tablebase).pop().unwrap();
        assert_eq!(last.status, status);
    }
    // Paused: the next turn asks nothing and the bot still moves.
    let before = asked(&fake, Endpoint::Tablebase).len();
    human_moves(&fake, &id, fen);
    plies += 2;
    wait_plies(&fake, &id, plies).await;
    assert_eq!(
        asked(&fake, Endpoint::Tablebase).len(),
        before,
        "asked while paused"
    );
    // After the pause, a source slower than the timeout: given up after 300 ms.
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    fake.delay_online(Endpoint::Tablebase, Duration::from_secs(5));
    let started = Instant::now();
    human_moves(&fake, &id, fen);
    plies += 2;
    wait_plies(&fake, &id, plies).await;
    let took = started.elapsed();
    assert!(took < Duration::from_millis(2_000), "{took:?}");
    // (The fake logs a request once answered: this one, given up, is not in its log; the
    // bot's log line below shows it was sent.)
    let text = logged();
    for l in text
        .lines()
        .filter(|l| l.contains(&id) && (l.contains(" INFO ") || l.contains(" WARN ")))
    {
        eprintln!("{l}");
    }
    assert!(text.contains("HTTP 429: pausing this source"), "{text}");
    assert!(text.contains("no answer within 300 ms"), "{text}");
    assert!(!text.contains(BOT_TOKEN), "the token was logged");
    kill(bot).await;
}

/// The first plies come from the book (the only move over both thresholds here); a book move
/// that lets the opponent blow up our king is refused by the safety check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_book_move_is_played_unless_the_search_sees_it_losing() {
    let (fake, bot) = online_bot(|_| {}).await;
    let start = Position::startpos().to_fen();
    fake.set_online_answer(
        Endpoint::Explorer,
        &start,
        json!({"white": 1, "draws": 0, "black": 1, "moves": [
            {"uci": "b1c3", "white": 600, "draws": 20, "black": 380},
            {"uci": "e2e4", "white": 5, "draws": 0, "black": 0},
            {"uci": "g1f3", "white": 100, "draws": 0, "black": 400}
        ]}),
    )
    .unwrap();
    let id = challenge_bot(&fake, "black", Some((120, 1)));
    wait_game(&fake, &id, 1).await;
    assert_eq!(fake.game(&id).unwrap().moves[0], "b1c3");
    let ex = asked(&fake, Endpoint::Explorer);
    assert_eq!(
        (ex[0].user.as_deref(), ex[0].path.as_str()),
        (Some(BOT), "/lichess")
    );
    kill(bot).await;

    // Black to move after 1. Nf3 a6 2. Ng5: a6a5 lets Nxf7 explode the king.
    let (fake, bot) = online_bot(|_| {}).await;
    let game = Game::from_uci_moves(Position::startpos(), &["g1f3", "a7a6", "f3g5"]).unwrap();
    let fen = game.position().to_fen();
    fake.set_online_answer(
        Endpoint::Explorer,
        &fen,
        json!({"moves": [{"uci": "a6a5", "white": 100, "draws": 0, "black": 900}]}),
    )
    .unwrap();
    let id = fake
        .challenge(
            HUMAN,
            BOT,
            &ChallengeSpec {
                color: "white".into(),
                clock: Some((120, 1)),
                fen: Some(fen.clone()),
                ..ChallengeSpec::default()
            },
        )
        .unwrap();
    wait_game(&fake, &id, 1).await;
    assert_ne!(fake.game(&id).unwrap().moves[0], "a6a5");
    for l in logged()
        .lines()
        .filter(|l| l.contains(&id) && l.contains("source"))
    {
        eprintln!("{l}");
    }
    assert_eq!(asked(&fake, Endpoint::Explorer).len(), 1);
    assert!(
        logged().contains("book move refused by the safety check"),
        "{}",
        logged()
    );
    kill(bot).await;
}

fn client(fake: &FakeLichess) -> LichessClient {
    let s = settings(&fake.url());
    LichessClient::new(&s.lichess, SecretString::from(BOT_TOKEN)).unwrap()
}

const BUDGET: Budget = Budget {
    soft: Duration::from_secs(5),
    hard: Duration::from_secs(10),
    threads: 1,
};

/// The weighted choice varies with the seed, stays among the moves over the thresholds, and a
/// position asked twice is answered from the game's cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn book_choices_vary_with_the_seed_and_answers_are_cached() {
    capture_logs();
    let fake = fake().await;
    let client = client(&fake);
    let mut s = settings(&fake.url());
    online(&mut s, &fake.url());
    let game = Game::new(Position::startpos());
    let mut seen = std::collections::HashSet::new();
    for seed in 1..=12u64 {
        s.online.explorer.seed = seed;
        let sources = OnlineSources::new(&s.online, &client, "game1").unwrap();
        let a = sources.advise(&game, &BUDGET).await.expect("a book move");
        assert_eq!(a.source, MoveSource::Book);
        let uci = a.mv.to_string();
        // The built-in book: b1c3 has 7 games, c2c3 and e2e4 score below 45 %.
        assert!(["g1f3", "e2e3", "d2d4"].contains(&uci.as_str()), "{uci}");
        seen.insert(uci.clone());
        // Asked again: the same answer, from the cache (one request per seed in all).
        let again = sources.advise(&game, &BUDGET).await.unwrap();
        assert_eq!(again.mv.to_string(), uci);
        assert_eq!(asked(&fake, Endpoint::Explorer).len() as u64, seed);
    }
    assert!(seen.len() >= 2, "{seen:?}");
}

/// lichess has no cloud evaluation for most atomic positions: a 404 is cached and logged at
/// debug level only; the start position has one, used as a book after the check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloud_eval_404_falls_back_quietly() {
    capture_logs();
    let fake = fake().await;
    let client = client(&fake);
    let mut s = settings(&fake.url());
    s.online.cloud_eval.enabled = true;
    let sources = OnlineSources::new(&s.online, &client, "game2").unwrap();
    let game = Game::from_uci_moves(Position::startpos(), &["h2h4"]).unwrap();
    assert_eq!(sources.advise(&game, &BUDGET).await, None);
    assert_eq!(sources.advise(&game, &BUDGET).await, None);
    let cloud = asked(&fake, Endpoint::CloudEval);
    assert_eq!(cloud.len(), 1, "the 404 was not cached");
    assert_eq!(
        (cloud[0].status, cloud[0].user.as_deref()),
        (404, Some(BOT))
    );
    let noisy = logged()
        .lines()
        .filter(|l| l.contains("endpoint=cloud eval") && !l.contains("DEBUG"))
        .map(str::to_owned)
        .collect::<Vec<_>>();
    assert!(noisy.is_empty(), "{noisy:?}");
    let start = Game::new(Position::startpos());
    let a = sources.advise(&start, &BUDGET).await.unwrap();
    assert_eq!(
        (a.source, a.mv.to_string()),
        (MoveSource::Cloud, "g1f3".into())
    );
    assert!(a.check.is_some());
    // Not deep enough for a stricter owner.
    s.online.cloud_eval.min_depth = 40;
    let strict = OnlineSources::new(&s.online, &client, "game3").unwrap();
    assert_eq!(strict.advise(&start, &BUDGET).await, None);
}

/// A game where both sources play, with the bot's real search (alpha-beta) checking the book
/// move: the book's capture leaves five units, then the tablebase (the fake's rule) answers.
/// Its log lines are printed (`--nocapture` shows them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_with_the_book_then_the_tablebase() {
    capture_logs();
    let fake = fake().await;
    let mut s = settings(&fake.url());
    online(&mut s, &fake.url());
    s.chat.cooldown_s = 0;
    // The book move's safety check is a search: this test pins the evaluation it was written
    // with (the linear one accepts cxd5 here; the plumbing, not the judgement, is under test).
    s.search.eval_file = Some("<linear>".into());
    let search = s.search.clone();
    let pickers = atomic_bot::lichess::app::pickers(&search).expect("no network file to load");
    let bot = start_bot_with(s, pickers);
    wait_connected(&fake, 1).await;
    // 7 units: cxd5 takes the knight for a pawn and leaves 5.
    let fen = "7k/1p4p1/8/3n4/2P5/8/P7/K7 w - - 0 1";
    fake.set_online_answer(
        Endpoint::Explorer,
        fen,
        json!({"moves": [{"uci": "c4d5", "white": 80, "draws": 5, "black": 15}]}),
    )
    .unwrap();
    let id = challenge_from(&fake, fen);
    wait_game(&fake, &id, 1).await;
    assert_eq!(fake.game(&id).unwrap().moves[0], "c4d5");
    for ply in [3, 5] {
        human_moves(&fake, &id, fen);
        wait_game(&fake, &id, ply).await;
    }
    assert_eq!(asked(&fake, Endpoint::Tablebase).len(), 2);
    // `!eval` says where the last move came from.
    fake.push_game_line(
        &id,
        r#"{"type":"chatLine","room":"player","username":"Human1","text":"!eval"}"#,
    );
    assert!(
        fake.wait_until(Duration::from_secs(10), |f| f.chat(&id).iter().any(
            |(u, t)| u == BOT && t.starts_with("Move from the tablebase (draw)")
        ))
        .await,
        "an !eval reply naming the tablebase: {:?}",
        fake.chat(&id)
    );
    let text = logged();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(&id) && l.contains(" move "))
        .collect();
    for l in &lines {
        eprintln!("{l}");
    }
    assert!(lines.iter().any(|l| l.contains("source=book")), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("source=tablebase")),
        "{lines:?}"
    );
    assert!(!text.contains(BOT_TOKEN), "the token was logged");
    kill(bot).await;
}

/// All of `fen`'s legal moves in a tablebase answer: `best` a draw, every other move a win for
/// the opponent.
fn only_one_saves(fen: &str, best: &str) -> serde_json::Value {
    let pos = Position::from_fen(fen).unwrap();
    let mut moves = vec![json!({"uci": best, "category": "draw", "dtz": 0})];
    for m in pos.legal_moves() {
        if m.to_string() != best {
            moves.push(json!({"uci": m.to_string(), "category": "win", "dtz": 5}));
        }
    }
    json!({"category": "draw", "dtz": 0, "moves": moves})
}

/// The tablebase answers twice, the kings walk there and back, and when the position comes
/// back (other move counters: a new request) the tablebase fails: the search plays, but only
/// among the moves the first answer said do not lose (here one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_answer_the_search_keeps_to_what_the_tablebase_said_before() {
    let (fake, bot) = online_bot(|_| {}).await;
    let q = "1n2k3/8/8/8/8/8/4P3/R3K3 w - - 0 1";
    let q2 = "1n1k4/8/8/8/8/8/4P3/R4K2 w - - 2 2";
    fake.set_online_answer(Endpoint::Tablebase, q, only_one_saves(q, "e1f1"))
        .unwrap();
    fake.set_online_answer(Endpoint::Tablebase, q2, only_one_saves(q2, "f1e1"))
        .unwrap();
    let id = challenge_from(&fake, q);
    wait_plies(&fake, &id, 1).await;
    fake.play(&id, HUMAN, "e8d8").unwrap();
    wait_plies(&fake, &id, 3).await;
    fake.fail_next(Endpoint::Tablebase, 500, r#"{"error":"boom"}"#, 1);
    fake.play(&id, HUMAN, "d8e8").unwrap();
    wait_plies(&fake, &id, 5).await;
    assert_eq!(fake.pending_faults(Endpoint::Tablebase), 0);
    let moves = fake.game(&id).unwrap().moves;
    assert_eq!(moves, ["e1f1", "e8d8", "f1e1", "d8e8", "e1f1"]);
    let text = logged();
    let line = text
        .lines()
        .find(|l| l.contains(&id) && l.contains("the moves its known results keep best"))
        .unwrap_or_else(|| panic!("no restricted search logged: {text}"));
    assert!(line.contains("moves=1"), "{line}");
    kill(bot).await;
}
