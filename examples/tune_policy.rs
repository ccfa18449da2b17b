//! Fits the move priors' weights (`src/search/policy_weights.rs`) to Fairy-Stockfish's choices.
//!
//! Reads a CSV `fen,bestmove` (made by `scripts/gen_policy_data.py` from the positions of the
//! shared `labelled.csv`: FSF's best move at 20 000 nodes) and fits the linear model of
//! `atomic_bot::search::policy_features` by multinomial logistic regression: the softmax of
//! the moves' logits should give FSF's move a high probability (mean cross-entropy, full-batch
//! Adam, a small L2 penalty). Two weight sets are fitted, without and with the evaluation feature.
//! Positions with a capture that blows up the enemy king are left out (the engine takes those
//! outside the model). Rows are split into blocks of 64 consecutive rows; every tenth block is
//! held out and only reported, together with the same figures for the priors compiled into the
//! engine (at `PolicyTemperature` 1 and the default), so that a new fit can be compared with
//! the current one.
//!
//! ```sh
//! cargo run --profile tune --example tune_policy -- data/policy.csv \
//!     --out src/search/policy_weights.rs
//! ```
//! Options: `--epochs N` (600), `--l2 X` (1e-5), `--rate X` (0.05). Deterministic.

use atomic_bot::search::SearchParams;
use atomic_bot::search::eval::{static_eval, wins_at_once};
use atomic_bot::search::policy::{Priors, priors};
use atomic_bot::search::policy_features::{
    self, EVAL, FEATURES, GROUPS, PolicyContext, PolicySink, eval_feature,
};
use atomic_chess::{MoveList, Position};

/// One position: its moves' features and FSF's move.
struct Sample {
    /// Range of this position's moves in `Data::moves`.
    first: usize,
    count: usize,
    /// Index of FSF's move among them.
    target: usize,
    test: bool,
}

#[derive(Default)]
struct Data {
    samples: Vec<Sample>,
    /// Per move: the range of its entries in `entries`.
    moves: Vec<(u32, u32)>,
    entries: Vec<(u16, f32)>,
    /// Per sample: the engine's compiled-in priors (at temperature 1) for reference.
    reference: Vec<Vec<f32>>,
}

struct Recorder<'a>(&'a mut Vec<(u16, f32)>);

impl PolicySink for Recorder<'_> {
    fn add(&mut self, index: usize, value: f32) {
        self.0.push((index as u16, value));
    }
}

fn load(path: &str) -> Result<Data, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut data = Data::default();
    let params = SearchParams {
        policy_temperature: 1.0,
        ..SearchParams::default()
    };
    let mut skipped = 0;
    for (row, line) in text.lines().enumerate() {
        let Some((fen, best)) = line.rsplit_once(',') else {
            return Err(format!("{path}:{}: expected `fen,bestmove`", row + 1));
        };
        let pos = Position::from_fen(fen).map_err(|e| format!("{path}:{}: {e}", row + 1))?;
        let target = pos
            .parse_uci(best.trim())
            .map_err(|e| format!("{path}:{}: {e}", row + 1))?;
        let mut moves = MoveList::new();
        pos.legal_moves_into(&mut moves);
        if moves.iter().any(|&m| wins_at_once(&pos, m)) || moves.len() < 2 {
            skipped += 1;
            continue;
        }
        let Some(target) = moves.iter().position(|&m| m == target) else {
            return Err(format!("{path}:{}: {best} is not legal", row + 1));
        };
        let ctx = PolicyContext::new(&pos);
        let first = data.moves.len();
        for &m in &moves {
            let start = data.entries.len() as u32;
            policy_features::move_features(&ctx, &pos, m, &mut Recorder(&mut data.entries));
            let mut child = pos;
            child.play_unchecked(m);
            data.entries
                .push((EVAL as u16, eval_feature(-static_eval(&child))));
            data.moves.push((start, data.entries.len() as u32));
        }
        let mut reference = Priors::default();
        priors(&pos, moves.as_slice(), &params, true, &mut reference);
        data.reference.push(reference.probs);
        data.samples.push(Sample {
            first,
            count: moves.len(),
            target,
            test: (row / 64) % 10 == 9,
        });
    }
    eprintln!(
        "{} positions ({} held out), {} moves, {} feature entries; {skipped} skipped (a win at once \
         or a single move)",
        data.samples.len(),
        data.samples.iter().filter(|s| s.test).count(),
        data.moves.len(),
        data.entries.len()
    );
    Ok(data)
}

