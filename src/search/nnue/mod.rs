//! The learned evaluation (NNUE, issue 30): a network file's reader and writer, the quantised
//! network, its accumulators updated incrementally along the search's line, and the SIMD
//! kernels that run it.
//!
//! The architecture: 768 inputs per perspective (colour relative to the perspective × role ×
//! square, the board seen from that side), a feature transformer to `H` values per perspective
//! (`i16`), SCReLU (`clamp(x, 0, qa)²`), and one output per bucket of piece count over both
//! perspectives' activations (the side to move's first). The trainer's float model is the same
//! with `clamp(x, 0, 1)²`.
//!
//! Why "efficiently updatable": a move changes a few inputs, so a child's accumulator is its
//! parent's plus a few weight rows added and subtracted, far cheaper than the sum over every
//! piece. In atomic a capture removes up to nine units; the update works from the two boards'
//! difference, so it needs no knowledge of the move (see [`stack`]).
//!
//! Layout: [`embedded`] (the default network, built into the binary), [`mod@format`] (the file format, reader, writer, errors), [`simd`] (the kernels, scalar
//! and AVX2), [`network`] (the weights and the output layer), [`features`] (inputs and board
//! differences), [`accumulator`] (refresh and update), [`stack`] (a thread's lazy per-ply
//! stack).

pub mod accumulator;
pub mod embedded;
pub mod features;
pub mod format;
pub mod network;
pub mod simd;
pub mod stack;

pub use format::NetworkError;
pub use network::{Network, Quantised};
pub use simd::Kernel;
pub use stack::Stack;

#[cfg(test)]
mod tests;
