//! The trainer's side of the network file: quantising the float model into the engine's
//! [`Quantised`] form, written by the engine's own writer (`search::nnue::format`, format
//! version 1, documented there and in docs/NNUE.md), and an independent integer forward pass
//! over the trainer's feature lists, the oracle the quantisation error is measured with.

use crate::search::nnue::format;
use crate::search::nnue::{Network as EngineNetwork, NetworkError, Quantised};

use super::data::{Dataset, INPUTS, Inputs, bucket};
use super::model::Scratch;
use super::model::{Network, SCALE};

/// Quantisation of the transformer (weights, bias, activations): 1.0 becomes 255.
pub const QA: i32 = 255;
/// Quantisation of the output weights: 1.0 becomes 64.
pub const QB: i32 = 64;

/// Rounds to the nearest integer and saturates at i16 (clipping keeps weights far inside).
fn q16(x: f32, scale: i32) -> i16 {
    (x * scale as f32)
        .round()
        .clamp(f32::from(i16::MIN), f32::from(i16::MAX)) as i16
}

/// The float model's integers, as the file holds them.
pub fn quantise(net: &Network) -> Quantised {
    let p = &net.params;
    let (ft, out, bias) = (net.out_weights_at(), net.out_bias_at(), p.len());
    let h = net.hidden;
    let ft_weights = (0..net.kings.inputs() * h)
        .map(|i| q16(net.weight(i / h, i % h), QA))
        .collect();
    Quantised {
        kings: net.kings,
        hidden: h,
        buckets: net.buckets,
        qa: QA as u32,
        qb: QB as u32,
        scale: SCALE as u32,
        ft_weights,
        ft_bias: p[ft - h..ft].iter().map(|&w| q16(w, QA)).collect(),
        out_weights: p[ft..out].iter().map(|&w| q16(w, QB)).collect(),
        out_bias: p[out..bias]
            .iter()
            .map(|&w| {
                (f64::from(w) * f64::from(QA * QB))
                    .round()
                    .clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
            })
            .collect(),
    }
}

/// The float model of a network file's integers, the inverse of [`quantise`]: a start for
/// training on from an existing network (`atomic-bot train --init`). Quantising the result
/// gives the file's integers back. Keyed by the king, the file holds each input's summed weight
/// (its bucket's row plus the factoriser's); the factoriser gets the mean over the buckets and
/// each bucket row the rest. Training clips weights after every step (±[`super::model::CLIP`],
/// keyed rows and factoriser half of it each), so a file whose weights lie beyond what the
/// trainer writes changes at the first step. Fails, naming the field, where the file's
/// quantisation is not the trainer's.
pub fn dequantise(q: &Quantised) -> Result<Network, String> {
    for (field, file, ours) in [
        ("qa", q.qa, QA as u32),
        ("qb", q.qb, QB as u32),
        ("scale", q.scale, SCALE as u32),
    ] {
        if file != ours {
            return Err(format!("{field} is {file}, the trainer's is {ours}"));
        }
    }
    let mut net = Network::zeros(q.kings, q.hidden, q.buckets);
    let h = q.hidden;
    let (fac, bias_at, out_at, out_b_at) = (
        net.factor_at(),
        net.ft_bias_at(),
        net.out_weights_at(),
        net.out_bias_at(),
    );
    let (qa, keyed) = (QA as f32, net.factorised());
    let p = &mut net.params;
    for (dst, &w) in p[..fac].iter_mut().zip(&q.ft_weights) {
        *dst = f32::from(w) / qa;
    }
    if keyed {
        let copies = fac / (INPUTS * h);
        for i in 0..INPUTS * h {
            let mean = (0..copies).map(|c| p[c * INPUTS * h + i]).sum::<f32>() / copies as f32;
            p[fac + i] = mean;
            for c in 0..copies {
                p[c * INPUTS * h + i] -= mean;
            }
        }
    }
    for (dst, &w) in p[bias_at..out_at].iter_mut().zip(&q.ft_bias) {
        *dst = f32::from(w) / qa;
    }
    for (dst, &w) in p[out_at..out_b_at].iter_mut().zip(&q.out_weights) {
        *dst = f32::from(w) / QB as f32;
    }
    for (dst, &b) in p[out_b_at..].iter_mut().zip(&q.out_bias) {
        *dst = (f64::from(b) / f64::from(QA * QB)) as f32;
    }
    Ok(net)
}