/// Mean cross-entropy and top-1 accuracy of probabilities `probs(sample)` over the split.
fn report(data: &Data, test: bool, mut probs: impl FnMut(usize) -> Vec<f32>) -> (f64, f64) {
    let (mut loss, mut hits, mut n) = (0.0, 0, 0);
    for (i, s) in data.samples.iter().enumerate() {
        if s.test != test {
            continue;
        }
        let p = probs(i);
        loss -= f64::from(p[s.target].max(1e-9)).ln();
        let best = (0..p.len())
            .max_by(|&a, &b| p[a].total_cmp(&p[b]).then(b.cmp(&a)))
            .unwrap_or(0);
        hits += usize::from(best == s.target);
        n += 1;
    }
    (loss / n.max(1) as f64, hits as f64 / n.max(1) as f64)
}

fn softmax(logits: &mut [f32]) {
    let max = logits.iter().copied().fold(f32::MIN, f32::max);
    let mut sum = 0.0;
    for l in logits.iter_mut() {
        *l = (*l - max).exp();
        sum += *l;
    }
    for l in logits.iter_mut() {
        *l /= sum;
    }
}

fn probabilities(data: &Data, i: usize, w: &[f64]) -> Vec<f32> {
    let s = &data.samples[i];
    let mut logits: Vec<f32> = data.moves[s.first..s.first + s.count]
        .iter()
        .map(|&(a, b)| {
            data.entries[a as usize..b as usize]
                .iter()
                .map(|&(f, v)| (w[f as usize] * f64::from(v)) as f32)
                .sum()
        })
        .collect();
    softmax(&mut logits);
    logits
}

/// Full-batch Adam on the training split. `with_eval` false keeps the evaluation weight at 0.
fn fit(data: &Data, with_eval: bool, epochs: usize, l2: f64, rate: f64) -> Vec<f64> {
    let mut w = vec![0.0f64; FEATURES];
    let (mut m1, mut m2) = (vec![0.0f64; FEATURES], vec![0.0f64; FEATURES]);
    let (b1, b2) = (0.9f64, 0.999f64);
    let train = data.samples.iter().filter(|s| !s.test).count() as f64;
    let mut grad = vec![0.0f64; FEATURES];
    let mut logits = Vec::new();
    for epoch in 1..=epochs {
        grad.iter_mut().for_each(|g| *g = 0.0);
        let mut loss = 0.0;
        for s in data.samples.iter().filter(|s| !s.test) {
            let moves = &data.moves[s.first..s.first + s.count];
            logits.clear();
            for &(a, b) in moves {
                let sum: f64 = data.entries[a as usize..b as usize]
                    .iter()
                    .map(|&(f, v)| w[f as usize] * f64::from(v))
                    .sum();
                logits.push(sum);
            }
            let max = logits.iter().copied().fold(f64::MIN, f64::max);
            let total: f64 = logits.iter().map(|l| (l - max).exp()).sum();
            loss -= logits[s.target] - max - total.ln();
            for (j, &(a, b)) in moves.iter().enumerate() {
                let p = (logits[j] - max).exp() / total;
                let g = p - f64::from(u8::from(j == s.target));
                for &(f, v) in &data.entries[a as usize..b as usize] {
                    grad[f as usize] += g * f64::from(v);
                }
            }
        }
        if !with_eval {
            grad[EVAL] = 0.0;
        }
        let t = epoch as f64;
        for f in 0..FEATURES {
            let g = grad[f] / train + 2.0 * l2 * w[f];
            m1[f] = b1 * m1[f] + (1.0 - b1) * g;
            m2[f] = b2 * m2[f] + (1.0 - b2) * g * g;
            let step =
                rate * (m1[f] / (1.0 - b1.powf(t))) / ((m2[f] / (1.0 - b2.powf(t))).sqrt() + 1e-8);
            w[f] -= step;
        }
        if !with_eval {
            w[EVAL] = 0.0;
        }
        if epoch % 100 == 0 || epoch == epochs {
            eprintln!("  epoch {epoch}: train loss {:.4}", loss / train);
        }
    }
    w
}

