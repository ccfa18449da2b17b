//! The two sides.

use std::ops::Not;

/// A side: White moves first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Color {
    /// The side that starts on ranks 1 and 2.
    White,
    /// The side that starts on ranks 7 and 8.
    Black,
}

impl Color {
    /// Both colours, White first (matches [`Color::index`]).
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// The opponent.
    pub const fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for White, 1 for Black: the index into per-colour arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The FEN side-to-move letter, `'w'` or `'b'`.
    pub fn char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }

    /// The colour for a FEN side-to-move letter.
    pub fn from_char(c: char) -> Option<Color> {
        match c {
            'w' => Some(Color::White),
            'b' => Some(Color::Black),
            _ => None,
        }
    }

    /// Picks `white` or `black` by colour.
    pub const fn fold<T: Copy>(self, white: T, black: T) -> T {
        match self {
            Color::White => white,
            Color::Black => black,
        }
    }
}

impl Not for Color {
    type Output = Color;

    fn not(self) -> Color {
        self.other()
    }
}
