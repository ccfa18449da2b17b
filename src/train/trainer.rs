//! The training loop: shuffled mini-batches split across threads, per-thread gradients summed
//! in thread order, one AdamW step per batch.
//!
//! Each thread keeps a dense gradient buffer (the whole network: about 200k floats at H = 256)
//! and zeroes it per batch; a batch of 16384 samples costs about 500M flops against the
//! memset's 200k writes, so sparse bookkeeping would not pay. Threads take fixed slices of the
//! batch and their sums are added in thread order, so a run is a function of its seed and
//! thread count (and on one thread, of its seed alone).

use std::time::Instant;

use crate::search::nnue::features::KingLayout;

use super::data::{Dataset, bucket, sigmoid};
use super::model::{Network, Rng, Scratch};
use super::optim::{AdamW, cosine};

/// How to train.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// How the inputs are keyed by the perspective's king.
    pub kings: KingLayout,
    /// Neurons per perspective.
    pub hidden: usize,
    /// Output buckets by material.
    pub buckets: usize,
    /// Passes over the training samples.
    pub epochs: usize,
    /// Samples per optimiser step.
    pub batch: usize,
    /// First learning rate (cosine decay to 1 % of it).
    pub lr: f32,
    /// Weight of the game result in the target (the rest is the search score).
    pub wdl: f32,
    /// Exponent of the loss `|p − t|^power`.
    pub power: f32,
    /// Worker threads.
    pub threads: usize,
    /// Seed of the initial weights and the shuffles.
    pub seed: u64,
    /// One block of every this many is held out for validation.
    pub val_every: usize,
    /// Consecutive samples per block: positions of one game lie side by side in the files and
    /// are alike, so holding out whole blocks (64 ≈ two games) keeps the validation loss honest.
    pub val_block: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            kings: KingLayout::Plain,
            hidden: 256,
            buckets: 8,
            epochs: 10,
            batch: 16384,
            lr: 0.003,
            wdl: 0.05,
            power: 2.0,
            threads: 1,
            seed: 1,
            val_every: 50,
            val_block: 64,
        }
    }
}

/// What one epoch did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Epoch {
    /// 1-based.
    pub number: usize,
    /// Mean training loss over the epoch's batches (as the weights were at each batch).
    pub train_loss: f64,
    /// Loss on the held-out samples after the epoch.
    pub val_loss: f64,
    /// Training samples per second in this epoch.
    pub samples_per_s: f64,
    /// Seconds since training began.
    pub elapsed_s: f64,
    /// Learning rate at the epoch's last step.
    pub lr: f32,
}

/// The training and held-out sample numbers: sample `i` is held out when
/// `(i / val_block) % val_every == val_every − 1`.
pub fn split(len: usize, val_every: usize, val_block: usize) -> (Vec<u32>, Vec<u32>) {
    let (every, block) = (val_every.max(2), val_block.max(1));
    (0..len as u32).partition(|&i| (i as usize / block) % every != every - 1)
}

/// The loss of one prediction and its derivative with respect to the raw output.
fn loss_and_grad(out: f32, target: f32, power: f32) -> (f32, f32) {
    let p = sigmoid(out);
    let diff = p - target;
    let a = diff.abs();
    let loss = a.powf(power);
    let d_p = power * a.powf(power - 1.0) * diff.signum();
    (loss, d_p * p * (1.0 - p))
}

