//! Criterion benchmark: perft nodes/s of this crate and of shakmaty (dev-dependency
//! oracle) on the same positions, both bulk-counting the last ply.
//!
//! `cargo bench -p atomic-chess --bench perft` prints `thrpt` in nodes/s for each
//! `ours/...` and `shakmaty/...` pair. For a one-screen table with ratios use
//! `cargo run --release -p atomic-chess --example perft_vs_shakmaty`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// The example's cases and position set-up, so the bench and the one-screen table measure the
/// same positions (the start position at depth 5, then the perft.txt middlegames with at
/// least 20 pieces at their deepest vector, at least 4). Its `main` and timer are unused here.
#[path = "../examples/perft_vs_shakmaty.rs"]
#[allow(dead_code)]
mod table;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    // Short windows keep the whole run near 90 s on a shared 2-core machine.
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_secs(1));
    group.measurement_time(std::time::Duration::from_secs(2));
    for (i, (fen, depth)) in table::cases().into_iter().enumerate() {
        let (ours, theirs) = table::positions(&fen);
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
