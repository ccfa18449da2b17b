//! QA regressions for the searcher under tiny budgets (bullet emergencies, `go movetime 1`).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use atomic_bot::search::{Algorithm, Limits, SearchConfig, Searcher};
use atomic_chess::{Game, Position};

fn tiny(ms: u64) -> Limits {
    Limits {
        soft: Some(Duration::from_millis(ms)),
        hard: Some(Duration::from_millis(ms)),
        ..Limits::default()
    }
}

/// After a search that filled the tree, the next move's root preparation (reroot of a big
/// subtree) could use up a 1 ms budget before the first playout: the search then returned an
/// unvisited, arbitrary move (a king walk such as `e1d2`) with `nodes 0`.
#[test]
fn a_tiny_budget_after_a_full_tree_still_searches() {
    let config = SearchConfig {
        algorithm: Algorithm::Mcts,
        hash_mb: 2,
        ..SearchConfig::default()
    };
    let mut searcher = Searcher::new(config);
    let stop = AtomicBool::new(false);
    let start = Game::new(Position::startpos());
    let first = searcher.search(
        &start,
        &Limits {
            // Enough to fill the 2 MiB tree (about 58 000 nodes) and prune it at least once.
            nodes: Some(30_000),
            ..Limits::default()
        },
        &stop,
        &mut |_| {},
    );
    assert!(searcher.stats().prunes >= 1, "{:?}", searcher.stats());
    let (Some(best), Some(reply)) = (first.best_move, first.ponder_move) else {
        panic!("no move from the start position");
    };
    let moves = [best.to_string(), reply.to_string()];
    let game = Game::from_uci_moves(Position::startpos(), &moves).expect("legal line");
    for _ in 0..3 {
        let r = searcher.search(&game, &tiny(1), &stop, &mut |_| {});
        let mv = r.best_move.expect("a move");
        assert!(game.position().legal_moves().contains(&mv));
        assert!(r.info.nodes > 0, "no playout under a 1 ms budget: {mv}");
    }
}

/// A fresh tree with a zero budget: at least a few playouts, and a legal move.
#[test]
fn a_zero_budget_on_a_fresh_tree_still_searches() {
    let mut searcher = Searcher::new(SearchConfig::default());
    let stop = AtomicBool::new(false);
    let game = Game::new(Position::startpos());
    let r = searcher.search(&game, &tiny(0), &stop, &mut |_| {});
    assert!(r.best_move.is_some());
    assert!(r.info.nodes > 0);
}

/// A search that fills its tree prunes the least-visited branches and goes on: before, a full
/// tree ended every search, so at slow time controls (or pondering) a small `Hash` cut the
/// thinking time to the second or so it took to fill.
#[test]
fn a_full_tree_is_pruned_and_the_search_goes_on() {
    let game = Game::from_uci_moves(Position::startpos(), &["e2e3", "e7e6"]).expect("legal line");
    // 1 MiB holds about 29 000 nodes: 40 000 playouts fill it several times over.
    let nodes = 40_000;
    let run = || {
        let mut searcher = Searcher::new(SearchConfig {
            hash_mb: 1,
            algorithm: Algorithm::Mcts,
            ..SearchConfig::default()
        });
        let limits = Limits {
            nodes: Some(nodes),
            ..Limits::default()
        };
        let r = searcher.search(&game, &limits, &AtomicBool::new(false), &mut |_| {});
        (r, searcher.stats())
    };
    let (r, stats) = run();
    let mv = r.best_move.expect("a move");
    assert!(game.position().legal_moves().contains(&mv));
    assert_eq!(r.info.nodes, nodes, "the search stopped early");
    assert!(stats.prunes >= 2, "{stats:?}");
    assert!(r.info.hashfull <= 1000);
    // Deterministic, pruning included.
    let (again, again_stats) = run();
    assert_eq!(
        (again.best_move, again.info.nodes),
        (r.best_move, r.info.nodes)
    );
    assert_eq!(again_stats, stats);
}
