//! The accumulators: each perspective's feature-transformer output (bias plus the weight rows
//! of its lit inputs), made from scratch (a refresh) or from another board's accumulator by the
//! pieces that differ (an update).

use atomic_chess::{Board, Color};

use super::features::{self, Pieces};
use super::network::Network;
use super::simd::Lane;

/// Both perspectives' accumulators of one board, indexed by colour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accumulator {
    sides: [Box<[Lane]>; 2],
}

impl Accumulator {
    /// An accumulator of `net`'s size (zero: not yet of any board).
    pub fn new(net: &Network) -> Accumulator {
        let zero = || vec![Lane::default(); net.lanes()].into_boxed_slice();
        Accumulator {
            sides: [zero(), zero()],
        }
    }

    /// The accumulator of `perspective`.
    #[inline]
    pub fn side(&self, perspective: Color) -> &[Lane] {
        &self.sides[perspective.index()]
    }

    /// The values of `perspective`'s accumulator.
    pub fn values(&self, perspective: Color) -> impl Iterator<Item = i16> + '_ {
        self.side(perspective).iter().flat_map(|l| l.0)
    }

    /// Makes this the accumulator of `board` from scratch. `scratch` holds the pieces.
    pub fn refresh(&mut self, net: &Network, board: &Board, scratch: &mut Pieces) {
        features::pieces(board, scratch);
        for perspective in Color::ALL {
            let mut rows = Rows::new();
            rows.extend(perspective, scratch);
            net.kernel().update(
                &mut self.sides[perspective.index()],
                net.bias(),
                net.features(),
                rows.as_slice(),
                &[],
            );
        }
    }

    /// Makes this the accumulator of a board that has `added` and lacks `removed` compared
    /// with the board of `from`: one addition per added piece and one subtraction per removed
    /// piece, on both perspectives.
    pub fn update_from(
        &mut self,
        net: &Network,
        from: &Accumulator,
        removed: &Pieces,
        added: &Pieces,
    ) {
        for perspective in Color::ALL {
            let (mut adds, mut subs) = (Rows::new(), Rows::new());
            adds.extend(perspective, added);
            subs.extend(perspective, removed);
            net.kernel().update(
                &mut self.sides[perspective.index()],
                from.side(perspective),
                net.features(),
                adds.as_slice(),
                subs.as_slice(),
            );
        }
    }
}

/// The inputs (feature-transformer rows) of some pieces from one perspective: a plain array
/// on the stack, filled in place (at most 64 pieces, one per square).
struct Rows {
    len: usize,
    rows: [u16; 64],
}

impl Rows {
    #[inline]
    fn new() -> Rows {
        Rows {
            len: 0,
            rows: [0; 64],
        }
    }

    #[inline]
    fn extend(&mut self, perspective: Color, pieces: &Pieces) {
        for &(c, r, s) in pieces {
            // A `Pieces` holds at most 64 and every input is below 768.
            self.rows[self.len] = features::index(perspective, c, r, s) as u16;
            self.len += 1;
        }
    }

    #[inline]
    fn as_slice(&self) -> &[u16] {
        &self.rows[..self.len]
    }
}