/// The file bytes of a network (the engine's writer).
pub fn to_bytes(net: &Network) -> Vec<u8> {
    format::write(&quantise(net))
}

/// A quantised network as the engine holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantNet {
    /// Neurons per perspective.
    pub hidden: usize,
    /// Output buckets.
    pub buckets: usize,
    /// The header's payload hash.
    pub hash: u64,
    /// `[inputs][H]` (768 per king bucket).
    pub ft_weights: Vec<i16>,
    /// `[H]`.
    pub ft_bias: Vec<i16>,
    /// `[B][2H]`.
    pub out_weights: Vec<i16>,
    /// `[B]`.
    pub out_bias: Vec<i32>,
}

impl QuantNet {
    /// Parses and checks a file with the engine's reader (every header field, the size, the
    /// hash).
    pub fn parse(bytes: &[u8]) -> Result<QuantNet, NetworkError> {
        let net = EngineNetwork::from_bytes(bytes, "the trained network")?;
        let q = net.to_quantised();
        Ok(QuantNet {
            hidden: q.hidden,
            buckets: q.buckets,
            hash: net.hash(),
            ft_weights: q.ft_weights,
            ft_bias: q.ft_bias,
            out_weights: q.out_weights,
            out_bias: q.out_bias,
        })
    }

    /// The evaluation in centipawns (side to move's view), computed as the engine does:
    /// i16 accumulators, `v = clamp(acc, 0, 255)`, `Σ (v·w)·v` in i32, then
    /// `(sum / 255 + bias) · 400 / (255 · 64)` (this last line in i64: the product with 400
    /// leaves i32 for outputs beyond about ±13 000 cp).
    pub fn eval(&self, inputs: &Inputs) -> i32 {
        let h = self.hidden;
        let b = bucket(inputs.us.len(), self.buckets);
        let w = &self.out_weights[b * 2 * h..][..2 * h];
        let mut sum: i32 = 0;
        for (features, w) in [(&inputs.us, &w[..h]), (&inputs.them, &w[h..])] {
            let mut acc = self.ft_bias.clone();
            for &f in features {
                let row = &self.ft_weights[usize::from(f) * h..][..h];
                for (a, &r) in acc.iter_mut().zip(row) {
                    *a = a.wrapping_add(r);
                }
            }
            for (&a, &w) in acc.iter().zip(w) {
                let v = a.clamp(0, QA as i16);
                sum = sum.wrapping_add(i32::from(v.wrapping_mul(w)) * i32::from(v));
            }
        }
        let out = i64::from(sum / QA) + i64::from(self.out_bias[b]);
        (out * SCALE as i64 / i64::from(QA * QB)) as i32
    }
}

/// Mean and largest |quantised − float · 400| in centipawns over the samples `which`: every
/// network the trainer writes is checked this way on its validation positions.
pub fn quantisation_error(net: &Network, data: &Dataset, which: &[u32]) -> (f64, f64) {
    let q = QuantNet::parse(&to_bytes(net)).expect("a written network parses back");
    let mut scratch = Scratch::new(net.hidden);
    let (mut worst, mut sum) = (0.0f64, 0.0);
    for &i in which {
        let i = i as usize;
        let inputs = data.inputs(i, net.kings);
        let b = bucket(data.pieces(i), net.buckets);
        let float = f64::from(net.forward(&inputs, b, &mut scratch)) * f64::from(SCALE);
        let err = (f64::from(q.eval(&inputs)) - float).abs();
        worst = worst.max(err);
        sum += err;
    }
    (sum / which.len().max(1) as f64, worst)
}
