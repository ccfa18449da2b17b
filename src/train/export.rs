//! The quantised network file (format version 1) and the engine's integer forward pass.
//!
//! Layout (little-endian): `b"ATOMNNUE"`, then u32 version = 1, inputs = 768, hidden H,
//! buckets B, qa = 255, qb = 64, scale = 400, reserved = 0, then the u64 FNV-1a hash of the
//! payload, then the payload: `ft_weights i16 [768][H]`, `ft_bias i16 [H]`,
//! `out_weights i16 [B][2H]` (side to move first), `out_bias i32 [B]`.

use std::fmt;

use super::data::{Dataset, INPUTS, Inputs, bucket};
use super::model::Scratch;
use super::model::{Network, SCALE};

/// The first eight bytes of a network file.
pub const MAGIC: &[u8; 8] = b"ATOMNNUE";
/// The format version written.
pub const VERSION: u32 = 1;
/// Quantisation of the transformer (weights, bias, activations): 1.0 becomes 255.
pub const QA: i32 = 255;
/// Quantisation of the output weights: 1.0 becomes 64.
pub const QB: i32 = 64;
/// Bytes before the payload.
pub const HEADER_BYTES: usize = 48;

/// FNV-1a, 64 bits.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Rounds to the nearest integer and saturates at i16 (clipping keeps weights far inside).
fn q16(x: f32, scale: i32) -> i16 {
    (x * scale as f32)
        .round()
        .clamp(f32::from(i16::MIN), f32::from(i16::MAX)) as i16
}

/// The file bytes of a network.
pub fn to_bytes(net: &Network) -> Vec<u8> {
    let (h, b) = (net.hidden, net.buckets);
    let mut payload = Vec::with_capacity(2 * (INPUTS * h + h + 2 * b * h) + 4 * b);
    let p = &net.params;
    for &w in &p[..net.out_weights_at()] {
        payload.extend_from_slice(&q16(w, QA).to_le_bytes());
    }
    for &w in &p[net.out_weights_at()..net.out_bias_at()] {
        payload.extend_from_slice(&q16(w, QB).to_le_bytes());
    }
    for &w in &p[net.out_bias_at()..] {
        let q = (f64::from(w) * f64::from(QA * QB))
            .round()
            .clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32;
        payload.extend_from_slice(&q.to_le_bytes());
    }
    let mut out = Vec::with_capacity(HEADER_BYTES + payload.len());
    out.extend_from_slice(MAGIC);
    for word in [
        VERSION,
        INPUTS as u32,
        h as u32,
        b as u32,
        QA as u32,
        QB as u32,
        SCALE as u32,
        0,
    ] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// What is wrong with a network file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatError {
    /// Shorter than the header.
    ShortHeader,
    /// Not starting with [`MAGIC`].
    Magic,
    /// A header field with a value this code does not read: its name and value.
    Field(&'static str, u64),
    /// The payload is not the size the header implies: expected, found.
    Size(usize, usize),
    /// The payload's hash differs from the header's: header, computed.
    Hash(u64, u64),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::ShortHeader => write!(f, "shorter than the {HEADER_BYTES}-byte header"),
            FormatError::Magic => write!(f, "magic is not \"ATOMNNUE\""),
            FormatError::Field(name, v) => write!(f, "header field {name} = {v} is not supported"),
            FormatError::Size(want, got) => {
                write!(f, "payload is {got} bytes, the header implies {want}")
            }
            FormatError::Hash(head, got) => {
                write!(
                    f,
                    "payload hash {got:#018x} differs from the header's {head:#018x}"
                )
            }
        }
    }
}

impl std::error::Error for FormatError {}

/// A quantised network as the engine holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantNet {
    /// Neurons per perspective.
    pub hidden: usize,
    /// Output buckets.
    pub buckets: usize,
    /// The header's payload hash.
    pub hash: u64,
    /// `[768][H]`.
    pub ft_weights: Vec<i16>,
    /// `[H]`.
    pub ft_bias: Vec<i16>,
    /// `[B][2H]`.
    pub out_weights: Vec<i16>,
    /// `[B]`.
    pub out_bias: Vec<i32>,
}

impl QuantNet {
    /// Parses and checks a file: every header field, the payload size and the hash.
    pub fn parse(bytes: &[u8]) -> Result<QuantNet, FormatError> {
        let head = bytes.get(..HEADER_BYTES).ok_or(FormatError::ShortHeader)?;
        if &head[..8] != MAGIC {
            return Err(FormatError::Magic);
        }
        let word =
            |i: usize| u32::from_le_bytes(head[8 + 4 * i..12 + 4 * i].try_into().expect("4"));
        let expect = |name: &'static str, i: usize, ok: &dyn Fn(u32) -> bool| {
            let v = word(i);
            if ok(v) {
                Ok(v as usize)
            } else {
                Err(FormatError::Field(name, u64::from(v)))
            }
        };
        expect("version", 0, &|v| v == VERSION)?;
        expect("inputs", 1, &|v| v == INPUTS as u32)?;
        let hidden = expect("hidden", 2, &|v| {
            v.is_multiple_of(16) && (16..=2048).contains(&v)
        })?;
        let buckets = expect("buckets", 3, &|v| (1..=16).contains(&v))?;
        expect("qa", 4, &|v| v == QA as u32)?;
        expect("qb", 5, &|v| v == QB as u32)?;
        expect("scale", 6, &|v| v == SCALE as u32)?;
        expect("reserved", 7, &|v| v == 0)?;
        let hash = u64::from_le_bytes(head[40..48].try_into().expect("8"));
        let payload = &bytes[HEADER_BYTES..];
        let want = 2 * (INPUTS * hidden + hidden + 2 * buckets * hidden) + 4 * buckets;
        if payload.len() != want {
            return Err(FormatError::Size(want, payload.len()));
        }
        let computed = fnv1a(payload);
        if computed != hash {
            return Err(FormatError::Hash(hash, computed));
        }
        let mut at = 0;
        let mut i16s = |n: usize| -> Vec<i16> {
            let v = payload[at..at + 2 * n]
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            at += 2 * n;
            v
        };
        let ft_weights = i16s(INPUTS * hidden);
        let ft_bias = i16s(hidden);
        let out_weights = i16s(2 * buckets * hidden);
        let out_bias = payload[payload.len() - 4 * buckets..]
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(QuantNet {
            hidden,
            buckets,
            hash,
            ft_weights,
            ft_bias,
            out_weights,
            out_bias,
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
        let inputs = data.inputs(i);
        let b = bucket(data.pieces(i), net.buckets);
        let float = f64::from(net.forward(&inputs, b, &mut scratch)) * f64::from(SCALE);
        let err = (f64::from(q.eval(&inputs)) - float).abs();
        worst = worst.max(err);
        sum += err;
    }
    (sum / which.len().max(1) as f64, worst)
}
