//! Criterion benchmark: perft nodes/s of this crate and of shakmaty (dev-dependency
//! oracle) on the same positions, both bulk-counting the last ply.
//!
//! `cargo bench -p atomic-chess --bench perft` prints `thrpt` in nodes/s for each
//! `ours/...` and `shakmaty/...` pair. For a one-screen table with ratios use
//! `cargo run --release -p atomic-chess --example perft_vs_shakmaty`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use shakmaty::CastlingMode;
use shakmaty::fen::Fen;
use shakmaty::variant::Atomic;

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The start position at depth 5, then the perft.txt middlegames (>= 20 pieces) at
/// their deepest vector (at least 4).
fn cases() -> Vec<(String, u32)> {
    let mut cases = vec![(START.to_owned(), 5)];
    let data = include_str!("../tests/data/perft.txt");
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
        match cases.iter_mut().find(|(f, _)| *f == fen) {
            Some(entry) => entry.1 = entry.1.max(depth),
            None => cases.push((fen, depth)),
        }
    }
    cases
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    // Short windows keep the whole run near 90 s on a shared 2-core machine.
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_secs(1));
    group.measurement_time(std::time::Duration::from_secs(2));
    for (i, (fen, depth)) in cases().into_iter().enumerate() {
        let ours = atomic_chess::Position::from_fen(&fen).expect("our FEN parse");
        let theirs: Atomic = fen
            .parse::<Fen>()
            .expect("shakmaty FEN parse")
            .into_position(CastlingMode::Standard)
            .expect("shakmaty position");
        let nodes = atomic_chess::perft(&ours, depth);
        assert_eq!(nodes, shakmaty::perft(&theirs, depth), "{fen}");
        let name = if i == 0 {
            "startpos".to_owned()
        } else {
            format!("mid{i:02}")
        };
        group.throughput(Throughput::Elements(nodes));
        group.bench_with_input(BenchmarkId::new("ours", &name), &depth, |b, &d| {
            b.iter(|| atomic_chess::perft(&ours, d));
        });
        group.bench_with_input(BenchmarkId::new("shakmaty", &name), &depth, |b, &d| {
            b.iter(|| shakmaty::perft(&theirs, d));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
