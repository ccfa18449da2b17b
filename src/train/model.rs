//! The float network the trainer fits: a shared feature transformer over 768 inputs a
//! perspective (768 per king bucket when keyed by the king), SCReLU, and one linear output per
//! material bucket.
//!
//! All parameters live in one flat vector (feature-transformer weights, the factoriser's when
//! keyed, its bias, the output weights, the output biases) so that the optimiser, the gradient
//! sums of the threads and the clipping each run over plain slices.
//!
//! The factoriser: a network keyed by the king has eight copies of every input, and each copy
//! sees only the positions whose king stands in its bucket, an eighth of the data. So every
//! input's weight is trained as the sum of its bucket's row and one row shared by all buckets
//! (the plain input's); the shared row learns from every position, the bucket rows only the
//! difference a king's placement makes. The file holds the sums (the engine never sees the
//! factoriser).

use crate::search::nnue::features::KingLayout;

use super::data::{INPUTS, Inputs};

/// Centipawns per unit of the network's output: the evaluation is `out · SCALE`.
pub const SCALE: f32 = 400.0;
/// Weights are kept within ±CLIP so that the quantised accumulator (32 rows of at most
/// `1.98 · 255` plus the bias) and `v · w` (at most `255 · 127`) fit in i16.
pub const CLIP: f32 = 1.98;

/// A network's float parameters and shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    /// How the inputs are keyed by the perspective's king.
    pub kings: KingLayout,
    /// Neurons of the feature transformer (per perspective).
    pub hidden: usize,
    /// Output buckets by material.
    pub buckets: usize,
    /// `ft_w [inputs][H]`, (keyed only) `fac_w [768][H]`, `ft_b [H]`, `out_w [B][2H]`,
    /// `out_b [B]`, back to back.
    pub params: Vec<f32>,
}

/// Per-thread working memory of one forward and backward pass.
#[derive(Clone, Debug)]
pub struct Scratch {
    acc_us: Vec<f32>,
    acc_them: Vec<f32>,
    grad_us: Vec<f32>,
    grad_them: Vec<f32>,
}

impl Scratch {
    /// Buffers for a network of `hidden` neurons.
    pub fn new(hidden: usize) -> Self {
        Scratch {
            acc_us: vec![0.0; hidden],
            acc_them: vec![0.0; hidden],
            grad_us: vec![0.0; hidden],
            grad_them: vec![0.0; hidden],
        }
    }
}

/// A seeded generator for the initial weights and the shuffles (splitmix64: tiny, and the same
/// sequence on every platform).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`.
    pub fn symmetric(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is negligible for n far below 2^64).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// `clamp(x, 0, 1)²`.
fn screlu(x: f32) -> f32 {
    let c = x.clamp(0.0, 1.0);
    c * c
}

impl Network {
    /// Rows of the factoriser: the plain inputs when keyed by the king, none otherwise.
    fn factor_rows(kings: KingLayout) -> usize {
        if kings == KingLayout::Plain {
            0
        } else {
            INPUTS
        }
    }

    /// Parameters of a network of this shape.
    pub fn param_count(kings: KingLayout, hidden: usize, buckets: usize) -> usize {
        (kings.inputs() + Self::factor_rows(kings)) * hidden
            + hidden
            + buckets * 2 * hidden
            + buckets
    }

    /// A seeded random network: transformer weights uniform in ±0.1 (about 30 active rows put
    /// an accumulator's spread near 0.3, inside SCReLU's range), output weights uniform in
    /// ±1/√(2H), biases zero. Keyed by the king, the factoriser's rows get the random values and
    /// the bucket rows start at zero (every bucket starts as the plain network).
    pub fn random(kings: KingLayout, hidden: usize, buckets: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let mut params = vec![0.0; Self::param_count(kings, hidden, buckets)];
        let keyed = kings.inputs() * hidden;
        let ft = keyed + Self::factor_rows(kings) * hidden;
        let random_rows = if kings == KingLayout::Plain { 0 } else { keyed };
        for p in &mut params[random_rows..ft] {
            *p = 0.1 * rng.symmetric();
        }
        let out_scale = 1.0 / ((2 * hidden) as f32).sqrt();
        let out = ft + hidden;
        for p in &mut params[out..out + buckets * 2 * hidden] {
            *p = out_scale * rng.symmetric();
        }
        Network {
            kings,
            hidden,
            buckets,
            params,
        }
    }

    /// A network of this shape with every parameter zero (to be filled, as from a file).
    pub fn zeros(kings: KingLayout, hidden: usize, buckets: usize) -> Self {
        Network {
            kings,
            hidden,
            buckets,
            params: vec![0.0; Self::param_count(kings, hidden, buckets)],
        }
    }

    /// Start of the factoriser's rows in `params` (equal to [`Network::ft_bias_at`] when there
    /// are none).
    pub fn factor_at(&self) -> usize {
        self.kings.inputs() * self.hidden
    }

    /// Whether the network has a factoriser (it is keyed by the king).
    pub fn factorised(&self) -> bool {
        self.kings != KingLayout::Plain
    }

    /// The weight of keyed input `f` for neuron `j` as the file holds it: its row plus, keyed,
    /// the factoriser's row of the same plain input.
    pub fn weight(&self, f: usize, j: usize) -> f32 {
        let h = self.hidden;
        let own = self.params[f * h + j];
        if self.factorised() {
            own + self.params[self.factor_at() + (f % INPUTS) * h + j]
        } else {
            own
        }
    }

