//! A game of another variant (accepted by a permissive policy, or started outside it) is left
//! openly: the bot aborts it instead of playing atomic moves in it or letting its clock run.

mod common;

use std::time::Duration;

use atomic_bot::fakelichess::ChallengeSpec;
use common::*;

const T: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_atomic_game_is_aborted_without_a_move() {
    let (fake, mut bot) =
        fake_and_bot(|s| s.challenge.variants = vec!["atomic".into(), "standard".into()]).await;
    let spec = ChallengeSpec {
        variant: "standard".into(),
        color: "black".into(), // the bot is White: without the guard it would move at once
        ..ChallengeSpec::default()
    };
    let id = fake.challenge(HUMAN, BOT, &spec).unwrap();
    let g = fake.wait_game_over(&id, T).await.expect("game over");
    assert_eq!(g.status, "aborted");
    assert!(g.moves.is_empty(), "{:?}", g.moves);
    assert!(bot_moves(&fake, &id).is_empty());
    let report = tokio::time::timeout(T, bot.reports.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.id, id);
    kill(bot).await;
}
