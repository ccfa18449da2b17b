//! The vchess "Balanced" start (`atomic-bot balanced`, `atomic-bot demo --balanced`).
//!
//! In the Balanced mode of the vchess atomic rules, White's first "move" removes any one of the
//! 16 pawns (of either colour) from its starting square; then Black moves first and the normal
//! atomic rules apply. Atomic's first move is worth a lot (White's attacks on f7 come fast), and
//! the removal hands it to Black in exchange for a pawn of White's choosing. As a position that
//! is the standard setup minus that pawn, Black to move, castling rights `KQkq` (the removal
//! moves no king or rook), no en-passant square (it is not a double push), halfmove clock 0,
//! fullmove number 1 (Black's reply still belongs to move 1): the 16 positions of [`Removal`].
//!
//! lichess offers no custom start in atomic, so these starts live offline: [`ranking`] searches
//! all 16 with the default engine and ranks them for White (who chooses), the demo plays a game
//! from one of them, and the arena reads them as openings (`data/balanced-starts.txt`).
//!
//! This module sits at the top of the layers, beside `arena`: it uses `search` and, for the
//! demo, `lichess::app`; nothing imports it but `main`.

pub mod cli;
pub mod ranking;

use std::fmt;
use std::str::FromStr;

use atomic_chess::{Color, Position};

/// One of the 16 pawns White may remove: its colour and its file (`0` = a … `7` = h). The
/// square follows: rank 2 for White's pawns, rank 7 for Black's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Removal {
    /// Whose pawn.
    pub color: Color,
    /// Its file, 0 (a) to 7 (h).
    pub file: u8,
}

impl Removal {
    /// The 16 removals: White's pawns a2…h2, then Black's a7…h7.
    pub fn all() -> [Removal; 16] {
        std::array::from_fn(|i| Removal {
            color: if i < 8 { Color::White } else { Color::Black },
            file: (i % 8) as u8,
        })
    }

    /// The pawn's square, e.g. `e7`.
    pub fn square(self) -> String {
        let rank = match self.color {
            Color::White => '2',
            Color::Black => '7',
        };
        format!("{}{rank}", char::from(b'a' + self.file))
    }

    /// The starting position with this pawn removed, Black to move, as a FEN.
    pub fn fen(self) -> String {
        // The pawn rank with one gap: one digit between two runs of pawns never needs merging.
        let rank = |pawn: char| {
            let before: String = std::iter::repeat_n(pawn, usize::from(self.file)).collect();
            let after: String = std::iter::repeat_n(pawn, 7 - usize::from(self.file)).collect();
            format!("{before}1{after}")
        };
        let (black, white) = match self.color {
            Color::White => ("pppppppp".to_owned(), rank('P')),
            Color::Black => (rank('p'), "PPPPPPPP".to_owned()),
        };
        format!("rnbqkbnr/{black}/8/8/8/8/{white}/RNBQKBNR b KQkq - 0 1")
    }

    /// The position of [`Removal::fen`].
    pub fn position(self) -> Position {
        // Built from the standard setup by a fixed rule; the tests parse all 16.
        Position::from_fen(&self.fen()).expect("a Balanced start is a valid FEN")
    }
}

impl fmt::Display for Removal {
    /// `white d2` or `black e7`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = match self.color {
            Color::White => "white",
            Color::Black => "black",
        };
        write!(f, "{side} {}", self.square())
    }
}

impl FromStr for Removal {
    type Err = String;

