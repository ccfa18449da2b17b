//! `atomic-bot bench`: a fixed search over fixed positions.
//!
//! Every position is searched from a fresh tree with the same playout budget on one thread, so
//! the total of positions visited is a signature of the search's behaviour: it is identical
//! from run to run and changes when the search changes. Nodes per second measure speed.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use atomic_chess::{Game, Position};

use super::Output;
use crate::search::{Limits, SearchConfig, Searcher};

/// Playouts per position of the default bench.
pub const DEFAULT_PLAYOUTS: u64 = 20_000;

/// Openings, middlegames and endgames, with atomic tactics in several of them.
pub const POSITIONS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkb1r/pppppppp/5n2/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 1 2",
    "rn2k2r/pp5p/2p3pn/1B1p4/Pb1PPp2/2N5/1PP3PP/R1B1K2R w KQkq - 0 14",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R w KQkq - 4 4",
    "1r2k3/6p1/p3pp1r/1p1p3p/3PP1nP/2P2PP1/P1Q2N2/R1B1KB1R b KQ - 1 14",
    "r1q1k2r/6p1/p1np4/1p3p1P/2P1P2b/8/P2N1B2/R2QKB2 b Qkq - 1 23",
    "r1k5/8/1p3p2/p1pP4/PPP2Ppp/4p1PP/3RK3/R7 b - - 1 27",
    "8/8/4k3/8/2Q5/8/4K3/8 w - - 0 1",
];

/// Runs the bench and prints one line per position, then the totals.
pub fn run(out: &Output, config: &SearchConfig, playouts: u64) {
    let mut config = config.clone();
    config.threads = 1;
    config.randomize = false;
    let mut searcher = Searcher::new(config);
    let stop = AtomicBool::new(false);
    let limits = Limits {
        nodes: Some(playouts),
        ..Limits::default()
    };
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
}