fn render(name: &str, doc: &str, w: &[f64]) -> String {
    let mut out = format!("/// {doc}\n#[rustfmt::skip]\npub const {name}: [f32; FEATURES] = [\n");
    for pair in GROUPS.windows(2) {
        let ((group, start), (_, end)) = (pair[0], pair[1]);
        out.push_str(&format!("    // {group}\n"));
        for chunk in w[start..end].chunks(8) {
            let line: Vec<String> = chunk.iter().map(|x| format!("{x:.4}")).collect();
            out.push_str(&format!("    {},\n", line.join(", ")));
        }
    }
    out.push_str("];\n");
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut input = None;
    let mut out_path = None;
    let (mut epochs, mut l2, mut rate) = (600usize, 1e-5f64, 0.05f64);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| fail(&format!("{name} needs a value")))
        };
        match arg.as_str() {
            "--out" => out_path = Some(value("--out")),
            "--epochs" => {
                epochs = value("--epochs")
                    .parse()
                    .unwrap_or_else(|e| fail(&format!("--epochs: {e}")));
            }
            "--l2" => {
                l2 = value("--l2")
                    .parse()
                    .unwrap_or_else(|e| fail(&format!("--l2: {e}")));
            }
            "--rate" => {
                rate = value("--rate")
                    .parse()
                    .unwrap_or_else(|e| fail(&format!("--rate: {e}")));
            }
            _ if input.is_none() && !arg.starts_with("--") => input = Some(arg),
            _ => fail(&format!("unexpected argument {arg}")),
        }
    }
    let input = input.unwrap_or_else(|| {
        fail("usage: tune_policy DATA.csv [--out FILE] [--epochs N] [--l2 X] [--rate X]")
    });
    let data = load(&input).unwrap_or_else(|e| fail(&e));
    let uniform = |i: usize| vec![1.0 / data.samples[i].count as f32; data.samples[i].count];
    for (name, test) in [("train", false), ("held-out", true)] {
        let (loss, _) = report(&data, test, uniform);
        let (ref_loss, ref_acc) = report(&data, test, |i| data.reference[i].clone());
        eprintln!(
            "{name}: uniform loss {loss:.4}; compiled-in refined priors at temperature 1: loss \
             {ref_loss:.4}, top-1 {:.1} %",
            ref_acc * 100.0
        );
    }
    let mut sets = Vec::new();
    for (label, with_eval) in [("EXPAND", false), ("REFINE", true)] {
        eprintln!("fitting {label}");
        let w = fit(&data, with_eval, epochs, l2, rate);
        for (name, test) in [("train", false), ("held-out", true)] {
            let (loss, acc) = report(&data, test, |i| probabilities(&data, i, &w));
            eprintln!("{label} {name}: loss {loss:.4}, top-1 {:.1} %", acc * 100.0);
        }
        sets.push(w);
    }
    let text = format!(
        "//! The move priors' weights, generated by `examples/tune_policy.rs` (do not edit by hand):\n\
         //! `cargo run --profile tune --example tune_policy -- {input} --epochs {epochs} --l2 {l2} --rate {rate}`.\n\
         //! Logits per unit of each feature of [`super::policy_features`].\n\n\
         // Fitted numbers, some of which happen to be near π/8.\n\
         #![allow(clippy::approx_constant)]\n\n\
         use super::policy_features::FEATURES;\n\n{}\n{}",
        render(
            "EXPAND",
            "Weights of the priors at a node's expansion (the evaluation weight is 0).",
            &sets[0]
        ),
        render(
            "REFINE",
            "Weights of the refined priors, with the evaluation after the move.",
            &sets[1]
        ),
    );
    match out_path {
        Some(path) => std::fs::write(&path, text).unwrap_or_else(|e| fail(&format!("{path}: {e}"))),
        None => print!("{text}"),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("tune_policy: {message}");
    std::process::exit(2);
}
