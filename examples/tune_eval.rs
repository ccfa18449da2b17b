//! Fits the static evaluation's weights (`src/search/eval_weights.rs`) to labelled positions.
//!
//! Reads a CSV `fen,score_stm_cp,quiet,result_white` (the shared `labelled.csv`: positions from
//! Fairy-Stockfish self-play, each with FSF's score at 20k nodes and the game's result) and fits
//! the linear model of `atomic_bot::search::features` by distillation: the target of a position
//! is `blend × sigmoid(FSF score / K) + (1 − blend) × result` (K fitted to the results first,
//! mate scores clipped), the prediction `sigmoid(eval / EvalScale)` of the evaluation at the
//! leaf of the quiescence search, the loss the mean squared error. The Texel trick: the leaf
//! of each position is found with the current weights, the weights are fitted on the leaves'
//! features by full-batch gradient descent (Adam), and that repeats `--iterations` times.
//! A leaf of two kings and one other unit gets the engine's fixed draw value
//! (`eval::lone_unit_draw`) and no gradient. Rows are split into blocks of 64 consecutive
//! rows (a game's positions are consecutive); every tenth block is held out and only reported.
//!
//! ```sh
//! cargo run --profile tune --example tune_eval -- ../shared/atomic/labelled.csv \
//!     --out src/search/eval_weights.rs
//! ```
//! Options: `--blend B` (0.8), `--iterations N` (4), `--epochs N` (3000), `--l2 X` (1e-9),
//! `--from-current` (start from the compiled-in weights instead of material only: quicker for
//! experiments, but then the result depends on the file). Deterministic: the default run
//! regenerates the committed `eval_weights.rs` (about 3 minutes).

use atomic_bot::search::SearchParams;
use atomic_bot::search::eval::{
    MATE_BOUND, QStats, QValue, lone_unit_draw, qsearch_leaves, qsearch_root,
};
use atomic_bot::search::eval_weights::WEIGHTS;
use atomic_bot::search::features::{
    self, FEATURES, FeatureSink, GROUPS, MATERIAL, MAX_PHASE, STM_TEMPO, WEIGHT_SCALE, Weights,
};
use atomic_chess::{Color, Position};

/// One labelled position.
struct Sample {
    pos: Position,
    /// Blend of FSF's score and the result, side to move's view.
    target: f64,
    /// The game result, side to move's view.
    result: f64,
    test: bool,
}

/// The leaf of one sample under the current weights.
#[derive(Default)]
struct Leaf {
    /// Features (index, count) with the sign of the root's side to move.
    entries: Vec<(u16, f32)>,
    /// Middle-game share of the leaf (phase / MAX_PHASE).
    mg: f32,
    /// For a decided leaf (a win or loss found by the search, or a draw): its fixed
    /// probability; no gradient flows through it.
    fixed: Option<f64>,
}

struct Recorder(Vec<(u16, i32)>);

