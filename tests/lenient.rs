//! "Never fooled by data": lichess answers and stream lines with extra fields, extra map
//! entries, and values of other types (or null) where the bot does not need them, and re-typed
//! needed values, are read to the same needed values (a seeded property test over realistic
//! samples of every document the bot reads); the bot plays a whole game against a server that
//! decorates everything it sends that way; an account whose `perfs` holds entries of other
//! shapes no longer stops the bot; and the 2025-2026 API additions (`expiration`, `rating`,
//! `ratingDiff`, `nbMyTurn`, `claim-draw`, the daily bot-versus-bot game limit) are read,
//! served and acted on.

mod common;

use std::time::Duration;

use atomic_bot::fakelichess::junk::Junk;
use atomic_bot::fakelichess::{ChallengeSpec, FakeLichess};
use atomic_bot::lichess::client::{ApiError, Endpoint, LichessClient};
use atomic_bot::lichess::matchmaking::parse_online_bots;
use atomic_bot::lichess::model::{
    Account, Challenge, ErrorBody, Event, GameEvent, GameState, Playing,
};
use atomic_bot::lichess::ndjson::Line;
use common::*;
use secrecy::SecretString;
use serde_json::Value;

const T: Duration = Duration::from_secs(30);

/// One recorded document (API.md's examples, and what the fake server sends), its kind as
/// the junk decorator knows it, and what the bot needs from it once parsed.
struct Sample {
    kind: &'static str,
    json: &'static str,
    needed: fn(&str) -> Result<String, String>,
}

fn event(text: &str) -> Result<String, String> {
    let e: Event = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(match e {
        Event::GameStart { game } | Event::GameFinish { game } => {
            format!("game {} vs {:?}", game.id(), game.opponent.id)
        }
        Event::Challenge { challenge, compat } => format!(
            "challenge {} from {:?} bot {} variant {} rated {} {:?} compat {:?}",
            challenge.id,
            challenge.challenger.as_ref().map(|c| &c.id),
            challenge
                .challenger
                .as_ref()
                .is_some_and(atomic_bot::lichess::model::ChallengeUser::is_bot),
            challenge.variant.key,
            challenge.rated,
            challenge.time_control,
            compat.map(|c| c.bot)
        ),
        Event::ChallengeCanceled { challenge } => format!("canceled {}", challenge.id),
        Event::ChallengeDeclined { challenge } => format!("declined {}", challenge.id),
        Event::Unknown => "unknown".into(),
    })
}

fn state_needed(s: &GameState) -> String {
    format!(
        "{:?} {} {} {} {} {:?} {:?} {} {} {} {} {:?}",
        s.moves,
        s.wtime,
        s.btime,
        s.winc,
        s.binc,
        s.status,
        s.winner,
        s.wdraw,
        s.bdraw,
        s.wtakeback,
        s.btakeback,
        s.expiration
    )
}

fn game_event(text: &str) -> Result<String, String> {
    let e: GameEvent = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(match e {
        GameEvent::GameFull(f) => format!(
            "full {} {:?} {:?} {:?} {:?} {}",
            f.variant.key,
            f.clock,
            f.white.id,
            f.black.id,
            f.initial_fen,
            state_needed(&f.state)
        ),
        GameEvent::GameState(s) => state_needed(&s),
        GameEvent::ChatLine(c) => format!("chat {} {} {}", c.room, c.username, c.text),
        GameEvent::OpponentGone {
            gone,
            claim_win_in_seconds,
        } => format!("gone {gone} {claim_win_in_seconds:?}"),
        GameEvent::Unknown => "unknown".into(),
    })
}

fn account(text: &str) -> Result<String, String> {
    let a: Account = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(format!(
        "{} {} {:?} {:?}",
        a.id,
        a.username,
        a.title,
        a.perfs.get("atomic")
    ))
}

fn playing(text: &str) -> Result<String, String> {
    let p: Playing = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(format!(
        "{:?}",
        p.now_playing
            .iter()
            .map(atomic_bot::lichess::model::GameEventInfo::id)
            .collect::<Vec<_>>()
    ))
}

fn online(text: &str) -> Result<String, String> {
    Ok(format!("{:?}", parse_online_bots(text)))
}

fn error_body(text: &str) -> Result<String, String> {
    let e: ErrorBody = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(format!("{e:?}"))
}

