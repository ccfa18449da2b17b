//! Measures how long an infinite (ponder) search takes to return after its stop flag is set.
//!
//! Plays games the way the lichess bot does: a timed search on our turn, then a ponder (an
//! infinite search on the opponent's turn, reusing the tree) stopped after a random time; the
//! delay from setting the flag to the search returning is recorded.
//!
//! ```sh
//! cargo run --release --example stop_latency -- [stops] [hash_mb] [threads]
//! ```
//! Prints the median, p90 and max delay.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use atomic_bot::search::{Limits, SearchConfig, Searcher};
use atomic_chess::{Game, Position};

fn main() {
    let mut args = std::env::args().skip(1);
    let stops: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(50);
    let hash_mb: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(128);
    let threads: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let config = SearchConfig {
        hash_mb,
        threads,
        ..SearchConfig::default()
    };
    let mut searcher = Searcher::new(config);
    let mut game = Game::new(Position::startpos());
    let mut rng: u64 = 0x1234_5678;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut delays = Vec::with_capacity(stops);
    while delays.len() < stops {
        // Our move: a short timed search.
        let limits = Limits {
            soft: Some(Duration::from_millis(200)),
            hard: Some(Duration::from_millis(600)),
            ..Limits::default()
        };
        let never = AtomicBool::new(false);
        let result = searcher.search(&game, &limits, &never, &mut |_| {});
        let Some(ours) = result.best_move else {
            game = Game::new(Position::startpos());
            searcher.clear();
            continue;
        };
        game.play(ours).expect("legal");
        if game.outcome().is_some() || game.moves().len() > 120 {
            game = Game::new(Position::startpos());
            searcher.clear();
            continue;
        }
        // Ponder on the opponent's turn, stopped after 0.1-3 s.
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let ponder_game = game.clone();
        let handle = std::thread::spawn(move || {
            let limits = Limits {
                infinite: true,
                ..Limits::default()
            };
            let result = searcher.search(&ponder_game, &limits, &flag, &mut |_| {});
            (searcher, result, Instant::now())
        });
        std::thread::sleep(Duration::from_millis(100 + next() % 2900));
        let set = Instant::now();
        stop.store(true, Ordering::Relaxed);
        let (back, result, returned) = handle.join().expect("ponder thread");
        searcher = back;
        let delay = returned.saturating_duration_since(set);
        println!(
            "stop {:3}: {:8.3} ms  nodes {:8}  hashfull {:4}",
            delays.len(),
            delay.as_secs_f64() * 1e3,
            result.info.nodes,
            result.info.hashfull
        );
        delays.push(delay);
        // The opponent plays the predicted reply if any, else the first legal move.
        let reply = result
            .best_move
            .or_else(|| game.position().legal_moves().first().copied());
        if let Some(m) = reply {
            game.play(m).expect("legal");
        } else {
            game = Game::new(Position::startpos());
            searcher.clear();
        }
        if game.outcome().is_some() {
            game = Game::new(Position::startpos());
            searcher.clear();
        }
    }
    delays.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{} stops: median {:.3} ms, p90 {:.3} ms, max {:.3} ms",
        delays.len(),
        ms(delays[delays.len() / 2]),
        ms(delays[delays.len() * 9 / 10]),
        ms(delays[delays.len() - 1])
    );
}
