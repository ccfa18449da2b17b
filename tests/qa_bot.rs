//! QA regressions of the bot against the local lichess-compatible server.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use atomic_bot::fakelichess::ChallengeSpec;
use atomic_bot::lichess::picker::{Budget, MovePicker, Pick, PickerFactory, SimplePicker};
use atomic_chess::Game;
use common::*;

const T: Duration = Duration::from_secs(30);

/// Panics in `create` the first `panics` times (that is inside the game task), then in the
/// first `pick` of the next picker (inside the search thread), then plays simple moves.
struct Panicky {
    creates: AtomicUsize,
    panics: usize,
}

struct PanicOnPick {
    panic: bool,
    inner: SimplePicker,
}

impl MovePicker for PanicOnPick {
    fn pick(&mut self, game: &Game, budget: &Budget, stop: &AtomicBool) -> Option<Pick> {
        if std::mem::take(&mut self.panic) {
            panic!("QA: a bug in the search");
        }
        self.inner.pick(game, budget, stop)
    }
}

impl PickerFactory for Panicky {
    fn create(&self, _hash_mb: u64) -> Box<dyn MovePicker> {
        let n = self.creates.fetch_add(1, Ordering::SeqCst);
        if n < self.panics {
            panic!("QA: a bug in a game task");
        }
        Box::new(PanicOnPick {
            panic: n == self.panics,
            inner: SimplePicker { seed: 3 },
        })
    }
}

/// A panic in one game's task used to make the supervisor forget *every* game entry: the
/// panicked game was never played again (lost on time, silently), and a replayed `gameStart`
/// could start a second task for a game still being played. Now that game's task is restarted
/// and the game is finished; a panic inside the search plays a fallback move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_game_task_is_restarted_and_the_game_finished() {
    let pickers = Arc::new(Panicky {
        creates: AtomicUsize::new(0),
        panics: 1,
    });
    let (fake, mut bot) = fake_and_bot_with(pickers.clone(), |_| {}).await;
    let spec = ChallengeSpec {
        clock: Some((60, 1)),
        ..ChallengeSpec::default()
    };
    let id = fake.challenge(HUMAN, BOT, &spec).unwrap();
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some()).await,
        "not accepted"
    );
    let opp = opponent(&fake.url(), HUMAN_TOKEN, &id).await;
    let g = fake.wait_game_over(&id, T).await.expect("game over");
    assert_ne!(g.status, "aborted", "the bot never played: {g:?}");
    assert_legal(&g.moves);
    assert!(pickers.creates.load(Ordering::SeqCst) >= 2);
    let report = tokio::time::timeout(T, bot.reports.recv())
        .await
        .expect("a report")
        .expect("a report");
    assert_eq!(report.id, id);
    let _ = opp.await;
    stop_cleanly(bot).await;
}

/// Ponders until stopped; counts the ponders that started and ended, and records the threads
/// each one was given.
struct Ponderer {
    started: Arc<AtomicUsize>,
    ended: Arc<AtomicUsize>,
    threads: Arc<std::sync::Mutex<Vec<usize>>>,
}

impl MovePicker for Ponderer {
    fn pick(&mut self, game: &Game, budget: &Budget, stop: &AtomicBool) -> Option<Pick> {
        SimplePicker { seed: 5 }.pick(game, budget, stop)
    }

    fn ponder(&mut self, _game: &Game, threads: usize, stop: &AtomicBool) {
        self.threads.lock().unwrap().push(threads);
        self.started.fetch_add(1, Ordering::SeqCst);
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.ended.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct PondererFactory {
    started: Arc<AtomicUsize>,
    ended: Arc<AtomicUsize>,
    threads: Arc<std::sync::Mutex<Vec<usize>>>,
}

impl PickerFactory for PondererFactory {
    fn create(&self, _hash_mb: u64) -> Box<dyn MovePicker> {
        Box::new(Ponderer {
            started: self.started.clone(),
            ended: self.ended.clone(),
            threads: self.threads.clone(),
        })
    }
}

/// A game task that goes away while pondering (aborted here; a panic does the same) used to
/// leave its infinite ponder running on a blocking thread for the rest of the process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_game_task_stops_its_ponder() {
    let started = Arc::new(AtomicUsize::new(0));
    let ended = Arc::new(AtomicUsize::new(0));
    let pickers = Arc::new(PondererFactory {
        started: started.clone(),
        ended: ended.clone(),
        ..PondererFactory::default()
    });
    let (fake, bot) = fake_and_bot_with(pickers, |s| s.game.ponder = true).await;
    let spec = ChallengeSpec {
        clock: Some((60, 1)),
        color: "black".into(),
        ..ChallengeSpec::default()
    };
    let id = fake.challenge(HUMAN, BOT, &spec).unwrap();
    assert!(
        fake.wait_until(T, |f| f.game(&id).is_some()).await,
        "not accepted"
    );
    // We are white. No opponent moves: once our first move is made, the bot ponders for good.
    let deadline = tokio::time::Instant::now() + T;
    while started.load(Ordering::SeqCst) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "never pondered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    kill(bot).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while ended.load(Ordering::SeqCst) < started.load(Ordering::SeqCst) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the ponder thread outlived its game task"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A ponder uses its game's share of `search.threads` and no more: alone, all of them; when a
/// second game starts, the running ponder is restarted with half (it must not keep the threads
/// the new game thinks with); with fewer threads than games, no ponder at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ponder_gives_back_the_threads_of_a_new_game() {
    for (total, after) in [(2usize, Some(1usize)), (1, None)] {
        let pickers = Arc::new(PondererFactory::default());
        let (fake, bot) = fake_and_bot_with(pickers.clone(), |s| {
            s.game.ponder = true;
            s.challenge.max_games = 2;
            s.search.threads = atomic_bot::config::Threads::Count(total as u32);
        })
        .await;
        let spec = |color: &str| ChallengeSpec {
            clock: Some((60, 1)),
            color: color.into(),
            ..ChallengeSpec::default()
        };
        // Game 1: we are white, the opponent never moves, so we ponder after our first move.
        let first = fake.challenge(HUMAN, BOT, &spec("black")).unwrap();
        assert!(fake.wait_until(T, |f| f.game(&first).is_some()).await);
        let deadline = tokio::time::Instant::now() + T;
        while pickers.started.load(Ordering::SeqCst) == 0 {
            assert!(tokio::time::Instant::now() < deadline, "never pondered");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(*pickers.threads.lock().unwrap(), vec![total], "alone");
        // Game 2: we are black and wait for a first move that never comes (no ponder there).
        let second = fake.challenge(HUMAN, BOT, &spec("white")).unwrap();
        assert!(fake.wait_until(T, |f| f.game(&second).is_some()).await);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let started = pickers.threads.lock().unwrap().clone();
            let ended = pickers.ended.load(Ordering::SeqCst);
            let done = match after {
                Some(share) => started == vec![total, share] && ended == 1,
                None => started == vec![total] && ended == 1,
            };
            if done {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{total} threads: ponders {started:?}, {ended} ended"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if after.is_none() {
            // And it does not come back while both games run.
            tokio::time::sleep(Duration::from_millis(1200)).await;
            assert_eq!(*pickers.threads.lock().unwrap(), vec![total]);
        }
        kill(bot).await;
    }
}