fn created(text: &str) -> Result<String, String> {
    let c: Challenge = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(c.id)
}

fn samples() -> Vec<Sample> {
    vec![
        Sample {
            kind: "gameStart",
            json: r#"{"type":"gameStart","game":{"fullId":"Kp4Rt9Zx2mQa","gameId":"Kp4Rt9Zx","id":"Kp4Rt9Zx","fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","color":"black","lastMove":"","source":"friend","status":{"id":20,"name":"started"},"variant":{"key":"atomic","name":"Atomic"},"speed":"blitz","perf":"atomic","rated":true,"hasMoved":false,"opponent":{"id":"boomfan","username":"BoomFan","rating":1712},"isMyTurn":false,"secondsLeft":180,"rating":1890,"compat":{"bot":true,"board":false}},"id":"Kp4Rt9Zx"}"#,
            needed: event,
        },
        Sample {
            kind: "gameFinish",
            json: r#"{"type":"gameFinish","game":{"fullId":"Kp4Rt9Zx2mQa","gameId":"Kp4Rt9Zx","id":"Kp4Rt9Zx","fen":"r1b2b1r/ppp2ppp/2n5/8/8/8/PPPP1PPP/RNB1KBNR w KQ - 0 9","color":"black","lastMove":"d8f2","source":"friend","status":{"id":60,"name":"variantEnd"},"variant":{"key":"atomic","name":"Atomic"},"speed":"blitz","perf":"atomic","rated":true,"hasMoved":true,"opponent":{"id":"boomfan","username":"BoomFan","rating":1712,"ratingDiff":-6},"isMyTurn":false,"secondsLeft":171,"winner":"black","rating":1890,"ratingDiff":6,"compat":{"bot":true,"board":false}}}"#,
            needed: event,
        },
        Sample {
            kind: "challenge",
            json: r#"{"type":"challenge","challenge":{"id":"Qx7Lm2Pa","url":"https://lichess.org/Qx7Lm2Pa","status":"created","challenger":{"id":"boomfan","name":"BoomFan","rating":1712,"online":true,"lag":4},"destUser":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890,"online":true},"variant":{"key":"atomic","name":"Atomic","short":"Atom"},"rated":true,"speed":"blitz","timeControl":{"type":"clock","limit":180,"increment":2,"show":"3+2"},"color":"random","finalColor":"white","perf":{"icon":"x","name":"Atomic"}},"compat":{"bot":true,"board":false}}"#,
            needed: event,
        },
        Sample {
            kind: "challenge",
            json: r#"{"type":"challenge","challenge":{"id":"Rm8Tq1Zz","url":"https://lichess.org/Rm8Tq1Zz","status":"created","challenger":{"id":"otherbot","name":"OtherBot","title":"BOT","rating":2105,"provisional":false},"destUser":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890},"variant":{"key":"atomic","name":"Atomic"},"rated":false,"speed":"correspondence","timeControl":{"type":"correspondence","daysPerTurn":2},"color":"white","finalColor":"white","perf":{"icon":"x","name":"Atomic"},"rematchOf":"Kp4Rt9Zx"},"compat":{"bot":true,"board":true}}"#,
            needed: event,
        },
        Sample {
            kind: "challenge",
            json: r#"{"type":"challenge","challenge":{"id":"Hg7Hg7Hg","status":"created","challenger":{"id":"sandy","name":"Sandy","rating":1500},"variant":{"key":"atomic","name":"Atomic"},"rated":false,"speed":"hourglass","timeControl":{"type":"hourglass","grains":900}},"compat":{"bot":true,"board":false}}"#,
            needed: event,
        },
        Sample {
            kind: "brandNewEvent",
            json: r#"{"type":"brandNewEvent","payload":{"x":1,"y":[1,2]}}"#,
            needed: event,
        },
        Sample {
            kind: "challengeCanceled",
            json: r#"{"type":"challengeCanceled","challenge":{"id":"Qx7Lm2Pa","url":"https://lichess.org/Qx7Lm2Pa","status":"canceled","challenger":{"id":"boomfan","name":"BoomFan","rating":1712},"destUser":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890},"variant":{"key":"atomic","name":"Atomic"},"rated":true,"speed":"blitz","timeControl":{"type":"clock","limit":180,"increment":2,"show":"3+2"},"color":"random","finalColor":"white","perf":{"icon":"x","name":"Atomic"}}}"#,
            needed: event,
        },
        Sample {
            kind: "challengeDeclined",
            json: r#"{"type":"challengeDeclined","challenge":{"id":"Zr5Hq8Wc","url":"https://lichess.org/Zr5Hq8Wc","status":"declined","challenger":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890},"destUser":{"id":"otherbot","name":"OtherBot","title":"BOT","rating":2105},"variant":{"key":"atomic","name":"Atomic"},"rated":true,"speed":"bullet","timeControl":{"type":"clock","limit":60,"increment":1,"show":"1+1"},"color":"random","finalColor":"black","perf":{"icon":"x","name":"Atomic"},"declineReason":"This time control is too fast for me.","declineReasonKey":"toofast"}}"#,
            needed: event,
        },
        Sample {
            kind: "gameFull",
            json: r#"{"type":"gameFull","id":"Kp4Rt9Zx","variant":{"key":"atomic","name":"Atomic","short":"Atom"},"clock":{"initial":180000,"increment":2000},"speed":"blitz","perf":{"name":"Atomic"},"rated":true,"createdAt":1785412800000,"white":{"id":"boomfan","name":"BoomFan","title":null,"rating":1712},"black":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890},"initialFen":"startpos","state":{"type":"gameState","moves":"","wtime":180000,"btime":180000,"winc":2000,"binc":2000,"status":"started","expiration":{"idleMillis":1850,"millisToMove":25000}}}"#,
            needed: game_event,
        },
        Sample {
            kind: "gameFull",
            json: r#"{"type":"gameFull","id":"Ab3Cd4Ef","variant":{"key":"atomic","name":"Atomic"},"speed":"correspondence","perf":{"name":"Atomic"},"rated":false,"createdAt":1785412800000,"white":{"aiLevel":3},"black":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890,"provisional":true},"initialFen":"startpos","daysPerTurn":2,"state":{"type":"gameState","moves":"e2e4 e7e5","wtime":172800000,"btime":172800000,"winc":0,"binc":0,"status":"started"},"tournamentId":"x"}"#,
            needed: game_event,
        },
        Sample {
            kind: "gameState",
            json: r#"{"type":"gameState","moves":"g1f3 d7d5 e2e3 f7f6 f1e2 c8g4 e1h1 e7e6","wtime":171430,"btime":168910,"winc":2000,"binc":2000,"status":"started"}"#,
            needed: game_event,
        },
        Sample {
            kind: "gameState",
            json: r#"{"type":"gameState","moves":"g1f3 d7d5 e2e3 f7f6","wtime":176200,"btime":177950,"winc":2000,"binc":2000,"status":"started","wdraw":true,"btakeback":true}"#,
            needed: game_event,
        },
        Sample {
            kind: "gameState",
            json: r#"{"type":"gameState","moves":"g1f3 f7f6 f3e5 d7d6 e5d7","wtime":174020,"btime":176300,"winc":2000,"binc":2000,"status":"variantEnd","winner":"white","rematch":"Zx9Yw8Vu"}"#,
            needed: game_event,
        },
        Sample {
            kind: "chatLine",
            json: r#"{"type":"chatLine","room":"spectator","username":"watcher42","text":"!eval"}"#,
            needed: game_event,
        },
        Sample {
            kind: "opponentGone",
            json: r#"{"type":"opponentGone","gone":true,"claimWinInSeconds":12}"#,
            needed: game_event,
        },
        Sample {
            kind: "opponentGone",
            json: r#"{"type":"opponentGone","gone":false}"#,
            needed: game_event,
        },
        Sample {
            kind: "account",
            json: r#"{"id":"ouratomicbot","username":"OurAtomicBot","title":"BOT","perfs":{"atomic":{"games":120,"rating":1890,"rd":60,"prog":5},"blitz":{"games":0,"rating":1500,"rd":500,"prog":0,"prov":true},"storm":{"runs":3,"score":12},"racer":{"runs":1,"score":20}},"createdAt":1785412800000,"seenAt":1785499200000,"playTime":{"total":3600,"tv":0},"url":"https://lichess.org/@/OurAtomicBot","count":{"all":120,"rated":118,"ai":0,"draw":10,"win":60,"loss":50},"followable":true,"following":false,"blocking":false}"#,
            needed: account,
        },
        Sample {
            kind: "playing",
            json: r#"{"nowPlaying":[{"fullId":"Kp4Rt9Zx2mQa","gameId":"Kp4Rt9Zx","fen":"8/8/8/8/8/8/8/8 w - - 0 1","color":"white","lastMove":"e7e5","source":"friend","status":{"id":20,"name":"started"},"variant":{"key":"atomic","name":"Atomic"},"speed":"blitz","perf":"atomic","rated":true,"hasMoved":true,"opponent":{"id":"boomfan","username":"BoomFan","rating":1712},"isMyTurn":true,"secondsLeft":171},{"gameId":"Ab3Cd4Ef","id":"Ab3Cd4Ef","color":"black","isMyTurn":false,"secondsLeft":172800,"opponent":{"id":null,"username":"Stockfish level 3","ai":3}}],"nbMyTurn":1}"#,
            needed: playing,
        },
        Sample {
            kind: "online",
            json: r#"{"id":"boombot","username":"BoomBot","title":"BOT","perfs":{"atomic":{"games":120,"rating":1912,"rd":60,"prog":5},"storm":{"runs":2,"score":9}},"createdAt":1700000000000,"seenAt":1785499200000,"playTime":{"total":100,"tv":0,"human":5},"profile":{"bio":"boom"}}"#,
            needed: online,
        },
        Sample {
            kind: "error",
            json: r#"{"error":"You played 100 games against other bots today, please wait before challenging another bot.","ratelimit":{"key":"bot.vsBot.day","seconds":51234}}"#,
            needed: error_body,
        },
        Sample {
            kind: "challengeCreated",
            json: r#"{"id":"Zr5Hq8Wc","url":"https://lichess.org/Zr5Hq8Wc","status":"created","challenger":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT"},"destUser":{"id":"otherbot","name":"OtherBot","title":"BOT"},"variant":{"key":"atomic","name":"Atomic"},"rated":false,"speed":"bullet","timeControl":{"type":"clock","limit":60,"increment":1,"show":"1+1"},"color":"random","finalColor":"black","direction":"out"}"#,
            needed: created,
        },
    ]
}