/// The mean loss of `net` on the samples `which` (threads split them; sums in thread order).
pub fn mean_loss(net: &Network, data: &Dataset, which: &[u32], opts: &Options) -> f64 {
    if which.is_empty() {
        return 0.0;
    }
    let per = which.len().div_ceil(opts.threads.max(1));
    let sums: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = which
            .chunks(per)
            .map(|part| {
                s.spawn(move || {
                    let mut scratch = Scratch::new(net.hidden);
                    part.iter()
                        .map(|&i| {
                            let i = i as usize;
                            let inputs = data.inputs(i, net.kings);
                            let b = bucket(data.pieces(i), net.buckets);
                            let out = net.forward(&inputs, b, &mut scratch);
                            f64::from(loss_and_grad(out, data.target(i, opts.wdl), opts.power).0)
                        })
                        .sum::<f64>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("loss thread"))
            .collect()
    });
    sums.iter().sum::<f64>() / which.len() as f64
}

/// The loss of always predicting the mean training target (the baseline a network must beat).
pub fn baseline_loss(data: &Dataset, train: &[u32], val: &[u32], opts: &Options) -> f64 {
    let mean = train
        .iter()
        .map(|&i| f64::from(data.target(i as usize, opts.wdl)))
        .sum::<f64>()
        / train.len().max(1) as f64;
    val.iter()
        .map(|&i| {
            (mean - f64::from(data.target(i as usize, opts.wdl)))
                .abs()
                .powf(f64::from(opts.power))
        })
        .sum::<f64>()
        / val.len().max(1) as f64
}

/// Adds the gradient of the summed loss over `part` to `grad` (zeroed first); returns the
/// summed loss.
fn accumulate(
    net: &Network,
    data: &Dataset,
    part: &[u32],
    opts: &Options,
    scale: f32,
    scratch: &mut Scratch,
    grad: &mut [f32],
) -> f64 {
    grad.fill(0.0);
    let mut total = 0.0;
    for &i in part {
        let i = i as usize;
        let inputs = data.inputs(i, net.kings);
        let b = bucket(data.pieces(i), net.buckets);
        let out = net.forward(&inputs, b, scratch);
        let (loss, d_out) = loss_and_grad(out, data.target(i, opts.wdl), opts.power);
        total += f64::from(loss);
        net.backward(&inputs, b, d_out * scale, scratch, grad);
    }
    total
}

/// Trains a network from a seeded start; `on_epoch` sees each epoch's figures and the network
/// as it stands (to print and write checkpoints).
pub fn train(data: &Dataset, opts: &Options, on_epoch: impl FnMut(&Epoch, &Network)) -> Network {
    let start = Network::random(opts.kings, opts.hidden, opts.buckets, opts.seed);
    train_from(start, data, opts, on_epoch)
}

/// Trains `net` on (its shape must be the options'): a fine-tuning run from an existing
/// network. The optimiser starts afresh; the seed still orders the shuffles.
pub fn train_from(
    mut net: Network,
    data: &Dataset,
    opts: &Options,
    mut on_epoch: impl FnMut(&Epoch, &Network),
) -> Network {
    let (mut train, val) = split(data.len(), opts.val_every, opts.val_block);
    let threads = opts.threads.max(1);
    let batch = opts.batch.max(1);
    let mut adam = AdamW::new(net.params.len());
    let mut grads = vec![vec![0.0f32; net.params.len()]; threads];
    let mut scratches = vec![Scratch::new(opts.hidden); threads];
    let mut rng = Rng::new(opts.seed.wrapping_add(0x7261_696e));
    let steps_per_epoch = train.len().div_ceil(batch);
    let total_steps = steps_per_epoch * opts.epochs;
    let mut step = 0;
    let start = Instant::now();
    for number in 1..=opts.epochs {
        let epoch_start = Instant::now();
        for i in (1..train.len()).rev() {
            train.swap(i, rng.below(i + 1));
        }
        let mut loss_sum = 0.0;
        let mut lr = opts.lr;
        for chunk in train.chunks(batch) {
            let scale = 1.0 / chunk.len() as f32;
            let per = chunk.len().div_ceil(threads);
            let net_ref = &net;
            let losses: Vec<f64> = std::thread::scope(|s| {
                let handles: Vec<_> = chunk
                    .chunks(per)
                    .zip(grads.iter_mut())
                    .zip(scratches.iter_mut())
                    .map(|((part, grad), scratch)| {
                        s.spawn(move || accumulate(net_ref, data, part, opts, scale, scratch, grad))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("training thread"))
                    .collect()
            });
            loss_sum += losses.iter().sum::<f64>();
            let used = chunk.len().div_ceil(per);
            let (first, rest) = grads.split_first_mut().expect("one thread");
            for other in &rest[..used - 1] {
                for (g, &o) in first.iter_mut().zip(other) {
                    *g += o;
                }
            }
            lr = cosine(opts.lr, step, total_steps);
            adam.step(&mut net.params, first, lr);
            net.clip();
            step += 1;
        }
        let seconds = epoch_start.elapsed().as_secs_f64();
        let val_loss = mean_loss(&net, data, &val, opts);
        let epoch = Epoch {
            number,
            train_loss: loss_sum / train.len().max(1) as f64,
            val_loss,
            samples_per_s: train.len() as f64 / seconds.max(1e-9),
            elapsed_s: start.elapsed().as_secs_f64(),
            lr,
        };
        on_epoch(&epoch, &net);
    }
    net
}

#[cfg(test)]
mod tests {
    use super::loss_and_grad;

    #[test]
    fn the_loss_derivative_matches_finite_differences() {
        for power in [2.0f32, 2.6] {
            for (out, target) in [(0.3f32, 0.9f32), (-1.2, 0.1), (2.0, 0.2), (0.0, 0.5001)] {
                let eps = 1e-3;
                let up = f64::from(loss_and_grad(out + eps, target, power).0);
                let down = f64::from(loss_and_grad(out - eps, target, power).0);
                let numeric = (up - down) / (2.0 * f64::from(eps));
                let analytic = f64::from(loss_and_grad(out, target, power).1);
                assert!(
                    (numeric - analytic).abs() <= 1e-4 + 0.01 * numeric.abs(),
                    "power {power}, out {out}, target {target}: {analytic} vs {numeric}"
                );
            }
        }
        assert!(loss_and_grad(0.0, 0.5, 2.0).0.abs() < 1e-12);
    }
}
