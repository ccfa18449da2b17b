//! The network: its quantised weights, laid out in 32-byte lanes for the SIMD kernels, and
//! the output layer (buckets by piece count, SCReLU, the centipawn scale).

use std::fmt;

use atomic_chess::{Board, Color};

use super::accumulator::Accumulator;
use super::features::{KingKey, KingLayout};
use super::format::{self, MAX_BUCKETS, MAX_HIDDEN, NetworkError};
use super::simd::{Kernel, LANE, Lane};

/// Inputs of one perspective of a plain network: colour (ours, theirs) × role × square (a
/// king-keyed network has this many per king bucket: [`KingLayout::inputs`]).
pub const INPUTS: usize = 768;

/// A network's integers as the file holds them, in plain vectors: what the trainer fills and
/// [`Network::from_quantised`] checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantised {
    /// How the inputs are keyed by the perspective's king.
    pub kings: KingLayout,
    /// Accumulator size per perspective (a multiple of 16, 16..=2048).
    pub hidden: usize,
    /// Output buckets by piece count (1..=16).
    pub buckets: usize,
    /// Feature-transformer quantisation (the activation's 1.0).
    pub qa: u32,
    /// Output-layer quantisation.
    pub qb: u32,
    /// Centipawns per unit of the float model's output.
    pub scale: u32,
    /// `[inputs][hidden]`, feature-major (`inputs` = [`KingLayout::inputs`]).
    pub ft_weights: Vec<i16>,
    /// `[hidden]`.
    pub ft_bias: Vec<i16>,
    /// `[buckets][2 * hidden]`: the side to move's half, then the other side's.
    pub out_weights: Vec<i16>,
    /// `[buckets]`.
    pub out_bias: Vec<i32>,
}

/// A loaded network, read-only and shared by every search thread (behind an `Arc`).
pub struct Network {
    kings: KingLayout,
    hidden: usize,
    buckets: usize,
    qa: u32,
    qb: u32,
    scale: u32,
    /// FNV-1a of the payload (as the header holds it).
    hash: u64,
    /// `[inputs][hidden / 16]` lanes.
    ft_weights: Box<[Lane]>,
    /// `[hidden / 16]` lanes.
    ft_bias: Box<[Lane]>,
    /// `[buckets][2 * hidden / 16]` lanes.
    out_weights: Box<[Lane]>,
    out_bias: Box<[i32]>,
    /// The kernels this machine runs (chosen when the network is made).
    kernel: Kernel,
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("kings", &self.kings)
            .field("hidden", &self.hidden)
            .field("buckets", &self.buckets)
            .field("hash", &format_args!("{:#018x}", self.hash))
            .field("simd", &self.kernel.name())
            .finish()
    }
}

fn lanes(values: &[i16]) -> Box<[Lane]> {
    values
        .chunks_exact(LANE)
        .map(|c| Lane(c.try_into().expect("16 values")))
        .collect()
}

