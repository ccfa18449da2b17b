//! Zobrist keys, generated at compile time by SplitMix64 from a fixed seed.

use crate::color::Color;
use crate::role::Role;
use crate::square::Square;

const fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

struct Keys {
    pieces: [[[u64; 64]; 6]; 2],
    castling: [u64; 64],
    ep_file: [u64; 8],
    black_to_move: u64,
}

const fn keys() -> Keys {
    let mut state = 0x4174_6f6d_6963_2121; // "Atomic!!"
    let mut k = Keys {
        pieces: [[[0; 64]; 6]; 2],
        castling: [0; 64],
        ep_file: [0; 8],
        black_to_move: 0,
    };
    let mut c = 0;
    while c < 2 {
        let mut r = 0;
        while r < 6 {
            let mut s = 0;
            while s < 64 {
                k.pieces[c][r][s] = splitmix(&mut state);
                s += 1;
            }
            r += 1;
        }
        c += 1;
    }
    let mut s = 0;
    while s < 64 {
        k.castling[s] = splitmix(&mut state);
        s += 1;
    }
    let mut f = 0;
    while f < 8 {
        k.ep_file[f] = splitmix(&mut state);
        f += 1;
    }
    k.black_to_move = splitmix(&mut state);
    k
}

static KEYS: Keys = keys();

/// The key of a piece on a square.
#[inline]
pub(crate) fn piece(color: Color, role: Role, sq: Square) -> u64 {
    KEYS.pieces[color.index()][role.index()][sq.index()]
}

/// The key of a castling right, identified by its rook's square.
#[inline]
pub(crate) fn castling(rook: Square) -> u64 {
    KEYS.castling[rook.index()]
}

/// The key of a (legal) en-passant square's file.
#[inline]
pub(crate) fn ep_file(sq: Square) -> u64 {
    KEYS.ep_file[sq.file() as usize]
}

/// Mixed in when Black is to move.
#[inline]
pub(crate) fn black_to_move() -> u64 {
    KEYS.black_to_move
}