/// Property: for every sample and 40 seeds, the decorated document reads to the same needed
/// values as the clean one (840 cases; seeded, so a failure names its seed and repeats).
#[test]
fn needed_values_survive_junk_in_every_recorded_document() {
    let mut changed = 0;
    for (i, sample) in samples().iter().enumerate() {
        let clean = (sample.needed)(sample.json)
            .unwrap_or_else(|e| panic!("sample {i} ({}) unreadable: {e}", sample.kind));
        let original: Value = serde_json::from_str(sample.json).unwrap();
        for seed in 0..40u64 {
            let mut v = original.clone();
            Junk::new(seed * 1000 + i as u64).decorate(sample.kind, &mut v);
            if v != original {
                changed += 1;
            }
            let text = v.to_string();
            let got = (sample.needed)(&text).unwrap_or_else(|e| {
                panic!("sample {i} ({}), seed {seed}: {e}\n{text}", sample.kind)
            });
            assert_eq!(
                got, clean,
                "sample {i} ({}), seed {seed}:\n{text}",
                sample.kind
            );
        }
    }
    // The junk did change the documents (the property is not vacuous).
    assert!(changed > 750, "{changed}");
}

/// The issue's start-up failure: an `/api/account` whose `perfs` holds an entry that is not a
/// rating object made the bot exit with status 1 (a restart loop under Docker).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_with_perfs_of_other_shapes_does_not_stop_the_bot() {
    let fake = fake().await;
    fake.fail_next(
        Endpoint::Account,
        200,
        r#"{"id":"atomicbot","username":"AtomicBot","title":"BOT",
            "perfs":{"atomic":{"games":3,"rating":1500,"rd":80,"prog":0},
                     "storm":{"runs":3,"score":12},"streak":7},
            "count":{"all":3}}"#,
        1,
    );
    let bot = start_bot(settings(&fake.url()));
    wait_connected(&fake, 1).await;
    let id = challenge_bot(&fake, "random", Some((60, 1)));
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some()).await,
        "not accepted"
    );
    assert!(!bot.task.is_finished());
    stop_cleanly(bot).await;
}

