//! What every search engine behind `search::Searcher` must do, run against each of them
//! (`Algorithm::AlphaBeta` and `Algorithm::Mcts`): play a win in one at any budget, find forced
//! wins, stop promptly when told from another thread, and repeat itself exactly on one thread
//! with a node limit. The engine-specific tests are `tests/alphabeta.rs` and `tests/solver.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use atomic_bot::search::{Algorithm, Limits, Proven, Score, SearchConfig, Searcher};
use atomic_chess::{Game, Position};

mod tactics;
use tactics::{puzzles, search};

/// Every engine.
const ENGINES: [Algorithm; 2] = [Algorithm::AlphaBeta, Algorithm::Mcts];

fn config(algorithm: Algorithm) -> SearchConfig {
    SearchConfig {
        algorithm,
        hash_mb: 16,
        ..SearchConfig::default()
    }
}

/// Every capture that blows up the enemy king (and every mate in one) is played at once with
/// a score of mate in one, whatever the budget, even none; a king-exploding capture is
/// reported as a proven win in one.
#[test]
fn every_engine_plays_a_win_in_one_at_any_budget() {
    for algorithm in ENGINES {
        let mut searcher = Searcher::new(config(algorithm));
        for puzzle in puzzles(1) {
            let pos = Position::from_fen(&puzzle.fen).expect("valid FEN");
            for nodes in [0, 1, 50] {
                searcher.clear();
                let result = search(&mut searcher, &Game::new(pos), nodes);
                let best = result.best_move.expect("a move");
                let after = pos.play(best).expect("legal move");
                let outcome = after.outcome().expect("the game ends");
                let case = format!(
                    "{algorithm:?}: {} at {nodes} nodes played {best}",
                    puzzle.id
                );
                assert_eq!(outcome.winner, Some(pos.turn()), "{case}");
                assert_eq!(result.info.score, Score::Mate(1), "{case}");
                if after.board().king_of(!pos.turn()).is_none() {
                    assert_eq!(result.proven, Some(Proven::Win(1)), "{case}");
                    assert_eq!(result.win_probability, 1.0, "{case}");
                }
            }
        }
    }
}

/// The forced wins in one to three, found on one, two and three threads (a sample of ten
/// puzzles of each length: the full sets are searched on one thread by the engine-specific
/// tests, `tests/alphabeta.rs` and `tests/solver.rs`, with stricter assertions). With more threads a node limit counts every thread's nodes.
#[test]
fn every_engine_finds_forced_wins_on_one_two_and_three_threads() {
    // Budgets (nodes for alpha-beta, playouts for the MCTS) per length of the win.
    let budgets = |algorithm: Algorithm, mate: u32| match (algorithm, mate) {
        (_, 1) => 50,
        (Algorithm::AlphaBeta, 2) => 10_000,
        (Algorithm::AlphaBeta, _) => 30_000,
        (Algorithm::Mcts, 2) => 5000,
        (Algorithm::Mcts, _) => 10_000,
    };
    for algorithm in ENGINES {
        for threads in 1..=3 {
            let mut searcher = Searcher::new(SearchConfig {
                threads,
                ..config(algorithm)
            });
            for mate in 1..=3 {
                let nodes = budgets(algorithm, mate);
                let mut missed = Vec::new();
                for puzzle in puzzles(mate).iter().step_by(6) {
                    let pos = Position::from_fen(&puzzle.fen).expect("valid FEN");
                    searcher.clear();
                    let result = search(&mut searcher, &Game::new(pos), nodes);
                    let best = result.best_move.expect("a move");
                    assert!(pos.is_legal(best), "{algorithm:?} {threads}: {best}");
                    match result.info.score {
                        Score::Mate(n) if n > 0 && n <= mate as i32 => {}
                        other => missed.push(format!("{} {best} {other:?}", puzzle.id)),
                    }
                }
                // Every win in one; all but one of the longer ones.
                let allowed = usize::from(mate > 1);
                assert!(
                    missed.len() <= allowed,
                    "{algorithm:?} on {threads} threads, mate {mate} at {nodes}: {missed:?}"
                );
            }
        }
    }
}

/// An infinite search on one, two and three threads returns soon after another thread sets
/// the stop flag, with a legal move.
#[test]
fn every_engine_stops_promptly_when_told() {
    for (algorithm, threads) in ENGINES
        .iter()
        .flat_map(|&algorithm| (1..=3).map(move |threads| (algorithm, threads)))
    {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(true, Ordering::SeqCst);
            Instant::now()
        });
        let mut searcher = Searcher::new(SearchConfig {
            threads,
            ..config(algorithm)
        });
        let limits = Limits {
            infinite: true,
            ..Limits::default()
        };
        let game = Game::new(Position::startpos());
        let result = searcher.search(&game, &limits, &stop, &mut |_| {});
        let returned = Instant::now();
        let stopped = setter.join().expect("setter");
        let latency = returned.duration_since(stopped);
        // Generous for a loaded debug build; a search that ignored the flag never returns.
        assert!(
            latency < Duration::from_millis(500),
            "{algorithm:?} on {threads} threads: {latency:?}"
        );
        let m = result.best_move.expect("a move");
        assert!(
            Position::startpos().is_legal(m),
            "{algorithm:?} on {threads} threads: {m}"
        );
    }
}

/// A fresh searcher on one thread with the same node limit: the same move, score, principal
/// variation and counters.
#[test]
fn every_engine_is_deterministic_on_one_thread_with_a_node_limit() {
    let pos =
        Position::from_fen("r1bqkb1r/pppp1ppp/2n2n2/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 2 3")
            .expect("fen");
    for algorithm in ENGINES {
        let run = || {
            let mut searcher = Searcher::new(config(algorithm));
            let result = search(&mut searcher, &Game::new(pos), 3000);
            (
                result.best_move,
                result.info.score,
                result.info.pv.clone(),
                searcher.stats(),
            )
        };
        let first = run();
        assert!(first.0.is_some(), "{algorithm:?}: no move");
        assert!(first.3.positions > 0, "{algorithm:?}: nothing searched");
        assert_eq!(first, run(), "{algorithm:?}");
    }
}