impl FeatureSink for Recorder {
    fn add(&mut self, index: usize, count: i32) {
        self.0.push((index as u16, count));
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!(
            "usage: tune_eval <labelled.csv> [--out FILE] [--blend B] [--iterations N] [--epochs N] [--l2 X] [--from-current]"
        );
        std::process::exit(2);
    };
    let mut out = None;
    let mut blend = 0.8f64;
    let mut iterations = 4;
    let mut epochs = 3000;
    let mut l2 = 1e-9f64;
    let mut from_current = false;
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| panic!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--out" => out = Some(value()),
            "--blend" => blend = value().parse().expect("--blend"),
            "--iterations" => iterations = value().parse().expect("--iterations"),
            "--epochs" => epochs = value().parse().expect("--epochs"),
            "--l2" => l2 = value().parse().expect("--l2"),
            "--from-current" => from_current = true,
            _ => panic!("unknown option {flag}"),
        }
    }
    let params = SearchParams::default();
    let scale = f64::from(params.eval_scale);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let mut rows = Vec::new();
    for (i, line) in text.lines().skip(1).enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 4 {
            continue;
        }
        let (Ok(pos), Ok(score), Ok(white)) = (
            Position::from_fen(f[0]),
            f[1].parse::<f64>(),
            f[3].parse::<f64>(),
        ) else {
            continue;
        };
        let result = if pos.turn() == Color::White {
            white
        } else {
            1.0 - white
        };
        rows.push((pos, score, result, (i / 64) % 10 == 9));
    }
    // K: the sigmoid scale that maps FSF's scores (mates excluded) to the results best.
    let k = fit_k(&rows);
    eprintln!("{} positions, FSF scale K = {k:.0}", rows.len());
    let samples: Vec<Sample> = rows
        .iter()
        .map(|&(pos, score, result, test)| Sample {
            pos,
            target: blend * sigmoid(score.clamp(-2000.0, 2000.0) / k) + (1.0 - blend) * result,
            result,
            test,
        })
        .collect();
    let mut weights = if from_current {
        WEIGHTS.clone()
    } else {
        material_only()
    };
    // With the compiled-in weights the leaf search must score as the engine's quiescence: the
    // plain evaluation and the engine's packed one agree.
    let mut stats = QStats::default();
    let mismatches = samples
        .iter()
        .take(5000)
        .filter(|s| {
            let moves = s.pos.legal_moves();
            qsearch_root(&s.pos, &moves, &params, &mut stats)
                != leaf_search(&s.pos, &WEIGHTS, &params).0
        })
        .count();
    eprintln!("leaf search vs engine qsearch: {mismatches} of 5000 differ");
    let mut leaves = leaves_of(&samples, &weights, &params);
    report("start", &samples, &leaves, &weights, scale);
    for it in 1..=iterations {
        fit(&samples, &leaves, &mut weights, scale, epochs, l2);
        leaves = leaves_of(&samples, &weights, &params);
        report(
            &format!("iteration {it}"),
            &samples,
            &leaves,
            &weights,
            scale,
        );
    }
    print_groups(&weights);
    let file = render(
        &weights,
        &format!("blend {blend}, K {k:.0}, {iterations} iterations × {epochs} epochs, l2 {l2:e}"),
    );
    match out {
        Some(path) => {
            std::fs::write(&path, file).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
        }
        None => print!("{file}"),
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn fit_k(rows: &[(Position, f64, f64, bool)]) -> f64 {
    let err = |k: f64| -> f64 {
        rows.iter()
            .filter(|r| r.1.abs() < 30_000.0)
            .map(|r| (sigmoid(r.1 / k) - r.2).powi(2))
            .sum()
    };
    let (mut lo, mut hi) = (20.0f64, 3000.0f64);
    for _ in 0..60 {
        let a = lo + (hi - lo) / 3.0;
        let b = hi - (hi - lo) / 3.0;
        if err(a) < err(b) { hi = b } else { lo = a }
    }
    (lo + hi) / 2.0
}

fn material_only() -> Weights {
    let mut w = Weights {
        mg: [0; FEATURES],
        eg: [0; FEATURES],
    };
    for (i, v) in [100, 300, 300, 480, 900].into_iter().enumerate() {
        w.mg[MATERIAL + i] = v * WEIGHT_SCALE;
        w.eg[MATERIAL + i] = v * WEIGHT_SCALE;
    }
    w
}

/// A quiescence result that remembers its leaf: the position whose evaluation the score is
/// and its ply, or none for a decided score.
#[derive(Clone, Copy)]
struct Found {
    score: i32,
    leaf: Option<(Position, u32)>,
}

impl QValue for Found {
    fn score(&self) -> i32 {
        self.score
    }

    fn decided(score: i32) -> Found {
        Found { score, leaf: None }
    }

    fn negate(self) -> Found {
        Found {
            score: -self.score,
            leaf: self.leaf,
        }
    }
}

/// The engine's leaf quiescence search (`eval::qsearch_root`, the same code) with `weights`,
/// returning the leaf whose evaluation is the score: (score, leaf and whether its side to move
/// is the root's), or no leaf for a decided score.
fn leaf_search(
    pos: &Position,
    weights: &Weights,
    params: &SearchParams,
) -> (i32, Option<(Position, bool)>) {
    let moves = pos.legal_moves();
    let found = qsearch_leaves(
        pos,
        moves.as_slice(),
        params.qsearch_depth,
        &mut QStats::default(),
        &|leaf: &Position, ply| Found {
            score: evaluate(leaf, weights),
            leaf: Some((*leaf, ply)),
        },
    );
    (found.score, found.leaf.map(|(p, ply)| (p, ply % 2 == 0)))
}

/// The engine's static evaluation under weights `w`: the linear model, except that a lone
/// unit against a bare king is a draw (`eval::static_eval`).
fn evaluate(pos: &Position, w: &Weights) -> i32 {
    if lone_unit_draw(pos) {
        0
    } else {
        features::evaluate(pos, w)
    }
}

fn leaves_of(samples: &[Sample], weights: &Weights, params: &SearchParams) -> Vec<Leaf> {
    samples
        .iter()
        .map(|s| {
            let (score, leaf) = leaf_search(&s.pos, weights, params);
            // A lone unit against a bare king is valued 0 by the engine whatever the weights.
            let leaf = leaf.filter(|(pos, _)| !lone_unit_draw(pos));
            let Some((pos, same_side)) = leaf else {
                let fixed = if score >= MATE_BOUND {
                    0.98
                } else if score <= -MATE_BOUND {
                    0.02
                } else {
                    0.5
                };
                return Leaf {
                    fixed: Some(fixed),
                    ..Leaf::default()
                };
            };
            let mut rec = Recorder(Vec::new());
            let phase = features::extract(&pos, &mut rec);
            let sign = if same_side { 1.0 } else { -1.0 };
            Leaf {
                entries: rec.0.iter().map(|&(i, c)| (i, sign * c as f32)).collect(),
                mg: phase as f32 / MAX_PHASE as f32,
                fixed: None,
            }
        })
        .collect()
}

/// The leaf's evaluation in centipawns (root side to move's view) under float weights.
fn predict_cp(leaf: &Leaf, mg: &[f64], eg: &[f64]) -> f64 {
    let phase = f64::from(leaf.mg);
    leaf.entries
        .iter()
        .map(|&(i, c)| f64::from(c) * (mg[i as usize] * phase + eg[i as usize] * (1.0 - phase)))
        .sum()
}

fn as_float(w: &Weights) -> (Vec<f64>, Vec<f64>) {
    let s = f64::from(WEIGHT_SCALE);
    (
        w.mg.iter().map(|&x| f64::from(x) / s).collect(),
        w.eg.iter().map(|&x| f64::from(x) / s).collect(),
    )
}

/// Mean squared errors (train target, test target, test result) of the integer weights.
fn report(label: &str, samples: &[Sample], leaves: &[Leaf], weights: &Weights, scale: f64) {
    let (mg, eg) = as_float(weights);
    let mut sums = [0.0f64; 4];
    let mut counts = [0usize; 2];
    for (s, leaf) in samples.iter().zip(leaves) {
        let p = leaf
            .fixed
            .unwrap_or_else(|| sigmoid(predict_cp(leaf, &mg, &eg) / scale));
        let k = usize::from(s.test);
        sums[2 * k] += (p - s.target).powi(2);
        sums[2 * k + 1] += (p - s.result).powi(2);
        counts[k] += 1;
    }
    eprintln!(
        "{label}: train mse {:.5} (vs result {:.5}), held-out mse {:.5} (vs result {:.5}) [{} / {}]",
        sums[0] / counts[0] as f64,
        sums[1] / counts[0] as f64,
        sums[2] / counts[1] as f64,
        sums[3] / counts[1] as f64,
        counts[0],
        counts[1]
    );
}

/// Full-batch Adam on the training samples' mean squared error plus `l2 × Σ w²` (material and
/// tempo exempt), starting from `weights`; rounds the result back into `weights`.
fn fit(
    samples: &[Sample],
    leaves: &[Leaf],
    weights: &mut Weights,
    scale: f64,
    epochs: usize,
    l2: f64,
) {
    let (mut mg, mut eg) = as_float(weights);
    let n = FEATURES;
    let (mut m1, mut v1) = (vec![0.0f64; 2 * n], vec![0.0f64; 2 * n]);
    let train: Vec<(&Sample, &Leaf)> = samples
        .iter()
        .zip(leaves)
        .filter(|(s, l)| !s.test && l.fixed.is_none())
        .collect();
    let count = train.len() as f64;
    let (lr, b1, b2, eps) = (1.0f64, 0.9f64, 0.999f64, 1e-8f64);
    for epoch in 1..=epochs {
        let mut grad = vec![0.0f64; 2 * n];
        for (s, leaf) in &train {
            let p = sigmoid(predict_cp(leaf, &mg, &eg) / scale);
            let d = 2.0 * (p - s.target) * p * (1.0 - p) / scale / count;
            let phase = f64::from(leaf.mg);
            for &(i, c) in &leaf.entries {
                let g = d * f64::from(c);
                grad[i as usize] += g * phase;
                grad[n + i as usize] += g * (1.0 - phase);
            }
        }
        for i in 0..2 * n {
            let w = if i < n { mg[i] } else { eg[i - n] };
            let feature = i % n;
            if feature >= MATERIAL + 5 && feature != STM_TEMPO {
                grad[i] += 2.0 * l2 * w;
            }
            m1[i] = b1 * m1[i] + (1.0 - b1) * grad[i];
            v1[i] = b2 * v1[i] + (1.0 - b2) * grad[i] * grad[i];
            let mh = m1[i] / (1.0 - b1.powi(epoch as i32));
            let vh = v1[i] / (1.0 - b2.powi(epoch as i32));
            let step = lr * mh / (vh.sqrt() + eps);
            if i < n {
                mg[i] -= step;
            } else {
                eg[i - n] -= step;
            }
        }
    }
    let s = f64::from(WEIGHT_SCALE);
    for i in 0..n {
        weights.mg[i] = (mg[i] * s).round() as i32;
        weights.eg[i] = (eg[i] * s).round() as i32;
    }
}

fn print_groups(w: &Weights) {
    let s = WEIGHT_SCALE as f64;
    let show = |a: &[i32]| {
        a.iter()
            .map(|&x| format!("{:.0}", f64::from(x) / s))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // Each group's range; the last one runs to the end of the weights.
    let ends = GROUPS
        .iter()
        .skip(1)
        .map(|&(_, start)| start)
        .chain([w.mg.len()]);
    for (&(name, start), end) in GROUPS.iter().zip(ends) {
        if end - start > 16 && end != w.mg.len() {
            continue;
        }
        eprintln!(
            "{name:18} mg [{}]  eg [{}]",
            show(&w.mg[start..end]),
            show(&w.eg[start..end])
        );
    }
}

fn render(w: &Weights, how: &str) -> String {
    let arr = |a: &[i32]| {
        let mut out = String::new();
        for pair in GROUPS.windows(2) {
            out += &format!("        // {}\n", pair[0].0);
            for chunk in a[pair[0].1..pair[1].1].chunks(16) {
                out += &format!(
                    "        {},\n",
                    chunk
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        let (name, start) = GROUPS[GROUPS.len() - 1];
        out += &format!(
            "        // {name}\n        {},\n",
            a[start..]
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        out
    };
    format!(
        "//! Evaluation weights, generated by `examples/tune_eval.rs` (docs/JOURNAL.md, \"Session 3:\n\
         //! evaluation\"); regenerate rather than edit. Units: `1 / WEIGHT_SCALE` centipawns.\n\
         //! Fit: {how}.\n\
         \n\
         use super::features::Weights;\n\
         \n\
         /// The fitted weights per feature of [`super::features`] (middle game, endgame).\n\
         #[rustfmt::skip]\n\
         pub const WEIGHTS: Weights = Weights {{\n    mg: [\n{}    ],\n    eg: [\n{}    ],\n}};\n",
        arr(&w.mg),
        arr(&w.eg)
    )
}
