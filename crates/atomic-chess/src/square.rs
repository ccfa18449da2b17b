//! Squares of the board, indexed `rank * 8 + file` so that A1 = 0 and H8 = 63.

use std::fmt;
use std::str::FromStr;

use crate::bitboard::Bitboard;

/// A square of the board. The discriminant is the bit index used by [`Bitboard`].
///
/// The variants are the squares' names (file letter, rank digit), which say all there is.
#[allow(missing_docs)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
#[repr(u8)]
#[rustfmt::skip]
pub enum Square {
    A1 = 0,
    B1,
    C1,
    D1,
    E1,
    F1,
    G1,
    H1,
    A2,
    B2,
    C2,
    D2,
    E2,
    F2,
    G2,
    H2,
    A3,
    B3,
    C3,
    D3,
    E3,
    F3,
    G3,
    H3,
    A4,
    B4,
    C4,
    D4,
    E4,
    F4,
    G4,
    H4,
    A5,
    B5,
    C5,
    D5,
    E5,
    F5,
    G5,
    H5,
    A6,
    B6,
    C6,
    D6,
    E6,
    F6,
    G6,
    H6,
    A7,
    B7,
    C7,
    D7,
    E7,
    F7,
    G7,
    H7,
    A8,
    B8,
    C8,
    D8,
    E8,
    F8,
    G8,
    H8,
}

impl Square {
    /// All 64 squares in index order (A1, B1, ..., H8).
    #[rustfmt::skip]
    pub const ALL: [Square; 64] = [Square::A1, Square::B1, Square::C1, Square::D1, Square::E1, Square::F1, Square::G1, Square::H1, Square::A2, Square::B2, Square::C2, Square::D2, Square::E2, Square::F2, Square::G2, Square::H2, Square::A3, Square::B3, Square::C3, Square::D3, Square::E3, Square::F3, Square::G3, Square::H3, Square::A4, Square::B4, Square::C4, Square::D4, Square::E4, Square::F4, Square::G4, Square::H4, Square::A5, Square::B5, Square::C5, Square::D5, Square::E5, Square::F5, Square::G5, Square::H5, Square::A6, Square::B6, Square::C6, Square::D6, Square::E6, Square::F6, Square::G6, Square::H6, Square::A7, Square::B7, Square::C7, Square::D7, Square::E7, Square::F7, Square::G7, Square::H7, Square::A8, Square::B8, Square::C8, Square::D8, Square::E8, Square::F8, Square::G8, Square::H8];

    /// The square with this index. Out-of-range indices are a caller bug: they
    /// panic in debug builds and are masked to `index & 63` in release builds.
    pub const fn new(index: u32) -> Square {
        debug_assert!(index < 64, "square index out of range");
        Square::ALL[(index & 63) as usize]
    }

    /// The square with this index, or `None` if `index >= 64`.
    pub fn from_index(index: u32) -> Option<Square> {
        if index < 64 {
            Some(Square::ALL[index as usize])
        } else {
            None
        }
    }

    /// The square on `file` (0 = a) and `rank` (0 = rank 1), each in `0..8`.
    pub const fn from_coords(file: u8, rank: u8) -> Square {
        debug_assert!(file < 8 && rank < 8, "square coordinates out of range");
        Square::ALL[(((rank & 7) << 3) | (file & 7)) as usize]
    }

    /// The bit index, `rank * 8 + file`.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The file, 0 (a) to 7 (h).
    pub const fn file(self) -> u8 {
        self as u8 & 7
    }

    /// The rank, 0 (rank 1) to 7 (rank 8).
    pub const fn rank(self) -> u8 {
        self as u8 >> 3
    }

    /// The same file on the mirrored rank (a1 <-> a8).
    pub const fn flip_vertical(self) -> Square {
        Square::ALL[(self as usize) ^ 56]
    }

    /// The bitboard holding only this square.
    pub const fn bitboard(self) -> Bitboard {
        Bitboard(1 << self as u8)
    }

    /// Whether this is a light square (a1 is dark, h1 is light).
    pub const fn is_light(self) -> bool {
        (self.file() + self.rank()) % 2 == 1
    }

    /// The square `delta` indices away, if it exists (no file wrap check).
    pub(crate) const fn offset(self, delta: i32) -> Option<Square> {
        let i = self as i32 + delta;
        if i >= 0 && i < 64 {
            Some(Square::ALL[i as usize])
        } else {
            None
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file()) as char,
            (b'1' + self.rank()) as char
        )
    }
}

/// A string that is not a square name like `e4`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseSquareError {
    /// The text that failed to parse.
    pub input: String,
}

impl fmt::Display for ParseSquareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid square {:?}: expected a file a-h and a rank 1-8",
            self.input
        )
    }
}

impl std::error::Error for ParseSquareError {}

impl Square {
    /// Parses two ASCII bytes like `b"e4"`.
    pub(crate) fn from_ascii(s: &[u8]) -> Option<Square> {
        match s {
            [f @ b'a'..=b'h', r @ b'1'..=b'8'] => Some(Square::from_coords(f - b'a', r - b'1')),
            _ => None,
        }
    }
}

impl FromStr for Square {
    type Err = ParseSquareError;

    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        Square::from_ascii(s.as_bytes()).ok_or_else(|| ParseSquareError {
            input: s.to_owned(),
        })
    }
}
