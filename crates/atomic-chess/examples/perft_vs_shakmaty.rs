//! Perft speed of this crate against shakmaty (the GPL oracle, a dev-dependency only),
//! side by side in one run, with the ratio.
//!
//! `cargo run --release -p atomic-chess --example perft_vs_shakmaty`
//!
//! Positions: the start position at depth 5 and every "middlegame" FEN of
//! `tests/data/perft.txt` (at least 20 pieces, not the start position) at the depth of
//! its deepest vector (at least 4). Both sides bulk-count the last ply (`moves.len()`), so they do
//! the same work; node counts are compared before timing.

use std::time::{Duration, Instant};

use shakmaty::CastlingMode;
use shakmaty::fen::Fen;
use shakmaty::variant::Atomic;

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// (fen, depth) pairs to measure (the criterion bench `benches/perft.rs` measures the same).
pub fn cases() -> Vec<(String, u32)> {
    let mut cases = vec![(START.to_owned(), 5)];
    let data = include_str!("../tests/data/perft.txt");
    let mut deepest: Vec<(String, u32)> = Vec::new();
    for line in data
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split(';').collect();
        // At least depth 4 so every case is long enough to time; counts are checked
        // against shakmaty before timing.
        let (fen, depth) = (f[0].to_owned(), f[1].parse::<u32>().unwrap_or(1).max(4));
        let pieces = fen
            .split(' ')
            .next()
            .unwrap_or("")
            .chars()
            .filter(char::is_ascii_alphabetic)
            .count();
        if fen == START || pieces < 20 {
            continue;
        }
        match deepest.iter_mut().find(|(f, _)| *f == fen) {
            Some(entry) => entry.1 = entry.1.max(depth),
            None => deepest.push((fen, depth)),
        }
    }
    cases.extend(deepest);
    cases
}

/// `fen` as our position and as shakmaty's.
pub fn positions(fen: &str) -> (atomic_chess::Position, Atomic) {
    let ours = atomic_chess::Position::from_fen(fen).expect("our FEN parse");
    let theirs: Atomic = fen
        .parse::<Fen>()
        .expect("shakmaty FEN parse")
        .into_position(CastlingMode::Standard)
        .expect("shakmaty position");
    (ours, theirs)
}

/// Best-of-`reps` wall time of `f`, and its result.
fn time<F: FnMut() -> u64>(reps: u32, mut f: F) -> (Duration, u64) {
    let mut best = Duration::MAX;
    let mut nodes = 0;
    for _ in 0..reps {
        let t = Instant::now();
        nodes = std::hint::black_box(f());
        best = best.min(t.elapsed());
    }
    (best, nodes)
}

fn main() {
    let reps = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    println!(
        "{:<70} {:>2} {:>10} {:>12} {:>12} {:>6}",
        "position", "d", "nodes", "ours n/s", "shakmaty n/s", "ratio"
    );
    let (mut ours_total, mut theirs_total, mut nodes_total) = (0.0, 0.0, 0u64);
    let (mut mid_ours, mut mid_theirs, mut mid_nodes) = (0.0, 0.0, 0u64);
    for (fen, depth) in cases() {
        let (ours, theirs) = positions(&fen);
        let (t_ours, n_ours) = time(reps, || atomic_chess::perft(&ours, depth));
        let (t_theirs, n_theirs) = time(reps, || shakmaty::perft(&theirs, depth));
        assert_eq!(
            n_ours, n_theirs,
            "node counts differ for {fen} depth {depth}"
        );
        let nps = |t: Duration| n_ours as f64 / t.as_secs_f64();
        println!(
            "{:<70} {:>2} {:>10} {:>12.0} {:>12.0} {:>5.2}x",
            fen,
            depth,
            n_ours,
            nps(t_ours),
            nps(t_theirs),
            t_theirs.as_secs_f64() / t_ours.as_secs_f64()
        );
        ours_total += t_ours.as_secs_f64();
        theirs_total += t_theirs.as_secs_f64();
        nodes_total += n_ours;
        if fen != START {
            mid_ours += t_ours.as_secs_f64();
            mid_theirs += t_theirs.as_secs_f64();
            mid_nodes += n_ours;
        }
    }
    println!(
        "middlegame total: {mid_nodes} nodes, ours {:.0} n/s, shakmaty {:.0} n/s, ratio {:.2}x",
        mid_nodes as f64 / mid_ours,
        mid_nodes as f64 / mid_theirs,
        mid_theirs / mid_ours
    );
    println!(
        "overall: {nodes_total} nodes, ours {:.0} n/s, shakmaty {:.0} n/s, ratio {:.2}x",
        nodes_total as f64 / ours_total,
        nodes_total as f64 / theirs_total,
        theirs_total / ours_total
    );
}