    /// Reads `e7`, `d2`, or with the colour: `black e7`, `white-d2` (any case). The colour is
    /// the square's (rank 2: White's pawn, rank 7: Black's); a colour that contradicts it is an
    /// error, as is any other square.
    fn from_str(s: &str) -> Result<Removal, String> {
        let text = s.trim().to_ascii_lowercase();
        let (side, square) = match text.split_once([' ', '-', ':']) {
            Some((side, square)) => (Some(side.trim()), square.trim()),
            None => (None, text.as_str()),
        };
        let bad = |why: &str| {
            format!(
                "bad pawn {s:?}: {why} (a pawn on its starting square: a2…h2 for White's, \
                 a7…h7 for Black's, e.g. `e7` or `black e7`)"
            )
        };
        let (file, color) = match square.as_bytes() {
            [f @ b'a'..=b'h', b'2'] => (f - b'a', Color::White),
            [f @ b'a'..=b'h', b'7'] => (f - b'a', Color::Black),
            _ => return Err(bad("not a pawn's starting square")),
        };
        let named = match side {
            None => color,
            Some("white") => Color::White,
            Some("black") => Color::Black,
            Some(_) => return Err(bad("the colour is `white` or `black`")),
        };
        if named != color {
            return Err(bad("that colour has no pawn there"));
        }
        Ok(Removal { color, file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomic_chess::perft;

    #[test]
    fn the_rules_examples_are_generated() {
        // The two examples of the shared rules text (RULES.md §12 b).
        let white_f2: Removal = "f2".parse().unwrap();
        assert_eq!(
            white_f2.fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPP1PP/RNBQKBNR b KQkq - 0 1"
        );
        let black_f7: Removal = "f7".parse().unwrap();
        assert_eq!(
            black_f7.fen(),
            "rnbqkbnr/ppppp1pp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1"
        );
    }

    #[test]
    fn sixteen_distinct_starts_with_one_pawn_less_and_black_to_move() {
        let all = Removal::all();
        let fens: std::collections::BTreeSet<String> = all.iter().map(|r| r.fen()).collect();
        assert_eq!(fens.len(), 16);
        for r in all {
            let pos = r.position();
            // The FEN round trip is exact: nothing the parser normalises.
            assert_eq!(pos.to_fen(), r.fen());
            assert_eq!(pos.turn(), Color::Black);
            assert_eq!(pos.ep_square(), None);
            assert_eq!(pos.castling_rights().count(), 4, "{r}");
            assert_eq!((pos.halfmove_clock(), pos.fullmove_number()), (0, 1));
            assert_eq!(pos.board().occupied().count(), 31, "{r}");
            let fen = r.fen();
            let ranks: Vec<&str> = fen.split('/').collect();
            let pawn_rank = ranks[if r.color == Color::White { 6 } else { 1 }];
            assert_eq!(
                pawn_rank.chars().position(|c| c == '1'),
                Some(usize::from(r.file)),
                "{r}"
            );
            assert_eq!(r.square().parse::<Removal>(), Ok(r));
            assert_eq!(r.to_string().parse::<Removal>(), Ok(r));
        }
    }

    #[test]
    fn the_shipped_openings_file_is_the_sixteen_starts() {
        let file = include_str!("../../data/balanced-starts.txt");
        let lines: Vec<(&str, &str)> = file
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('#'))
            .map(|(fen, name)| (fen.trim(), name.trim()))
            .collect();
        let expected: Vec<(String, String)> = Removal::all()
            .iter()
            .map(|r| (r.fen(), r.to_string()))
            .collect();
        let got: Vec<(String, String)> = lines
            .iter()
            .map(|(f, n)| ((*f).to_owned(), (*n).to_owned()))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn pawns_are_read_with_or_without_their_colour() {
        let e7 = Removal {
            color: Color::Black,
            file: 4,
        };
        for text in ["e7", "E7", "black e7", "Black-E7", " black:e7 "] {
            assert_eq!(text.parse::<Removal>(), Ok(e7), "{text}");
        }
        assert_eq!(
            "white a2".parse::<Removal>().map(|r| r.to_string()),
            Ok("white a2".into())
        );
        for (text, why) in [
            ("e4", "starting square"),
            ("e", "starting square"),
            ("", "starting square"),
            ("i2", "starting square"),
            ("white e7", "no pawn there"),
            ("black d2", "no pawn there"),
            ("red e7", "`white` or `black`"),
        ] {
            let err = text.parse::<Removal>().unwrap_err();
            assert!(
                err.contains(why) && err.contains(&format!("{text:?}")),
                "{err}"
            );
        }
    }

    /// perft 1-3 of the 16 starts. The shared rules vectors (positions.jsonl, perft.txt) do
    /// not include them, so these counts were computed with shakmaty 0.30.1 (the rules crate's
    /// dev-only oracle, an independent implementation), and ours must agree.
    #[test]
    fn perft_agrees_with_an_independent_implementation() {
        for (r, expected) in Removal::all().into_iter().zip(SHAKMATY_PERFT) {
            let pos = r.position();
            let ours: Vec<u64> = (1..=3).map(|d| perft(&pos, d)).collect();
            assert_eq!(ours, expected, "{r}: {}", r.fen());
        }
    }

    /// perft 1, 2, 3 by shakmaty 0.30.1 (`shakmaty::perft` on `Atomic`), in [`Removal::all`]'s
    /// order.
    const SHAKMATY_PERFT: [[u64; 3]; 16] = [
        [20, 476, 10507],
        [20, 400, 8901],
        [20, 420, 9271],
        [20, 616, 13248],
        [20, 579, 12699],
        [20, 380, 8456],
        [20, 400, 8901],
        [20, 476, 10507],
        [24, 474, 12511],
        [20, 400, 8978],
        [21, 418, 10352],
        [31, 597, 19858],
        [29, 573, 17529],
        [19, 380, 8281],
        [20, 400, 8978],
        [24, 474, 12511],
    ];
}
