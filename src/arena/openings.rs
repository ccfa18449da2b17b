//! The arena's openings: one a line (`#` starts a comment), either UCI moves from the start
//! position or a FEN (a line with a `/`, which no move has), each turned into the FEN a game
//! starts from. FENs let the arena start where the standard start cannot take it, such as the
//! vchess Balanced starts (`data/balanced-starts.txt`, Black to move).
//!
//! Games start from that FEN (a challenge from a position, `gameFull.initialFen`), so both
//! players play every move of their own from the first one on, on the server's clock; a game
//! whose first moves were played for the bot would not be the bot's game.

use atomic_chess::{Game, Position};

/// The default openings (a copy of the shared balanced set: 100 openings of 4-6 plies within
/// ±150 cp for Fairy-Stockfish), built into the binary so the arena runs from any folder.
pub const DEFAULT_OPENINGS: &str = include_str!("../../data/atomic-openings.txt");

/// One opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    /// The moves as written; empty for an opening given as a FEN.
    pub moves: Vec<String>,
    /// The position after them (or as given), which the game starts from.
    pub fen: String,
}

impl Opening {
    /// An opening given as a position. Errors name the FEN and what is wrong with it; a
    /// position whose game is already over is refused (there would be nothing to play).
    pub fn from_fen(fen: &str) -> Result<Opening, String> {
        let fen = fen.trim();
        let pos = Position::from_fen(fen).map_err(|e| format!("bad FEN {fen:?}: {e}"))?;
        if Game::new(pos).outcome().is_some() {
            return Err(format!("FEN {fen:?}: the game is already over"));
        }
        Ok(Opening {
            moves: Vec::new(),
            fen: pos.to_fen(),
        })
    }

    /// How the arena's progress lines name it: the moves, or the FEN.
    pub fn label(&self) -> String {
        if self.moves.is_empty() {
            self.fen.clone()
        } else {
            self.moves.join(" ")
        }
    }
}

/// Reads an openings text. Errors name the line and what is wrong; an empty set is an error.
pub fn parse(text: &str) -> Result<Vec<Opening>, String> {
    let mut openings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.contains('/') {
            openings.push(Opening::from_fen(line).map_err(|e| format!("line {}: {e}", i + 1))?);
            continue;
        }
        let moves: Vec<String> = line.split_ascii_whitespace().map(str::to_owned).collect();
        let game = Game::from_uci_moves(Position::startpos(), &moves)
            .map_err(|e| format!("line {}: {e}", i + 1))?;
        if game.outcome().is_some() {
            return Err(format!("line {}: the game is already over", i + 1));
        }
        openings.push(Opening {
            moves,
            fen: game.position().to_fen(),
        });
    }
    if openings.is_empty() {
        return Err("no openings (one a line: UCI moves from the start position, or a FEN)".into());
    }
    Ok(openings)
}

/// The order the openings are played in: the file's, or shuffled by `seed` (reproducibly).
pub fn order(count: usize, seed: Option<u64>) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..count).collect();
    if let Some(seed) = seed {
        // splitmix64: any seed, 0 included, gives a good stream.
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for i in (1..count).rev() {
            let j = (next() % (i as u64 + 1)) as usize;
            idx.swap(i, j);
        }
    }
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_set_is_valid() {
        let set = parse(DEFAULT_OPENINGS).unwrap();
        assert_eq!(set.len(), 100);
        assert_eq!(set[0].moves, ["g2g3", "b7b5", "e2e3", "h7h6", "f2f4"]);
        // Five plies: Black to move.
        assert!(set[0].fen.contains(" b "), "{}", set[0].fen);
    }

    #[test]
    fn bad_lines_are_named() {
        let err = parse("e2e4 e7e5\n# c\ne2e4 e2e4\n").unwrap_err();
        assert!(err.starts_with("line 3:"), "{err}");
        assert!(parse("# nothing\n\n").unwrap_err().contains("no openings"));
    }

    #[test]
    fn fen_lines_are_played_from_as_given_beside_move_lines() {
        let text = "# Balanced\n\
                    rnbqkbnr/ppppp1pp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1 # black f7\n\
                    e2e4 e7e5\n";
        let set = parse(text).unwrap();
        assert_eq!(set.len(), 2);
        assert!(set[0].moves.is_empty());
        assert_eq!(
            set[0].fen,
            "rnbqkbnr/ppppp1pp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1"
        );
        assert_eq!(set[0].label(), set[0].fen);
        assert_eq!(set[1].label(), "e2e4 e7e5");
        assert!(set[1].fen.contains(" w "), "{}", set[1].fen);
    }

    #[test]
    fn bad_fens_are_named_with_their_line() {
        let bad = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1";
        let err = parse(&format!("e2e4\n{bad}\n")).unwrap_err();
        assert!(
            err.starts_with("line 2: bad FEN") && err.contains(bad),
            "{err}"
        );
        // A position with no game left to play: White's king is gone.
        let over = "8/8/8/8/8/8/8/k7 w - - 0 1";
        let err = Opening::from_fen(over).unwrap_err();
        assert!(err.contains(over), "{err}");
        let err = Opening::from_fen("8/8/8").unwrap_err();
        assert!(err.contains("\"8/8/8\""), "{err}");
    }

    #[test]
    fn the_shipped_balanced_file_holds_the_sixteen_starts() {
        // (That they are exactly the generated starts is checked in `balanced`.)
        let set = parse(include_str!("../../data/balanced-starts.txt")).unwrap();
        assert_eq!(set.len(), 16);
        let distinct: std::collections::BTreeSet<&str> =
            set.iter().map(|o| o.fen.as_str()).collect();
        assert_eq!(distinct.len(), 16);
        assert!(set.iter().all(|o| o.fen.ends_with(" b KQkq - 0 1")));
    }

    #[test]
    fn order_is_the_files_or_a_seeded_shuffle() {
        assert_eq!(order(4, None), [0, 1, 2, 3]);
        let a = order(50, Some(7));
        assert_eq!(a, order(50, Some(7)));
        assert_ne!(a, order(50, Some(8)));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
    }
}