/// End to end: every answer and stream line of the server carries seeded junk (extra fields
/// and map entries, unneeded values of other types, needed ones re-typed); the bot starts,
/// accepts, and plays a whole game with legal moves only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_game_is_played_while_every_document_carries_junk() {
    for seed in [1u64, 2] {
        let fake = fake().await;
        fake.junk(seed);
        let mut bot = start_bot(settings(&fake.url()));
        wait_connected(&fake, 1).await;
        let id = challenge_bot(&fake, "random", Some((60, 1)));
        assert!(
            fake.wait_until(T, |f| f.game(&id).is_some()).await,
            "seed {seed}: not accepted"
        );
        let opp = opponent(&fake.url(), HUMAN_TOKEN, &id).await;
        let g = fake.wait_game_over(&id, T).await.expect("game over");
        assert_ne!(g.status, "aborted", "seed {seed}");
        assert_legal(&g.moves);
        let moves = bot_moves(&fake, &id);
        assert!(!moves.is_empty());
        assert!(moves.iter().all(|r| r.status == 200), "seed {seed}");
        let report = tokio::time::timeout(T, bot.reports.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(report.status, g.status);
        let _ = opp.await;
        stop_cleanly(bot).await;
    }
}

fn client(fake: &FakeLichess, token: &str) -> LichessClient {
    LichessClient::new(
        &settings(&fake.url()).lichess,
        SecretString::from(token.to_owned()),
    )
    .unwrap()
}

