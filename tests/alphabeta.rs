//! The alpha-beta search (the default `Algorithm`): immediate wins at any budget, forced wins
//! in two and three moves within a modest node budget, determinism, MultiPV, randomised
//! openings, stopping. Positions: `tests/data/tactics.epd` (as `tests/solver.rs`).

use std::sync::atomic::AtomicBool;

use atomic_bot::search::{
    Algorithm, Limits, Proven, Score, SearchConfig, SearchInfo, SearchParams, Searcher,
};
use atomic_chess::{Game, Move, Position};

mod tactics;
use tactics::{puzzles, search};

fn config() -> SearchConfig {
    SearchConfig {
        algorithm: Algorithm::AlphaBeta,
        hash_mb: 8,
        ..SearchConfig::default()
    }
}

#[test]
fn alphabeta_is_the_default() {
    assert_eq!(SearchConfig::default().algorithm, Algorithm::AlphaBeta);
}

/// Every legal capture that blows up the enemy king (and every mate in one) is played at once,
/// whatever the budget, and reported as a proven win in one.
#[test]
fn wins_in_one_at_any_budget() {
    let mut searcher = Searcher::new(config());
    for puzzle in puzzles(1) {
        let pos = Position::from_fen(&puzzle.fen).expect("valid FEN");
        for nodes in [0, 1, 50, 5000] {
            searcher.clear();
            let result = search(&mut searcher, &Game::new(pos), nodes);
            let best = result.best_move.expect("a move");
            let after = pos.play(best).expect("legal move");
            let outcome = after.outcome().expect("the game ends");
            assert_eq!(
                outcome.winner,
                Some(pos.turn()),
                "{} at {nodes} nodes played {best}",
                puzzle.id
            );
            assert_eq!(result.info.score, Score::Mate(1), "{}", puzzle.id);
            if after.board().king_of(!pos.turn()).is_none() {
                assert_eq!(result.proven, Some(Proven::Win(1)), "{}", puzzle.id);
            }
        }
    }
}

/// Forced wins in `mate` moves: the puzzle's first move (or another win: a few puzzles have
/// two) with a mate score no longer than the puzzle's, in nearly all of them.
fn forced_wins(mate: u32, nodes: u64, min_exact: usize) {
    forced_wins_with(config(), mate, nodes, min_exact);
}

fn forced_wins_with(config: SearchConfig, mate: u32, nodes: u64, min_exact: usize) {
    let mut searcher = Searcher::new(config);
    let set = puzzles(mate);
    let mut exact = 0;
    let mut missed = Vec::new();
    for puzzle in &set {
        let pos = Position::from_fen(&puzzle.fen).expect("valid FEN");
        searcher.clear();
        let result = search(&mut searcher, &Game::new(pos), nodes);
        match result.info.score {
            Score::Mate(n) if n > 0 && n <= mate as i32 => {}
            other => missed.push(format!("{} {other:?}", puzzle.id)),
        }
        if result.best_move.map(|m| m.to_string()) == Some(puzzle.best.clone()) {
            exact += 1;
        }
    }
    assert!(
        missed.len() <= set.len() - min_exact,
        "mate {mate}: no mate score in {missed:?}"
    );
    assert!(
        exact >= min_exact,
        "mate {mate}: only {exact}/{} exact at {nodes} nodes",
        set.len()
    );
}

#[test]
fn forced_wins_in_two() {
    forced_wins(2, 10_000, 56);
}

#[test]
fn forced_wins_in_three() {
    forced_wins(3, 30_000, 54);
}

/// Singular extensions (an option, off by default) search the table move's position again
/// without it at the same ply: the forced wins are still found, and the search is still
/// deterministic.
#[test]
fn singular_extensions_keep_the_forced_wins() {
    let config = SearchConfig {
        params: SearchParams {
            ab_singular_depth: 4,
            ab_singular_margin: 6,
            ab_singular_neg: 2,
            ..Default::default()
        },
        ..config()
    };
    forced_wins_with(config.clone(), 2, 10_000, 54);
    forced_wins_with(config.clone(), 3, 30_000, 52);
    assert_eq!(fixed_node_run(&config), fixed_node_run(&config));
}

/// What a fresh searcher reports for an opening position at 60 000 nodes: the move, score,
/// principal variation, depth and node count.
fn fixed_node_run(config: &SearchConfig) -> (Option<Move>, Score, Vec<Move>, u32, u64) {
    let pos =
        Position::from_fen("r1bqkb1r/pppp1ppp/2n2n2/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 2 3")
            .expect("fen");
    let mut searcher = Searcher::new(config.clone());
    let result = search(&mut searcher, &Game::new(pos), 60_000);
    (
        result.best_move,
        result.info.score,
        result.info.pv.clone(),
        result.info.depth,
        searcher.stats().positions,
    )
}

/// A fresh searcher with the same node limit: the same move, score, principal variation and
/// node count.
#[test]
fn deterministic_for_fixed_nodes() {
    let first = fixed_node_run(&config());
    assert!(first.3 >= 4, "depth {}", first.3);
    assert_eq!(first, fixed_node_run(&config()));
}

