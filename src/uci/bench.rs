//! `atomic-bot bench`: a fixed search over fixed positions.
//!
//! Every position is searched by the MCTS from a fresh tree with the same playout budget (on one
//! thread by default), then by the alpha-beta search from a fresh table to a fixed depth, so the totals of
//! positions visited (`Nodes searched`, `Alpha-beta nodes`) are signatures of the two searches'
//! behaviour: identical from run to run, changed when a search changes. Nodes per second
//! measure speed.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use atomic_chess::{Game, Position};

use super::Output;
use crate::search::{Algorithm, Limits, SearchConfig, Searcher};

/// Playouts per position of the default bench.
pub const DEFAULT_PLAYOUTS: u64 = 10_000;

/// Openings (balanced lines of the shared opening book) and middlegames with atomic tactics;
/// every one needs a real search (none is a win in one).
pub const POSITIONS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkb1r/pppppppp/5n2/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 1 2",
    "rnbqk1nr/pppp1pp1/3bp2p/8/P7/3P3P/1PP1PPP1/RNBQKBNR w KQkq - 1 4",
    "r1bqkb1r/pppp1ppp/n6n/4p3/P7/1P2P3/2PP1PPP/RNBQKBNR w KQkq - 1 4",
    "rnbqk1nr/ppppbp1p/4p1p1/8/8/1P4PB/P1PPPP1P/RNBQK1NR w KQkq - 1 4",
    "rnbqkbnr/1ppppp1p/6p1/p7/1P4P1/8/P1PPPP1P/RNBQKBNR w KQkq - 0 3",
    "r1bqkbnr/pppppp1p/n7/6pP/8/8/PPPPPPP1/RNBQKBNR w KQkq - 1 3",
    "rn2k2r/pp5p/2p3pn/1B1p4/Pb1PPp2/2N5/1PP3PP/R1B1K2R w KQkq - 0 14",
];

/// Runs the bench on `threads` search threads and prints one line per position, then the
/// totals. The signature is that of one thread; more threads search differently (batches of
/// playouts, see `search::mcts`, with their own signature per thread count; the alpha-beta
/// part with helper threads, not deterministic: its time measures the speed-up to depth).
pub fn run(out: &Output, config: &SearchConfig, playouts: u64, threads: usize) {
    let mut config = config.clone();
    config.algorithm = Algorithm::Mcts;
    config.threads = threads.max(1);
    config.randomize = false;
    let mut searcher = Searcher::new(config.clone());
    let stop = AtomicBool::new(false);
    let limits = Limits {
        nodes: Some(playouts),
        ..Limits::default()
    };
    if let Some(net) = &config.network {
        out.line(&format!(
            "Evaluation      : network {:#018x} (hidden {}, buckets {}), SIMD {}",
            net.hash(),
            net.hidden(),
            net.buckets(),
            net.kernel().name()
        ));
    }
    let mut total_positions = 0;
    let mut total_playouts = 0;
    let start = Instant::now();
    for (i, fen) in POSITIONS.iter().enumerate() {
        let Ok(pos) = Position::from_fen(fen) else {
            out.line(&format!(
                "info string error: bench position {} does not parse",
                i + 1
            ));
            continue;
        };
        searcher.clear();
        let result = searcher.search(&Game::new(pos), &limits, &stop, &mut |_| {});
        let stats = searcher.stats();
        total_positions += stats.positions;
        total_playouts += stats.playouts;
        let best = result
            .best_move
            .map_or("0000".to_string(), |m| m.to_string());
        out.line(&format!(
            "position {:2}: bestmove {best:6} playouts {:7} nodes {:9} {fen}",
            i + 1,
            stats.playouts,
            stats.positions
        ));
    }
    let seconds = start.elapsed().as_secs_f64().max(1e-9);
    out.line("===========================");
    out.line(&format!("Playouts        : {total_playouts}"));
    out.line(&format!("Nodes searched  : {total_positions}"));
    out.line(&format!(
        "Nodes/second    : {}",
        (total_positions as f64 / seconds) as u64
    ));
    out.line(&format!(
        "Playouts/second : {}",
        (total_playouts as f64 / seconds) as u64
    ));
    alphabeta(out, &config);
}

/// Depth of the alpha-beta part of the bench.
pub const ALPHABETA_DEPTH: u32 = 9;

/// The alpha-beta part: every position to a fixed depth from a fresh table.
fn alphabeta(out: &Output, config: &SearchConfig) {
    let mut config = config.clone();
    config.algorithm = Algorithm::AlphaBeta;
    let mut searcher = Searcher::new(config);
    let stop = AtomicBool::new(false);
    let limits = Limits {
        depth: Some(ALPHABETA_DEPTH),
        ..Limits::default()
    };
    let mut total = 0;
    let start = Instant::now();
    for (i, fen) in POSITIONS.iter().enumerate() {
        let Ok(pos) = Position::from_fen(fen) else {
            continue;
        };
        searcher.clear();
        let result = searcher.search(&Game::new(pos), &limits, &stop, &mut |_| {});
        let nodes = searcher.stats().positions;
        total += nodes;
        let best = result
            .best_move
            .map_or("0000".to_string(), |m| m.to_string());
        out.line(&format!(
            "alpha-beta {:2}: bestmove {best:6} depth {} nodes {nodes:9}",
            i + 1,
            result.info.depth
        ));
    }
    let seconds = start.elapsed().as_secs_f64().max(1e-9);
    out.line("===========================");
    out.line(&format!("Alpha-beta nodes: {total}"));
    out.line(&format!(
        "Alpha-beta nps  : {}",
        (total as f64 / seconds) as u64
    ));
}