/// The fake serves the 2025-2026 fields and the client reads them: `rating` in game events,
/// `expiration` while the first move is pending, `nbMyTurn`, `ratingDiff` in `gameFinish`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recent_fields_are_served_and_read() {
    let fake = fake().await;
    let bot = client(&fake, BOT_TOKEN);
    let mut events = bot.stream_events().await.unwrap();
    let spec = ChallengeSpec {
        rated: true,
        color: "black".into(),
        clock: Some((60, 1)),
        ..ChallengeSpec::default()
    };
    let id = fake.challenge(HUMAN, BOT, &spec).unwrap();
    bot.accept_challenge(&id).await.unwrap();
    let start = loop {
        match tokio::time::timeout(T, events.next::<Event>()).await {
            Ok(Ok(Line::Item(Event::GameStart { game }, _))) => break game,
            Ok(Ok(_)) => {}
            other => panic!("no gameStart: {other:?}"),
        }
    };
    assert_eq!(start.id(), id);
    assert_eq!(start.rating, Some(1500));
    let playing = bot.playing().await.unwrap();
    assert_eq!(playing.now_playing.len(), 1);
    assert_eq!(playing.nb_my_turn, Some(1), "the human is black: our turn");
    let mut game = bot.stream_game(&id).await.unwrap();
    let Ok(Line::Item(GameEvent::GameFull(full), _)) = game.next::<GameEvent>().await else {
        panic!("no gameFull")
    };
    let exp = full
        .state
        .expiration
        .expect("expiration before the first move");
    assert_eq!(exp.millis_to_move, 25_000);
    assert!(exp.left() <= Duration::from_secs(25));
    bot.make_move(&id, "e2e4", None).await.unwrap();
    fake.play(&id, HUMAN, "e7e5").unwrap();
    let after = loop {
        match game.next::<GameEvent>().await {
            Ok(Line::Item(GameEvent::GameState(s), _)) if s.move_list().len() == 2 => break s,
            Ok(_) => {}
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(after.expiration, None, "both first moves made");
    fake.resign(&id, HUMAN).unwrap();
    let finish = loop {
        match tokio::time::timeout(T, events.next::<Event>()).await {
            Ok(Ok(Line::Item(Event::GameFinish { game }, _))) => break game,
            Ok(Ok(_)) => {}
            other => panic!("no gameFinish: {other:?}"),
        }
    };
    assert_eq!(finish.winner.as_deref(), Some("white"));
    assert_eq!(finish.rating_diff, Some(6));
    assert_eq!(finish.opponent.rating_diff, Some(-6));
}

/// `claim-draw`: refused while the opponent is here, a draw (status `timeout`, no winner)
/// once its `opponentGone` countdown ran out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_draw_after_the_opponent_left() {
    let fake = fake().await;
    let bot = client(&fake, BOT_TOKEN);
    let id = challenge_bot(&fake, "white", Some((60, 1)));
    bot.accept_challenge(&id).await.unwrap();
    fake.play(&id, HUMAN, "e2e4").unwrap();
    bot.make_move(&id, "e7e5", None).await.unwrap();
    let early = bot.claim_draw(&id).await.unwrap_err();
    assert_eq!(early.status(), Some(400), "{early}");
    fake.opponent_gone(&id, HUMAN, Duration::ZERO).unwrap();
    bot.claim_draw(&id).await.unwrap();
    let g = fake.game(&id).unwrap();
    assert_eq!((g.status.as_str(), g.winner), ("timeout", None));
}