/// The principal variation is a legal line starting with the best move, and the ponder move
/// is its second move.
#[test]
fn pv_is_legal_and_starts_with_the_best_move() {
    let mut searcher = Searcher::new(config());
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rn2k2r/pp5p/2p3pn/1B1p4/Pb1PPp2/2N5/1PP3PP/R1B1K2R w KQkq - 0 14",
    ] {
        let pos = Position::from_fen(fen).expect("fen");
        let result = search(&mut searcher, &Game::new(pos), 100_000);
        let pv = &result.info.pv;
        assert_eq!(pv.first().copied(), result.best_move, "{fen}");
        assert_eq!(pv.get(1).copied(), result.ponder_move, "{fen}");
        let mut p = pos;
        for &m in pv {
            p = p
                .play(m)
                .unwrap_or_else(|e| panic!("{fen}: pv move {m}: {e:?}"));
        }
    }
}

/// MultiPV: the lines are distinct moves, best first, and the first is the move played.
#[test]
fn multipv_reports_distinct_lines_best_first() {
    let mut searcher = Searcher::new(config());
    searcher.set_multipv(3);
    let game = Game::new(Position::startpos());
    let limits = Limits {
        depth: Some(6),
        ..Limits::default()
    };
    let mut all: Vec<SearchInfo> = Vec::new();
    let result = searcher.search(&game, &limits, &AtomicBool::new(false), &mut |info| {
        all.push(info.clone());
    });
    // The last iteration's three lines, then the final report (line 1 again).
    let third = all
        .iter()
        .rposition(|i| i.multipv == 3)
        .expect("a third line");
    let lines: Vec<&SearchInfo> = all[third - 2..=third].iter().collect();
    assert_eq!(
        lines
            .iter()
            .map(|i| (i.multipv, i.depth))
            .collect::<Vec<_>>(),
        [(1, 6), (2, 6), (3, 6)]
    );
    let moves: std::collections::HashSet<_> = lines.iter().map(|i| i.pv[0]).collect();
    assert!(moves.len() >= 3, "lines repeat a move: {lines:?}");
    let cp = |i: &SearchInfo| match i.score {
        Score::Cp(c) => c,
        Score::Mate(m) => m.signum() * 100_000,
    };
    assert!(cp(lines[0]) >= cp(lines[1]) && cp(lines[1]) >= cp(lines[2]));
    assert_eq!(result.best_move, Some(lines[0].pv[0]));
}

/// With `randomize` on, different seeds pick different opening moves among those within the
/// window (widened here so that the test checks the mechanism).
#[test]
fn randomize_varies_the_opening_move() {
    let game = Game::new(Position::startpos());
    let mut moves = std::collections::HashSet::new();
    let params = SearchParams {
        random_window: 0.3,
        ..Default::default()
    };
    for seed in 1..=12 {
        let mut searcher = Searcher::new(SearchConfig {
            seed,
            randomize: true,
            params: params.clone(),
            ..config()
        });
        let result = search(&mut searcher, &game, 20_000);
        moves.insert(result.best_move.expect("a move").to_string());
    }
    assert!(moves.len() >= 2, "always {moves:?}");
}

/// A checkmated side has no move; a single legal move is returned; a stalemate is a draw.
#[test]
fn no_move_and_single_move() {
    let mut searcher = Searcher::new(config());
    let mated = Position::from_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
        .expect("fen");
    if mated.legal_moves().is_empty() {
        let result = search(&mut searcher, &Game::new(mated), 100);
        assert_eq!(result.best_move, None);
        assert_eq!(result.proven, Some(Proven::Loss(0)));
    }
    let result = search(&mut searcher, &Game::new(Position::startpos()), 10);
    assert!(result.best_move.is_some());
}

/// An infinite search (pondering, `go infinite`) waits for `stop` even when it has nothing left
/// to search: here a win in one, found at once.
#[test]
fn an_infinite_search_waits_for_stop_after_a_win_is_found() {
    let puzzle = &puzzles(1)[0];
    let pos = Position::from_fen(&puzzle.fen).expect("fen");
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&stop);
    let stopped = std::sync::Arc::new(AtomicBool::new(false));
    let seen = std::sync::Arc::clone(&stopped);
    let setter = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        seen.store(true, std::sync::atomic::Ordering::SeqCst);
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let mut searcher = Searcher::new(config());
    let limits = Limits {
        infinite: true,
        ..Limits::default()
    };
    let result = searcher.search(&Game::new(pos), &limits, &stop, &mut |_| {});
    assert!(
        stopped.load(std::sync::atomic::Ordering::SeqCst),
        "returned before stop"
    );
    setter.join().expect("setter");
    assert_eq!(result.info.score, Score::Mate(1));
}

/// An infinite search ends when the stop flag is set from another thread, with a legal move.
#[test]
fn stop_flag_ends_an_infinite_search() {
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&stop);
    let setter = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let mut searcher = Searcher::new(config());
    let game = Game::new(Position::startpos());
    let limits = Limits {
        infinite: true,
        ..Limits::default()
    };
    let result = searcher.search(&game, &limits, &stop, &mut |_| {});
    setter.join().expect("setter");
    let m = result.best_move.expect("a move");
    assert!(Position::startpos().is_legal(m));
}
