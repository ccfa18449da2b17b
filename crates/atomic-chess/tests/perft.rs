//! Every vector of `tests/data/perft.txt` (a copy of the team's lichess-verified set).
//! All vectors are at most 1.5 million nodes, so all of them run in CI.

use atomic_chess::{Position, perft};

/// Vectors above this many nodes would be too slow for a normal test run.
const NODE_LIMIT: u64 = 2_000_000;

#[test]
fn perft_vectors() {
    let data = include_str!("data/perft.txt");
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in data
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let fields: Vec<&str> = line.split(';').collect();
        assert_eq!(fields.len(), 3, "bad vector line {line:?}");
        let depth: u32 = fields[1].parse().expect("depth");
        let nodes: u64 = fields[2].parse().expect("nodes");
        if nodes > NODE_LIMIT {
            continue;
        }
        let pos = Position::from_fen(fields[0]).expect("vector FEN");
        let got = perft(&pos, depth);
        if got != nodes {
            failures.push(format!(
                "{}: depth {depth}: expected {nodes}, got {got}",
                fields[0]
            ));
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 100, "only {checked} vectors ran");
}