    /// Start of the transformer bias in `params`.
    pub fn ft_bias_at(&self) -> usize {
        self.factor_at() + Self::factor_rows(self.kings) * self.hidden
    }

    /// Start of the output weights in `params`.
    pub fn out_weights_at(&self) -> usize {
        self.ft_bias_at() + self.hidden
    }

    /// Start of the output biases in `params`; every parameter before is clipped to ±[`CLIP`].
    pub fn out_bias_at(&self) -> usize {
        self.out_weights_at() + self.buckets * 2 * self.hidden
    }

    /// The raw output (`out`; the evaluation is `out · SCALE` centipawns), leaving the
    /// accumulators in `scratch` for [`Network::backward`].
    pub fn forward(&self, inputs: &Inputs, bucket: usize, scratch: &mut Scratch) -> f32 {
        let h = self.hidden;
        let ft_w = &self.params[..self.factor_at()];
        let fac_w = &self.params[self.factor_at()..self.ft_bias_at()];
        let ft_b = &self.params[self.ft_bias_at()..self.out_weights_at()];
        let factorised = self.factorised();
        for (acc, features) in [
            (&mut scratch.acc_us, &inputs.us),
            (&mut scratch.acc_them, &inputs.them),
        ] {
            acc.copy_from_slice(ft_b);
            for &f in features {
                let row = &ft_w[usize::from(f) * h..][..h];
                for (a, w) in acc.iter_mut().zip(row) {
                    *a += w;
                }
                if factorised {
                    let row = &fac_w[(usize::from(f) % INPUTS) * h..][..h];
                    for (a, w) in acc.iter_mut().zip(row) {
                        *a += w;
                    }
                }
            }
        }
        let w = &self.params[self.out_weights_at() + bucket * 2 * h..][..2 * h];
        let (w_us, w_them) = w.split_at(h);
        let mut sum = self.params[self.out_bias_at() + bucket];
        let dot = |acc: &[f32], w: &[f32]| -> f32 {
            acc.iter().zip(w).map(|(&a, &w)| screlu(a) * w).sum::<f32>()
        };
        sum += dot(&scratch.acc_us, w_us);
        sum += dot(&scratch.acc_them, w_them);
        sum
    }

    /// Adds `d_out · ∂out/∂θ` to `grad` for the sample [`Network::forward`] last evaluated with
    /// this `scratch`. Only the transformer rows of the sample's inputs are touched.
    pub fn backward(
        &self,
        inputs: &Inputs,
        bucket: usize,
        d_out: f32,
        scratch: &mut Scratch,
        grad: &mut [f32],
    ) {
        let h = self.hidden;
        let w_at = self.out_weights_at() + bucket * 2 * h;
        let w = &self.params[w_at..][..2 * h];
        let (w_us, w_them) = w.split_at(h);
        grad[self.out_bias_at() + bucket] += d_out;
        {
            let gw = &mut grad[w_at..][..2 * h];
            let (gw_us, gw_them) = gw.split_at_mut(h);
            for (acc, w, gw, ga) in [
                (&scratch.acc_us, w_us, gw_us, &mut scratch.grad_us),
                (&scratch.acc_them, w_them, gw_them, &mut scratch.grad_them),
            ] {
                for i in 0..h {
                    let c = acc[i].clamp(0.0, 1.0);
                    gw[i] += d_out * c * c;
                    ga[i] = if acc[i] > 0.0 && acc[i] < 1.0 {
                        2.0 * c * d_out * w[i]
                    } else {
                        0.0
                    };
                }
            }
        }
        let factorised = self.factorised();
        let (g_ft_w, rest) = grad.split_at_mut(self.factor_at());
        let (g_fac_w, rest) = rest.split_at_mut(self.ft_bias_at() - self.factor_at());
        for ((gb, &a), &b) in rest[..h]
            .iter_mut()
            .zip(&scratch.grad_us)
            .zip(&scratch.grad_them)
        {
            *gb += a + b;
        }
        for (features, ga) in [
            (&inputs.us, &scratch.grad_us),
            (&inputs.them, &scratch.grad_them),
        ] {
            for &f in features {
                let row = &mut g_ft_w[usize::from(f) * h..][..h];
                for (g, &a) in row.iter_mut().zip(ga.iter()) {
                    *g += a;
                }
                if factorised {
                    let row = &mut g_fac_w[(usize::from(f) % INPUTS) * h..][..h];
                    for (g, &a) in row.iter_mut().zip(ga.iter()) {
                        *g += a;
                    }
                }
            }
        }
    }

    /// Clamps every weight (all but the output biases) to ±[`CLIP`]; keyed by the king, the
    /// transformer's rows and the factoriser's to half of it each, so that their sums, the
    /// weights the file holds, stay within ±[`CLIP`] too.
    pub fn clip(&mut self) {
        let (ft, end) = (self.ft_bias_at(), self.out_bias_at());
        let half = if self.factorised() { CLIP / 2.0 } else { CLIP };
        for p in &mut self.params[..ft] {
            *p = p.clamp(-half, half);
        }
        for p in &mut self.params[ft..end] {
            *p = p.clamp(-CLIP, CLIP);
        }
    }
}
