//! Texel-style tuning of the static evaluation against labelled positions.
//!
//! Reads a CSV `fen,score_stm_cp,quiet,result_white` (the shared `labelled.csv`: positions from
//! Fairy-Stockfish self-play with the game's result), evaluates every position with the leaf
//! evaluation (quiescence search), maps it to a win probability and minimises the mean squared
//! error against the game result by coordinate descent over the named spin parameters.
//!
//! ```sh
//! cargo run --release --example tune_eval -- labelled.csv [Param ...]
//! ```
//! Prints the error before and after and the tuned values as `setoption` lines.

use atomic_bot::search::SearchParams;
use atomic_bot::search::eval::{QStats, qsearch_root, win_probability};
use atomic_bot::search::params::{self, PARAMS};
use atomic_chess::{Color, Position};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: tune_eval <labelled.csv> [Param ...]");
        std::process::exit(2);
    };
    let mut names: Vec<String> = args.collect();
    if names.is_empty() {
        names = [
            "EvalScale",
            "ValueKnight",
            "ValueBishop",
            "ValueRook",
            "ValueQueen",
            "EvalMobility",
            "EvalThreat",
            "EvalThreatExtra",
            "EvalKingNeighbour",
            "EvalPawnAdvance",
            "EvalCentre",
            "EvalTempo",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let mut data = Vec::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let (Some(fen), Some(result)) = (fields.first(), fields.get(3)) else {
            continue;
        };
        let (Ok(pos), Ok(white)) = (Position::from_fen(fen), result.parse::<f32>()) else {
            continue;
        };
        let target = if pos.turn() == Color::White {
            white
        } else {
            1.0 - white
        };
        data.push((pos, target));
    }
    eprintln!("{} positions", data.len());
    let mut current = SearchParams::default();
    let mut best = error(&data, &current);
    eprintln!("start error {best:.6}");
    let mut step = 0.2f64;
    while step > 0.02 {
        let mut improved = false;
        for name in &names {
            let Some(spec) = params::find(name) else {
                eprintln!("unknown parameter {name}");
                continue;
            };
            let base = spec.spin(&current);
            let delta = ((base.abs() as f64 * step).round() as i64).max(1);
            for candidate in [base + delta, base - delta] {
                let mut trial = current.clone();
                spec.apply(&mut trial, candidate);
                let e = error(&data, &trial);
                if e < best {
                    best = e;
                    current = trial;
                    improved = true;
                    eprintln!("{name} = {} -> error {best:.6}", spec.spin(&current));
                    break;
                }
            }
        }
        if !improved {
            step /= 2.0;
        }
    }
    println!("# error {best:.6}");
    for spec in PARAMS {
        println!("setoption name {} value {}", spec.name, spec.spin(&current));
    }
}

fn error(data: &[(Position, f32)], params: &SearchParams) -> f64 {
    let mut stats = QStats::default();
    let mut sum = 0.0f64;
    for (pos, target) in data {
        let moves = pos.legal_moves();
        let cp = qsearch_root(pos, &moves, params, &mut stats);
        let p = win_probability(cp, params.eval_scale);
        sum += f64::from((p - target) * (p - target));
    }
    sum / data.len() as f64
}