/// lichess's daily bot-versus-bot limit, met on accepting a bot's challenge (429): that
/// challenge and the next bot's are declined with `later` (the next without trying to
/// accept), and a human's challenge is still accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daily_bot_game_limit_declines_bots_with_later_and_humans_still_play() {
    let fake = fake().await;
    fake.limit_bot_games(0, 3600);
    let bot = start_bot(settings(&fake.url()));
    wait_connected(&fake, 1).await;
    let bot_spec = ChallengeSpec {
        clock: Some((60, 1)),
        ..ChallengeSpec::default()
    };
    let first = fake.challenge(OTHER_BOT, BOT, &bot_spec).unwrap();
    assert_eq!(
        decline_reason(&fake, &first).await.as_deref(),
        Some("later")
    );
    let accepts = |f: &FakeLichess| {
        f.requests()
            .iter()
            .filter(|r| r.user.as_deref() == Some(BOT) && r.endpoint == Some(Endpoint::Accept))
            .map(|r| r.status)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        accepts(&fake),
        vec![429],
        "one accept, refused, never retried"
    );
    let second = fake.challenge(OTHER_BOT, BOT, &bot_spec).unwrap();
    assert_eq!(
        decline_reason(&fake, &second).await.as_deref(),
        Some("later")
    );
    assert_eq!(accepts(&fake), vec![429], "the second was not tried");
    let human = challenge_bot(&fake, "random", Some((60, 1)));
    assert!(
        fake.wait_until(T, |f| f.game(&human).is_some()).await,
        "the human's challenge was not accepted"
    );
    stop_cleanly(bot).await;
}

/// The same limit met by matchmaking (429 on creating a challenge): no new challenge until
/// it resets, and bots' challenges are declined with `later` meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daily_bot_game_limit_pauses_matchmaking() {
    let fake = fake().await;
    fake.limit_bot_games(0, 3600);
    let mut s = settings(&fake.url());
    s.matchmaking.enabled = true;
    s.matchmaking.idle_s = 0;
    s.matchmaking.min_interval_s = 1;
    let bot = start_bot(s);
    let created = |f: &FakeLichess| {
        f.requests()
            .iter()
            .filter(|r| {
                r.user.as_deref() == Some(BOT) && r.endpoint == Some(Endpoint::CreateChallenge)
            })
            .map(|r| r.status)
            .collect::<Vec<_>>()
    };
    assert!(
        fake.wait_until(T, |f| !created(f).is_empty()).await,
        "matchmaking never challenged"
    );
    assert_eq!(created(&fake), vec![429]);
    let incoming = fake
        .challenge(
            OTHER_BOT,
            BOT,
            &ChallengeSpec {
                clock: Some((60, 1)),
                ..ChallengeSpec::default()
            },
        )
        .unwrap();
    assert_eq!(
        decline_reason(&fake, &incoming).await.as_deref(),
        Some("later")
    );
    // Matchmaking looks again every 5 s at most: two looks, no new challenge.
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(
        created(&fake),
        vec![429],
        "challenged again during the limit"
    );
    stop_cleanly(bot).await;
}

/// A refused accept comes back as the limit at once, naming whose it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_reports_the_limit_and_whose_it_is() {
    let fake = fake().await;
    fake.limit_bot_games(1, 77);
    let bot = client(&fake, BOT_TOKEN);
    let spec = ChallengeSpec::default();
    // One game between the two bots uses both limits.
    let id = fake.challenge(OTHER_BOT, BOT, &spec).unwrap();
    bot.accept_challenge(&id).await.unwrap();
    let id = fake.challenge(OTHER_BOT, BOT, &spec).unwrap();
    let e = bot.accept_challenge(&id).await.unwrap_err();
    assert!(
        matches!(
            e,
            ApiError::BotGameLimit {
                ours: true,
                seconds: Some(77),
                ..
            }
        ),
        "{e}"
    );
    // Humans are not limited.
    let id = fake.challenge(HUMAN, BOT, &spec).unwrap();
    bot.accept_challenge(&id).await.unwrap();
}
