//! End-to-end tests of the bot against the local lichess-compatible server on 127.0.0.1:0.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use atomic_bot::fakelichess::{Castling, ChallengeSpec, FakeConfig, FakeLichess};
use atomic_bot::lichess::client::Endpoint;
use atomic_bot::lichess::picker::{Budget, MovePicker, Pick, PickerFactory, SimplePicker};
use atomic_chess::Game;
use common::*;

const T: Duration = Duration::from_secs(30);

/// Lichess's 400 body for a move it refuses.
const NOT_YOUR_TURN: &str = "{\"error\":\"Not your turn, or game already over\"}";

fn spec(clock: Option<(u32, u32)>) -> ChallengeSpec {
    ChallengeSpec {
        clock,
        ..ChallengeSpec::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_game_accepted_and_played_to_a_result_with_legal_moves() {
    let fake = fake().await;
    let dir = tempfile::Builder::new()
        .prefix("atomic-bot-pgn-")
        .tempdir()
        .unwrap();
    let mut s = settings(&fake.url());
    s.game.pgn_dir = Some(dir.path().to_owned());
    let mut bot = start_bot(s);
    wait_connected(&fake, 1).await;
    let id = challenge_bot(&fake, "random", Some((60, 1)));
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some()).await,
        "not accepted"
    );
    let opp = opponent(&fake.url(), HUMAN_TOKEN, &id).await;
    let g = fake.wait_game_over(&id, T).await.expect("game over");
    assert_ne!(g.status, "aborted");
    assert_legal(&g.moves);
    let report = tokio::time::timeout(T, bot.reports.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.id, id);
    assert_eq!(report.status, g.status);
    // No move of ours was ever refused, and the greeting and goodbye were sent.
    assert!(bot_moves(&fake, &id).iter().all(|r| r.status == 200));
    let chat = fake.chat(&id);
    assert!(
        chat.iter().any(|(u, t)| u == BOT && t == "hi Human1"),
        "{chat:?}"
    );
    assert!(chat.iter().any(|(u, t)| u == BOT && t == "gg"), "{chat:?}");
    // The User-Agent identifies the bot.
    assert!(
        fake.requests()
            .iter()
            .filter(|r| r.user.as_deref() == Some(BOT) && r.endpoint == Some(Endpoint::Move))
            .all(|r| r.user_agent.starts_with("atomic-bot/")
                && r.user_agent.ends_with("user:AtomicBot"))
    );
    // PGN appended with the usual headers.
    let pgn = std::fs::read_to_string(dir.path().join("atomic-bot.pgn")).unwrap();
    for h in [
        "[Event \"Casual Atomic game\"]",
        "[Variant \"Atomic\"]",
        "[TimeControl \"60+1\"]",
        "[White ",
        "[Black ",
        "[Date ",
        "[Site ",
        "[Termination ",
    ] {
        assert!(pgn.contains(h), "{h} missing in {pgn}");
    }
    assert!(pgn.contains(&format!("[Result \"{}\"]", report.result)));
    let _ = opp.await;
    stop_cleanly(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_policy_rule_declines_with_its_reason() {
    let (fake, bot) = fake_and_bot(|s| {
        s.challenge.max_initial_s = 600;
        s.challenge.block_list = vec!["human3".into()];
        s.challenge.modes = vec!["casual".into()];
    })
    .await;
    let cases: Vec<(&str, ChallengeSpec, &str)> = vec![
        (
            HUMAN,
            ChallengeSpec {
                variant: "standard".into(),
                ..spec(Some((180, 2)))
            },
            "variant",
        ),
        (HUMAN, spec(Some((15, 0))), "toofast"),
        (HUMAN, spec(Some((1200, 0))), "tooslow"),
        (
            HUMAN,
            ChallengeSpec {
                clock: None,
                days: Some(3),
                ..ChallengeSpec::default()
            },
            "timecontrol",
        ),
        (
            HUMAN,
            ChallengeSpec {
                clock: None,
                days: None,
                ..ChallengeSpec::default()
            },
            "timecontrol",
        ),
        (
            HUMAN,
            ChallengeSpec {
                rated: true,
                ..spec(Some((180, 2)))
            },
            "casual",
        ),
        ("human3", spec(Some((180, 2))), "generic"),
    ];
    let mut ids = Vec::new();
    for (from, sp, reason) in &cases {
        ids.push((fake.challenge(from, BOT, sp).unwrap(), *reason));
    }
    for (id, reason) in &ids {
        assert_eq!(decline_reason(&fake, id).await.as_deref(), Some(*reason));
    }
    bot.stop.cancel();
    let _ = bot.task.await;

    // Bots / humans.
    let fake = common::fake().await;
    let mut s = settings(&fake.url());
    s.challenge.accept_bots = false;
    let bot = start_bot(s);
    wait_connected(&fake, 1).await;
    let id = fake
        .challenge(OTHER_BOT, BOT, &spec(Some((180, 2))))
        .unwrap();
    assert_eq!(decline_reason(&fake, &id).await.as_deref(), Some("nobot"));
    bot.stop.cancel();
    let _ = bot.task.await;
    let fake = common::fake().await;
    let mut s = settings(&fake.url());
    s.challenge.only_bots = true;
    s.challenge.allow_list = vec![];
    let bot = start_bot(s);
    wait_connected(&fake, 1).await;
    let id = challenge_bot(&fake, "random", Some((180, 2)));
    assert_eq!(decline_reason(&fake, &id).await.as_deref(), Some("onlybot"));
    bot.stop.cancel();
    let _ = bot.task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_limit_is_never_exceeded_and_the_queue_drains() {
    let fake = fake().await;
    let mut s = settings(&fake.url());
    s.challenge.max_games = 2;
    s.challenge.queue_size = 1;
    // Opponents never move: the bot aborts after 1 s, which frees the slots.
    s.game.abort_after_s = 1;
    let bot = start_bot(s);
    wait_connected(&fake, 1).await;
    let from = ["human1", "human2", "human3", "otherbot", "human1"];
    let ids: Vec<String> = from
        .iter()
        .map(|f| {
            fake.challenge(
                f,
                BOT,
                &ChallengeSpec {
                    color: "black".into(),
                    ..spec(Some((60, 0)))
                },
            )
            .unwrap()
        })
        .collect();
    let mut max_seen = 0;
    let deadline = tokio::time::Instant::now() + T;
    loop {
        max_seen = max_seen.max(fake.running_games(BOT));
        let answered = ids
            .iter()
            .filter(|id| fake.challenge_status(id).is_some_and(|s| s.0 != "created"))
            .count();
        let games_over = fake
            .game_ids()
            .iter()
            .all(|g| fake.game(g).is_some_and(|s| s.is_over()));
        if answered == ids.len() && games_over && fake.game_ids().len() == 3 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timeout; {max_seen}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(max_seen <= 2, "{max_seen} games at once");
    assert_eq!(max_seen, 2);
    // 2 accepted at once, 1 queued then accepted, 2 declined with `later`.
    let later = ids
        .iter()
        .filter(|id| fake.challenge_status(id).unwrap().1.as_deref() == Some("later"))
        .count();
    assert_eq!(later, 2);
    for g in fake.game_ids() {
        assert_eq!(fake.game(&g).unwrap().status, "aborted");
    }
    bot.stop.cancel();
    let _ = bot.task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_and_game_streams_cut_mid_game_reconnect_and_finish() {
    let (fake, bot) = fake_and_bot(|_| {}).await;
    let id = challenge_bot(&fake, "random", Some((60, 1)));
    wait_game(&fake, &id, 0).await;
    // The opponent thinks 30 ms a move so the cut lands mid-game.
    let opp = slow_opponent(&fake, &id, Duration::from_millis(30)).await;
    wait_game(&fake, &id, 6).await;
    fake.cut_streams();
    let g = fake
        .wait_game_over(&id, T)
        .await
        .expect("finished after the cut");
    assert!(g.moves.len() > 6);
    assert_ne!(g.status, "aborted");
    assert!(
        fake.event_stream_connections(BOT) >= 2,
        "event stream not reopened"
    );
    let game_streams = fake
        .requests()
        .iter()
        .filter(|r| r.user.as_deref() == Some(BOT) && r.endpoint == Some(Endpoint::GameStream))
        .count();
    assert!(game_streams >= 2);
    let _ = opp.await;
    bot.stop.cancel();
    let _ = bot.task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_event_stream_is_dropped_by_the_watchdog() {
    let fake = fake().await;
    fake.silence_next_event_streams(1);
    let mut s = settings(&fake.url());
    s.lichess.stream_idle_timeout_ms = 300;
    let bot = start_bot(s);
    wait_connected(&fake, 2).await;
    let id = challenge_bot(&fake, "random", Some((60, 1)));
    assert!(
        fake.wait_until(T, |f| f
            .challenge_status(&id)
            .is_some_and(|s| s.0 == "accepted"))
            .await
    );
    kill(bot).await;
}

/// Issue 28: the supervisor re-created the event-stream read on every turn of its `select!`,
/// and its 5 s tick restarted the idle timeout inside that read, so a silent event stream was
/// never dropped while the idle timeout was above the tick (the default is 20 s). The watchdog
/// must run from the last byte received, whatever the loop does meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_event_stream_is_replaced_in_time_while_a_game_runs_and_the_tick_fires() {
    let fake = fake().await;
    let idle = Duration::from_millis(6_000);
    let mut s = settings(&fake.url());
    s.lichess.stream_idle_timeout_ms = idle.as_millis() as u64;
    let bot = start_bot(s);
    wait_connected(&fake, 1).await;
    // The human plays black and thinks two seconds a move: the game runs all along.
    let id = challenge_bot(&fake, "black", Some((300, 0)));
    wait_game(&fake, &id, 1).await;
    let opp = slow_opponent(&fake, &id, Duration::from_secs(2)).await;
    wait_game(&fake, &id, 2).await;
    fake.silence_next_event_streams(1);
    fake.cut_streams();
    assert!(
        fake.wait_until(T, |f| f.event_stream_connections(BOT) >= 2)
            .await
    );
    let silent_since = tokio::time::Instant::now();
    assert!(
        fake.wait_until(idle * 3, |f| f.event_stream_connections(BOT) >= 3)
            .await,
        "the silent event stream was never replaced"
    );
    let replaced = silent_since.elapsed();
    assert!(
        replaced >= idle - Duration::from_millis(500) && replaced <= idle + Duration::from_secs(1),
        "replaced after {replaced:?} (idle timeout {idle:?})"
    );
    assert!(
        fake.game(&id).is_some_and(|g| !g.is_over()),
        "the game ended"
    );
    opp.abort();
    kill(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_on_the_move_endpoint_waits_the_cooldown_without_hammering() {
    let fake = fake().await;
    let s = settings(&fake.url());
    let cooldown = Duration::from_millis(s.lichess.rate_limit_cooldown_ms);
    let bot = start_bot(s);
    wait_connected(&fake, 1).await;
    fake.fail_next(
        Endpoint::Move,
        429,
        "<html><body>Too many requests</body></html>",
        1,
    );
    // The bot is white: its first move gets the 429.
    let id = challenge_bot(&fake, "black", Some((60, 1)));
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some_and(|g| !g.moves.is_empty()))
            .await,
        "no move after the cooldown"
    );
    let moves = bot_moves(&fake, &id);
    assert_eq!(moves.len(), 2, "{moves:?}");
    assert_eq!(moves[0].status, 429);
    assert_eq!(moves[1].status, 200);
    assert!(
        moves[1].at - moves[0].at >= cooldown,
        "retried after {:?}",
        moves[1].at - moves[0].at
    );
    kill(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_is_retried() {
    let (fake, bot) = fake_and_bot(|_| {}).await;
    fake.fail_next(Endpoint::Accept, 500, "{\"error\":\"boom\"}", 2);
    fake.fail_next(Endpoint::Move, 502, "<html>bad gateway</html>", 2);
    let id = challenge_bot(&fake, "black", Some((60, 1)));
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some_and(|g| !g.moves.is_empty()))
            .await
    );
    let moves = bot_moves(&fake, &id);
    assert_eq!(
        moves.iter().map(|r| r.status).collect::<Vec<_>>(),
        vec![502, 502, 200]
    );
    kill(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_lines_unknown_events_and_fields_are_ignored() {
    let (fake, bot) = fake_and_bot(|_| {}).await;
    for line in [
        "this is not json",
        "{\"type\":\"gameStart\",\"game\":42}",
        "[1,2,3]",
        "{\"type\":\"brandNewEvent\",\"payload\":{\"x\":1}}",
        "{\"no_type\":true}",
        "{\"type\":\"challenge\"",
    ] {
        fake.push_event_line(BOT, line);
    }
    let id = challenge_bot(&fake, "random", Some((60, 1)));
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some()).await,
        "not accepted after junk"
    );
    let opp = slow_opponent(&fake, &id, Duration::from_millis(20)).await;
    wait_game(&fake, &id, 2).await;
    for line in [
        "garbage {",
        "{\"type\":\"gameState\",\"moves\":42}",
        "{\"type\":\"somethingNew\",\"a\":1}",
        "{\"type\":\"chatLine\",\"room\":\"player\",\"username\":\"x\",\"text\":\"hi\",\"extra\":[1]}",
        "{\"type\":\"gameState\",\"moves\":\"e2e4 zz99\",\"status\":\"started\"}",
    ] {
        fake.push_game_line(&id, line);
    }
    let g = fake.wait_game_over(&id, T).await.expect("game over");
    assert_legal(&g.moves);
    assert!(bot_moves(&fake, &id).iter().all(|r| r.status == 200));
    let _ = opp.await;
    stop_cleanly(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn castling_reported_as_king_takes_rook_keeps_the_position_in_sync() {
    let fake = fake_with(FakeConfig {
        castling: Castling::KingTakesRook,
        ..FakeConfig::default()
    })
    .await;
    // The bot (white) castles short as e1g1; the server writes e1h1.
    let bot = start_bot_with(
        settings(&fake.url()),
        ScriptedFactory::new(
            &["g1f3", "e2e3", "f1e2", "e1g1", "a2a3", "h2h3"],
            Duration::ZERO,
        ),
    );
    wait_connected(&fake, 1).await;
    let id = challenge_bot(&fake, "black", Some((60, 1)));
    wait_game(&fake, &id, 0).await;
    let opp = opponent_with(
        &fake.url(),
        HUMAN_TOKEN,
        &id,
        ScriptedFactory::new(
            &["a7a6", "a6a5", "b7b6", "b6b5", "h7h6", "h6h5"],
            Duration::ZERO,
        ),
    )
    .await;
    assert!(
        fake.wait_until(T, |f| f
            .game(&id)
            .is_some_and(|g| g.moves.len() >= 10 || g.is_over()))
            .await
    );
    let g = fake.game(&id).unwrap();
    assert_eq!(
        &g.moves[..8],
        &[
            "g1f3", "a7a6", "e2e3", "a6a5", "f1e2", "b7b6", "e1h1", "b6b5"
        ]
    );
    assert_eq!(
        g.moves[8], "a2a3",
        "the bot lost sync after castling: {:?}",
        g.moves
    );
    assert!(bot_moves(&fake, &id).iter().all(|r| r.status == 200));
    opp.abort();
    kill(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offers_only_game_states_never_cause_a_double_move() {
    // The bot thinks 150 ms per move, so the offer states arrive while it thinks.
    let pickers = ScriptedFactory::new(&[], Duration::from_millis(150));
    let (fake, bot) = fake_and_bot_with(pickers, |_| {}).await;
    let id = challenge_bot(&fake, "white", Some((120, 1)));
    wait_game(&fake, &id, 0).await;
    // Human is white. Each turn: move, then immediately offer a draw and a takeback.
    let script = ["a2a3", "a3a4", "h2h3", "h3h4", "b2b3"];
    for (i, mv) in script.iter().enumerate() {
        let ply = 2 * i;
        assert!(
            fake.wait_until(T, |f| f
                .game(&id)
                .is_some_and(|g| g.moves.len() == ply || g.is_over()))
                .await
        );
        if fake.game(&id).unwrap().is_over() {
            break;
        }
        if fake.play(&id, HUMAN, mv).is_err() {
            break;
        }
        let _ = fake.draw(&id, HUMAN, true);
        if ply >= 2 {
            let _ = fake.takeback(&id, HUMAN, true);
        }
        assert!(
            fake.wait_until(T, |f| f
                .game(&id)
                .is_some_and(|g| g.moves.len() == ply + 2 || g.is_over()))
                .await
        );
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    let moves = bot_moves(&fake, &id);
    assert!(
        moves.iter().all(|r| r.status == 200),
        "a move was refused: {moves:?}"
    );
    let g = fake.game(&id).unwrap();
    assert_eq!(
        moves.len(),
        g.moves.len() / 2,
        "{:?} vs {:?}",
        moves,
        g.moves
    );
    // The offers were answered: draw declined by evaluation, takebacks declined by default.
    let reqs = fake.requests();
    assert!(
        reqs.iter()
            .any(|r| r.user.as_deref() == Some(BOT) && r.path.ends_with("/draw/no"))
    );
    assert!(
        reqs.iter()
            .any(|r| r.user.as_deref() == Some(BOT) && r.path.ends_with("/takeback/no"))
    );
    kill(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_game_and_restarted_resumes_from_the_replayed_game_start() {
    let (fake, bot) = fake_and_bot(|_| {}).await;
    let id = challenge_bot(&fake, "random", Some((60, 1)));
    wait_game(&fake, &id, 0).await;
    let opp = slow_opponent(&fake, &id, Duration::from_millis(40)).await;
    wait_game(&fake, &id, 4).await;
    // Kill: the whole bot (supervisor and game tasks) disappears at once.
    bot.task.abort();
    let _ = bot.task.await;
    let before = bot_moves(&fake, &id).len();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut bot2 = start_bot(settings(&fake.url()));
    let g = fake
        .wait_game_over(&id, T)
        .await
        .expect("finished after restart");
    assert_legal(&g.moves);
    assert_ne!(g.status, "aborted");
    assert!(
        bot_moves(&fake, &id).len() > before,
        "no move after the restart"
    );
    let report = tokio::time::timeout(T, bot2.reports.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.id, id);
    let _ = opp.await;
    bot2.stop.cancel();
    let _ = bot2.task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opponent_gone_win_is_claimed_and_silent_opponent_is_aborted() {
    let (fake, bot) = fake_and_bot(|s| s.game.abort_after_s = 1).await;
    // Game 1: the opponent leaves after both moved; the bot claims the win.
    let id = challenge_bot(&fake, "white", Some((120, 1)));
    wait_game(&fake, &id, 0).await;
    fake.play(&id, HUMAN, "a2a3").unwrap();
    wait_plies(&fake, &id, 2).await;
    fake.play(&id, HUMAN, "a3a4").unwrap();
    wait_plies(&fake, &id, 4).await;
    fake.opponent_gone(&id, HUMAN, Duration::from_millis(300))
        .unwrap();
    let g = fake.wait_game_over(&id, T).await.unwrap();
    assert_eq!(g.status, "timeout");
    assert_eq!(g.winner.as_deref(), Some("black"));
    // Game 2: the opponent (white) never moves: the bot aborts.
    let id = challenge_bot(&fake, "white", Some((120, 1)));
    let g = fake.wait_game_over(&id, T).await.unwrap();
    assert_eq!(g.status, "aborted");
    assert!(bot_requests_soon(&fake, &format!("/api/bot/game/{id}/abort")).await);
    bot.stop.cancel();
    let _ = bot.task.await;
}

/// In a game without a clock lichess lets nobody claim the win over an opponent who left,
/// only a draw (its `forceResignable` needs a clock, and the opponent's clock would never end
/// the game): the bot claims the win, is refused, and claims the draw.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_clock_a_refused_win_claim_becomes_a_draw_claim() {
    let (fake, bot) = fake_and_bot(|s| s.challenge.unlimited = true).await;
    let id = challenge_bot(&fake, "white", None);
    wait_game(&fake, &id, 0).await;
    fake.play(&id, HUMAN, "a2a3").unwrap();
    wait_plies(&fake, &id, 2).await;
    fake.play(&id, HUMAN, "a3a4").unwrap();
    wait_plies(&fake, &id, 4).await;
    fake.opponent_gone(&id, HUMAN, Duration::from_millis(300))
        .unwrap();
    let g = fake.wait_game_over(&id, T).await.unwrap();
    assert_eq!((g.status.as_str(), g.winner.as_deref()), ("timeout", None));
    // The fake logs a request after its handler has answered, and the handler ends the game:
    // on a busy machine the test can see the game over before the claim that ended it is in
    // the log.
    let bot_claims = |f: &FakeLichess| -> Vec<_> {
        f.requests()
            .into_iter()
            .filter(|r| {
                r.user.as_deref() == Some(BOT)
                    && matches!(
                        r.endpoint,
                        Some(Endpoint::ClaimVictory | Endpoint::ClaimDraw)
                    )
            })
            .map(|r| (r.endpoint, r.status))
            .collect()
    };
    fake.wait_until(Duration::from_secs(5), |f| {
        bot_claims(f)
            .iter()
            .any(|c| c.0 == Some(Endpoint::ClaimDraw))
    })
    .await;
    let claims = bot_claims(&fake);
    assert_eq!(
        claims,
        vec![
            (Some(Endpoint::ClaimVictory), 400),
            (Some(Endpoint::ClaimDraw), 200)
        ]
    );
    bot.stop.cancel();
    let _ = bot.task.await;
}

/// A game from a FEN with Black to move: the bot (Black) moves first, and the opponent's
/// first move is White's reply at ply 1. If it never comes, the bot aborts (the fake's own
/// first-move deadline is set far beyond the test so only the bot can abort).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_opponent_is_aborted_in_a_game_where_black_moves_first() {
    let fake = fake_with(FakeConfig {
        first_move_timeout: Duration::from_secs(120),
        ..FakeConfig::default()
    })
    .await;
    let mut s = settings(&fake.url());
    s.game.abort_after_s = 1;
    let bot = start_bot(s);
    wait_connected(&fake, 1).await;
    let id = fake
        .challenge(
            HUMAN,
            BOT,
            &ChallengeSpec {
                color: "white".into(),
                fen: Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into()),
                ..spec(Some((120, 1)))
            },
        )
        .unwrap();
    let g = fake.wait_game_over(&id, Duration::from_secs(15)).await;
    let g = g.expect("the bot did not abort the game");
    assert_eq!(g.status, "aborted");
    assert_eq!(g.moves.len(), 1, "the bot moved first: {:?}", g.moves);
    assert!(bot_requests_soon(&fake, &format!("/api/bot/game/{id}/abort")).await);
    bot.stop.cancel();
    let _ = bot.task.await;
}

/// Every game the bot plays is counted, also those without a normal result: an aborted one
/// as aborted, one whose game stream lichess refuses ("gone") as left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborted_and_left_games_are_counted_in_the_metrics() {
    let (fake, mut bot) = fake_and_bot(|s| s.game.abort_after_s = 1).await;
    // The opponent (white) never moves: aborted.
    let id = challenge_bot(&fake, "white", Some((120, 1)));
    let report = tokio::time::timeout(T, bot.reports.recv()).await.unwrap();
    assert_eq!(
        report.map(|r| (r.id, r.status)),
        Some((id, "aborted".into()))
    );
    assert_eq!(bot.counters.games_aborted.load(Ordering::SeqCst), 1);
    // Lichess refuses the game stream: the bot leaves the game.
    fake.fail_next(Endpoint::GameStream, 404, "{\"error\":\"No such game\"}", 1);
    let id = challenge_bot(&fake, "white", Some((120, 1)));
    let report = tokio::time::timeout(T, bot.reports.recv()).await.unwrap();
    assert_eq!(report.map(|r| (r.id, r.status)), Some((id, "gone".into())));
    assert_eq!(bot.counters.games_left.load(Ordering::SeqCst), 1);
    assert_eq!(bot.counters.games_played.load(Ordering::SeqCst), 0);
    let body = bot.counters.render();
    assert!(body.contains("atomic_bot_games_left_total 1"), "{body}");
    kill(bot).await;
}

/// Lichess never aborts a correspondence game, and its players may take hours: the short
/// real-time `abort_after_s` does not apply to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correspondence_game_is_not_aborted_after_the_real_time_first_move_wait() {
    let (fake, bot) = fake_and_bot(|s| {
        s.challenge.correspondence = true;
        s.game.abort_after_s = 1;
    })
    .await;
    let id = fake
        .challenge(
            HUMAN,
            BOT,
            &ChallengeSpec {
                color: "white".into(),
                clock: None,
                days: Some(3),
                ..ChallengeSpec::default()
            },
        )
        .unwrap();
    wait_game(&fake, &id, 0).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(fake.game(&id).unwrap().status, "started");
    assert!(!bot_requested(&fake, &format!("/api/bot/game/{id}/abort")));
    kill(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_declines_new_challenges_and_resigns_after_the_grace_period() {
    let (fake, bot) = fake_and_bot(|s| {
        s.shutdown.mode = atomic_bot::config::ShutdownMode::Resign;
        s.shutdown.grace_s = 0;
    })
    .await;
    let id = challenge_bot(&fake, "white", Some((120, 1)));
    wait_game(&fake, &id, 0).await;
    fake.play(&id, HUMAN, "a2a3").unwrap();
    wait_plies(&fake, &id, 2).await;
    fake.play(&id, HUMAN, "a3a4").unwrap();
    wait_plies(&fake, &id, 4).await;
    bot.stop.cancel();
    let r = tokio::time::timeout(T, bot.task)
        .await
        .expect("exits")
        .unwrap();
    assert!(r.is_ok());
    let g = fake.game(&id).unwrap();
    assert_eq!(g.status, "resign");
    assert_eq!(g.winner.as_deref(), Some("white"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthorized_and_non_bot_accounts_stop_with_clear_errors() {
    let fake = fake().await;
    let s = settings(&fake.url());
    let client = atomic_bot::lichess::client::LichessClient::new(
        &s.lichess,
        secrecy::SecretString::from("lip_wrong"),
    )
    .unwrap();
    let sup = atomic_bot::lichess::supervisor::Supervisor::new(
        Arc::new(s.clone()),
        client,
        Arc::new(atomic_bot::lichess::picker::SimplePickerFactory::default()),
    );
    let e = sup
        .run(tokio_util::sync::CancellationToken::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("401") && e.contains("LICHESS_BOT_TOKEN"), "{e}");
    assert!(!e.contains("lip_wrong"));
    let client = atomic_bot::lichess::client::LichessClient::new(
        &s.lichess,
        secrecy::SecretString::from("lip_notabot"),
    )
    .unwrap();
    let sup = atomic_bot::lichess::supervisor::Supervisor::new(
        Arc::new(s),
        client,
        Arc::new(atomic_bot::lichess::picker::SimplePickerFactory::default()),
    );
    let e = sup
        .run(tokio_util::sync::CancellationToken::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not a BOT account") && e.contains("atomic-bot upgrade"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_move_resyncs_from_the_stream_and_moves_once() {
    let (fake, bot) = fake_and_bot(|_| {}).await;
    fake.fail_next(Endpoint::Move, 400, NOT_YOUR_TURN, 1);
    let id = challenge_bot(&fake, "black", Some((60, 1)));
    wait_plies(&fake, &id, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let moves = bot_moves(&fake, &id);
    assert_eq!(
        moves.iter().map(|r| r.status).collect::<Vec<_>>(),
        vec![400, 200]
    );
    // The game stream was reopened after the 400 (a fresh gameFull is the truth).
    let streams = fake
        .requests()
        .iter()
        .filter(|r| r.user.as_deref() == Some(BOT) && r.endpoint == Some(Endpoint::GameStream))
        .count();
    assert!(streams >= 2, "{streams}");
    assert_eq!(fake.game(&id).unwrap().moves.len(), 1);
    kill(bot).await;
}

/// The simple picker, counting its searches; each takes `delay`.
struct CountingFactory {
    searches: Arc<AtomicUsize>,
    delay: Duration,
}

struct CountingPicker {
    inner: SimplePicker,
    searches: Arc<AtomicUsize>,
    delay: Duration,
}

impl MovePicker for CountingPicker {
    fn pick(&mut self, game: &Game, budget: &Budget, stop: &AtomicBool) -> Option<Pick> {
        self.searches.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(self.delay);
        self.inner.pick(game, budget, stop)
    }
}

impl PickerFactory for CountingFactory {
    fn create(&self, _hash_mb: u64) -> Box<dyn MovePicker> {
        Box::new(CountingPicker {
            inner: SimplePicker::default(),
            searches: self.searches.clone(),
            delay: self.delay,
        })
    }
}

/// After a 400 the bot does not search the old position again at once: it waits for the
/// reopened stream's state (which may show the game moved on). Here the stream cannot be
/// reopened, so after the short wait it searches what it has and the game goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_move_waits_for_a_fresh_state_and_never_stalls() {
    let searches = Arc::new(AtomicUsize::new(0));
    let pickers = Arc::new(CountingFactory {
        searches: searches.clone(),
        delay: Duration::from_millis(300),
    });
    let (fake, bot) = fake_and_bot_with(pickers, |_| {}).await;
    fake.fail_next(Endpoint::Move, 400, NOT_YOUR_TURN, 1);
    let id = challenge_bot(&fake, "black", Some((60, 1)));
    // While the first search runs (300 ms), make every reopening of the game stream fail.
    assert!(
        fake.wait_until(T, |f| f
            .requests()
            .iter()
            .any(|r| r.user.as_deref() == Some(BOT)
                && r.endpoint == Some(Endpoint::GameStream)
                && r.path.ends_with(&id)))
            .await
    );
    fake.fail_next(Endpoint::GameStream, 503, "{}", 1_000);
    assert!(
        fake.wait_until(T, |f| !bot_moves(f, &id).is_empty()).await,
        "no move request"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        searches.load(Ordering::SeqCst),
        1,
        "searched the old position again right after the 400"
    );
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some_and(|g| g.moves.len() == 1))
            .await,
        "the bot never moved after the 400"
    );
    assert_eq!(
        bot_moves(&fake, &id)
            .iter()
            .map(|r| r.status)
            .collect::<Vec<_>>(),
        vec![400, 200]
    );
    assert_eq!(searches.load(Ordering::SeqCst), 2);
    kill(bot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcts_searcher_plays_a_game_with_pondering() {
    let pickers = Arc::new(atomic_bot::lichess::picker::SearcherFactory::default());
    let (fake, bot) = fake_and_bot_with(pickers, |s| {
        s.game.ponder = true;
        // Short thinks: the time manager keeps 30 overheads (24 s of the 30 s) out of the plan.
        s.game.move_overhead_ms = 800;
        s.search.hash_mb = 16;
    })
    .await;
    let id = challenge_bot(&fake, "random", Some((30, 0)));
    wait_game(&fake, &id, 0).await;
    let opp = slow_opponent(&fake, &id, Duration::from_millis(100)).await;
    let g = fake
        .wait_game_over(&id, Duration::from_secs(60))
        .await
        .expect("game over");
    assert_legal(&g.moves);
    assert_ne!(g.status, "aborted");
    assert_ne!(g.status, "outoftime", "{g:?}");
    assert!(bot_moves(&fake, &id).iter().all(|r| r.status == 200));
    let _ = opp.await;
    bot.stop.cancel();
    let _ = bot.task.await;
}
