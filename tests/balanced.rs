//! Games from the vchess Balanced starts against the local lichess-compatible server: the
//! game's `gameFull` carries the start as `initialFen` with an empty move list and Black to
//! move, so the bot must take its turn from the position, not from the length of the move list.

mod common;

use std::time::Duration;

use atomic_bot::balanced::Removal;
use atomic_bot::config::Engine;
use atomic_bot::fakelichess::ChallengeSpec;
use atomic_bot::lichess::app::{DemoColor, run_demo};
use atomic_chess::{Color, Game};
use common::*;
use tokio_util::sync::CancellationToken;

/// HUMAN challenges the bot from `removal`'s start, HUMAN playing `human_color`.
fn challenge_from(
    fake: &atomic_bot::fakelichess::FakeLichess,
    removal: Removal,
    human_color: &str,
) -> String {
    fake.challenge(
        HUMAN,
        BOT,
        &ChallengeSpec {
            color: human_color.into(),
            clock: Some((120, 1)),
            fen: Some(removal.fen()),
            ..ChallengeSpec::default()
        },
    )
    .expect("challenge")
}

/// Playing Black, the bot moves first: one legal Black move from the start, sent once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn as_black_the_bot_moves_first_from_every_start() {
    let (fake, bot) = fake_and_bot(|_| {}).await;
    for removal in Removal::all() {
        let id = challenge_from(&fake, removal, "white");
        wait_game(&fake, &id, 1).await;
        let g = fake.game(&id).expect("game");
        assert_eq!(g.moves.len(), 1, "{removal}: {:?}", g.moves);
        let start = removal.position();
        let m = start
            .parse_uci(&g.moves[0])
            .unwrap_or_else(|e| panic!("{removal}: {} is not a Black move: {e}", g.moves[0]));
        assert!(start.legal_moves().contains(&m), "{removal}: {m}");
        let sent = bot_moves(&fake, &id);
        assert_eq!(sent.len(), 1, "{removal}: {sent:?}");
        assert_eq!(sent[0].status, 200);
        let after = start.play(m).expect("Black's move plays");
        if after.legal_moves().is_empty() {
            // Black can win at once in one start (black d7 removed: Qxd2 blows up e1), and the
            // bot takes it.
            let g = fake
                .wait_game_over(&id, Duration::from_secs(10))
                .await
                .expect("over");
            assert_eq!(g.winner.as_deref(), Some("black"), "{removal}");
            continue;
        }
        // Lichess lets a game be resigned once both sides have moved: White replies, resigns.
        let reply = after.legal_moves()[0].to_string();
        fake.play(&id, HUMAN, &reply).expect("White's reply");
        fake.resign(&id, HUMAN).expect("resign");
        fake.wait_game_over(&id, Duration::from_secs(10))
            .await
            .expect("over");
    }
    kill(bot).await;
}

/// Playing White, the bot waits for Black's first move (an empty move list is not its turn),
/// then answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn as_white_the_bot_waits_for_blacks_first_move() {
    let (fake, bot) = fake_and_bot(|_| {}).await;
    let removal: Removal = "e2".parse().unwrap();
    let id = challenge_from(&fake, removal, "black");
    wait_game(&fake, &id, 0).await;
    // The game stream is open (the bot read gameFull) and a while passes: no move.
    assert!(
        fake.wait_until(Duration::from_secs(10), |f| f.game_stream_open(&id, BOT))
            .await
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(fake.game(&id).expect("game").moves.is_empty());
    assert!(bot_moves(&fake, &id).is_empty());
    // Black plays; the bot answers with one legal White move.
    fake.play(&id, HUMAN, "e7e5").expect("Black's move");
    wait_game(&fake, &id, 2).await;
    let g = fake.game(&id).expect("game");
    let game = Game::from_uci_moves(removal.position(), &g.moves).expect("legal from the start");
    assert_eq!(game.position().turn(), Color::Black);
    assert_eq!(bot_moves(&fake, &id).len(), 1);
    kill(bot).await;
}

/// `atomic-bot demo --balanced`'s game: the demo's server starts it from the FEN with Black to
/// move, and the PGN carries the start (`FEN`, `SetUp`, numbering from `1...`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_plays_a_game_from_a_balanced_start() {
    let removal: Removal = "f7".parse().unwrap();
    let out = run_demo(
        "1+0".parse().unwrap(),
        DemoColor::White,
        Engine::Simple,
        None,
        Some(removal.fen()),
        CancellationToken::new(),
    )
    .await
    .expect("the demo game");
    assert_ne!(out.report.status, "aborted");
    let pgn = out.report.pgn.expect("a PGN");
    assert!(
        pgn.contains(&format!("[FEN \"{}\"]", removal.fen())),
        "{pgn}"
    );
    assert!(pgn.contains("[SetUp \"1\"]"), "{pgn}");
    // The PGN is rendered by replaying the moves from the FEN, and stops at the first move
    // that does not replay: Black's first move, numbered `1...`, is there.
    assert!(pgn.contains("\n\n1... "), "{pgn}");
}
