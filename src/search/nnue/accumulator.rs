//! The accumulators: each perspective's feature-transformer output (bias plus the weight rows
//! of its lit inputs), made from scratch (a refresh) or from another board's accumulator by the
//! pieces that differ (an update).

use atomic_chess::{Board, Color};

use super::features::{self, KingKey, Pieces};
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
            self.refresh_side(net, perspective, board, scratch);
        }
    }

    /// Makes `perspective`'s side the accumulator of `board`, whose pieces are `pieces`.
    fn refresh_side(&mut self, net: &Network, perspective: Color, board: &Board, pieces: &Pieces) {
        let mut rows = Rows::new();
        rows.extend(perspective, net.king_key(perspective, board), pieces);
        net.kernel().update(
            &mut self.sides[perspective.index()],
            net.bias(),
            net.features(),
            rows.as_slice(),
            &[],
        );
    }

    /// Makes this the accumulator of `to`, a board that has `added` and lacks `removed`
    /// compared with `from_board`, whose accumulator is `from`: one addition per added piece
    /// and one subtraction per removed piece, on both perspectives. A perspective whose king
    /// key differs between the boards (its king moved to another bucket or across the d/e
    /// line: every input changed) is refreshed instead, its pieces listed in `scratch`.
    #[allow(clippy::too_many_arguments)]
    pub fn update_from(
        &mut self,
        net: &Network,
        from: &Accumulator,
        from_board: &Board,
        to: &Board,
        removed: &Pieces,
        added: &Pieces,
        scratch: &mut Pieces,
    ) {
        let mut listed = false;
        for perspective in Color::ALL {
            let key = net.king_key(perspective, to);
            if key != net.king_key(perspective, from_board) {
                if !listed {
                    features::pieces(to, scratch);
                    listed = true;
                }
                self.refresh_side(net, perspective, to, scratch);
                continue;
            }
            let (mut adds, mut subs) = (Rows::new(), Rows::new());
            adds.extend(perspective, key, added);
            subs.extend(perspective, key, removed);
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
    fn extend(&mut self, perspective: Color, key: KingKey, pieces: &Pieces) {
        for &(c, r, s) in pieces {
            // A `Pieces` holds at most 64 and every input is below 8 · 768.
            self.rows[self.len] = features::index(perspective, key, c, r, s) as u16;
            self.len += 1;
        }
    }

    #[inline]
    fn as_slice(&self) -> &[u16] {
        &self.rows[..self.len]
    }
}