impl Network {
    /// Checks `q` (sizes, ranges) and lays it out for the kernels.
    pub fn from_quantised(q: Quantised) -> Result<Network, NetworkError> {
        let err = |field: &'static str, problem: String| NetworkError {
            file: "network".into(),
            field,
            problem,
        };
        if !(16..=MAX_HIDDEN).contains(&q.hidden) || !q.hidden.is_multiple_of(LANE) {
            return Err(err(
                "hidden",
                format!("{} is not a multiple of 16 in 16..={MAX_HIDDEN}", q.hidden),
            ));
        }
        if !(1..=MAX_BUCKETS).contains(&q.buckets) {
            return Err(err(
                "buckets",
                format!("{} is outside 1..={MAX_BUCKETS}", q.buckets),
            ));
        }
        for (field, value) in [("qa", q.qa), ("qb", q.qb), ("scale", q.scale)] {
            if value == 0 {
                return Err(err(field, "must not be 0".into()));
            }
        }
        if q.qa > i16::MAX as u32 {
            return Err(err("qa", format!("{} does not fit an i16", q.qa)));
        }
        for (field, len, want) in [
            (
                "ft_weights",
                q.ft_weights.len(),
                q.kings.inputs() * q.hidden,
            ),
            ("ft_bias", q.ft_bias.len(), q.hidden),
            ("out_weights", q.out_weights.len(), q.buckets * 2 * q.hidden),
            ("out_bias", q.out_bias.len(), q.buckets),
        ] {
            if len != want {
                return Err(err(field, format!("{len} values, expected {want}")));
            }
        }
        // The kernels compute clip(x)·w in 16 bits: |w|·qa must fit.
        let bound = i32::from(i16::MAX) / q.qa as i32;
        if let Some((i, w)) = q
            .out_weights
            .iter()
            .enumerate()
            .find(|(_, w)| i32::from(**w).abs() > bound)
        {
            return Err(err(
                "out_weights",
                format!(
                    "weight {i} is {w}, beyond ±{bound} (times qa {} it overflows i16)",
                    q.qa
                ),
            ));
        }
        let bytes = format::write(&q);
        let hash = format::fnv1a(&bytes[format::HEADER_BYTES..]);
        Ok(Network {
            kings: q.kings,
            hidden: q.hidden,
            buckets: q.buckets,
            qa: q.qa,
            qb: q.qb,
            scale: q.scale,
            hash,
            ft_weights: lanes(&q.ft_weights),
            ft_bias: lanes(&q.ft_bias),
            out_weights: lanes(&q.out_weights),
            out_bias: q.out_bias.into_boxed_slice(),
            kernel: Kernel::detect(),
        })
    }

    /// Parses a network file's bytes; `name` names it in errors. A network embedded in the
    /// binary is one line: `Network::from_bytes(include_bytes!("…"), "embedded network")`.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Network, NetworkError> {
        format::parse(bytes, name)
    }

    /// Reads and parses the network file at `path`.
    pub fn load(path: &std::path::Path) -> Result<Network, NetworkError> {
        format::load(path)
    }

    /// The file bytes of this network (format version 1, [`super::format`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        format::write(&self.to_quantised())
    }

    /// The network's integers in plain vectors.
    pub fn to_quantised(&self) -> Quantised {
        let flat = |l: &[Lane]| l.iter().flat_map(|x| x.0).collect::<Vec<i16>>();
        Quantised {
            kings: self.kings,
            hidden: self.hidden,
            buckets: self.buckets,
            qa: self.qa,
            qb: self.qb,
            scale: self.scale,
            ft_weights: flat(&self.ft_weights),
            ft_bias: flat(&self.ft_bias),
            out_weights: flat(&self.out_weights),
            out_bias: self.out_bias.to_vec(),
        }
    }

    /// A plain network of random weights from `seed` (SplitMix64), with the usual quantisation
    /// (255, 64, 400): feature weights within ±64, output weights within ±127. Deterministic;
    /// for tests and for measuring the speed of a network size before one is trained.
    pub fn random(hidden: usize, buckets: usize, seed: u64) -> Network {
        Network::random_keyed(KingLayout::Plain, hidden, buckets, seed)
    }

    /// [`Network::random`] with inputs keyed by the king as `kings` says.
    pub fn random_keyed(kings: KingLayout, hidden: usize, buckets: usize, seed: u64) -> Network {
        let mut state = seed;
        let mut next = |range: i32| -> i32 {
            state = state.wrapping_add(crate::search::GOLDEN_GAMMA);
            let r = crate::search::mix64(state);
            (r % (2 * range as u64 + 1)) as i32 - range
        };
        let ft_weights = (0..kings.inputs() * hidden)
            .map(|_| next(64) as i16)
            .collect();
        let ft_bias = (0..hidden).map(|_| next(64) as i16).collect();
        let out_weights = (0..buckets * 2 * hidden)
            .map(|_| next(127) as i16)
            .collect();
        let out_bias = (0..buckets).map(|_| next(20_000)).collect();
        Network::from_quantised(Quantised {
            kings,
            hidden,
            buckets,
            qa: 255,
            qb: 64,
            scale: 400,
            ft_weights,
            ft_bias,
            out_weights,
            out_bias,
        })
        .expect("a valid random network")
    }

    /// The same network running `kernel` (the scalar kernels where this machine lacks it):
    /// to compare the kernels' results.
    pub fn with_kernel(mut self, kernel: Kernel) -> Network {
        self.kernel = kernel.or_supported();
        self
    }

    /// How the inputs are keyed by the perspective's king.
    pub fn kings(&self) -> KingLayout {
        self.kings
    }

    /// The king key of `perspective` on `board` ([`KingLayout::key_on`]).
    #[inline]
    pub fn king_key(&self, perspective: Color, board: &Board) -> KingKey {
        self.kings.key_on(perspective, board)
    }

    /// Accumulator size per perspective.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Output buckets.
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// The payload hash (FNV-1a 64), as the header holds it.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The kernels in use.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Lanes of one perspective's accumulator.
    pub(super) fn lanes(&self) -> usize {
        self.hidden / LANE
    }

    /// The feature transformer: `[inputs][lanes]`, input `i`'s row at `i · lanes`.
    #[inline]
    pub(super) fn features(&self) -> &[Lane] {
        &self.ft_weights
    }

    /// The feature transformer's bias.
    pub(super) fn bias(&self) -> &[Lane] {
        &self.ft_bias
    }

    /// The output bucket of a position with `pieces` units on the board.
    #[inline]
    pub fn bucket(&self, pieces: u32) -> usize {
        ((pieces.max(2) as usize - 2) * self.buckets / 31).min(self.buckets - 1)
    }

    /// The evaluation (centipawns, for `stm`) of a position with `pieces` units whose
    /// accumulator is `acc`: `(Σ clip(us)²·w + Σ clip(them)²·w) / qa + bias`, times `scale /
    /// (qa·qb)`. The sum is in `i32` (wrapping, as the SIMD registers do; a trained network
    /// stays far from it), the rest in `i64`, each division truncating.
    #[inline]
    pub fn evaluate(&self, acc: &Accumulator, stm: Color, pieces: u32) -> i32 {
        let bucket = self.bucket(pieces);
        let n = 2 * self.lanes();
        let weights = &self.out_weights[bucket * n..(bucket + 1) * n];
        let sum = self.kernel.output(
            acc.side(stm),
            acc.side(stm.other()),
            weights,
            self.qa as i16,
        );
        let qa = i64::from(self.qa);
        let out = (i64::from(sum) / qa + i64::from(self.out_bias[bucket])) * i64::from(self.scale)
            / (qa * i64::from(self.qb));
        out.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
    }
}
