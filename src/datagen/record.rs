//! The training-data file: a 16-byte header, then fixed 32-byte records, one per position.
//!
//! Fixed-size records keep the files seekable and let the trainer shuffle and split them without
//! parsing text; 32 bytes hold any atomic position (at most 32 units stand on the board) with
//! its search score, the game's result and the search's best move. Everything the network's
//! inputs need (colour, role and square of each unit, the side to move) is read without
//! building a [`Position`]; castling and en passant are kept so that a record can become a
//! position again (to re-score it with a stronger engine in a later generation).
//!
//! Header (little-endian): `b"ATOMDATA"`, version `u32` = 1, record size `u32` = 32.
//!
//! Record (little-endian):
//!
//! | bytes  | field    | meaning                                                              |
//! |--------|----------|----------------------------------------------------------------------|
//! | 0..8   | occupied | `u64` bitboard of occupied squares (a1 = bit 0, h8 = bit 63)         |
//! | 8..24  | pieces   | one nibble per occupied square in ascending square order, low nibble first: `colour << 3 \| role` (colour 0 white, 1 black; role 0 pawn … 5 king); unused nibbles 0 |
//! | 24..26 | score    | `i16` search score in centipawns, side to move's view (mates clamped to ±[`SCORE_LIMIT`]) |
//! | 26     | result   | game result for the side to move: 0 loss, 1 draw, 2 win              |
//! | 27     | turn     | side to move: 0 white, 1 black                                       |
//! | 28..30 | best     | `u16` best move: from (bits 0–5), to (6–11), promotion role (12–14; 0 none) |
//! | 30     | castling | bit 0 h1, bit 1 a1, bit 2 h8, bit 3 a8: rooks with castling rights  |
//! | 31     | ep       | en-passant square + 1, or 0                                          |

use std::fmt;

use arrayvec::ArrayVec;
use atomic_chess::{Color, Move, Position, Role, Square};

/// The first eight bytes of every data file.
pub const MAGIC: &[u8; 8] = b"ATOMDATA";
/// The format version this code reads and writes.
pub const VERSION: u32 = 1;
/// Bytes of the file header.
pub const HEADER_BYTES: usize = 16;
/// Bytes of one record.
pub const RECORD_BYTES: usize = 32;
/// Scores are clamped to this magnitude: a found win is "as won as it gets" for training.
pub const SCORE_LIMIT: i32 = 10_000;

/// The game's result from the side to move's point of view.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GameResult {
    /// The side to move lost the game.
    Loss = 0,
    /// The game was drawn.
    Draw = 1,
    /// The side to move won the game.
    Win = 2,
}

impl GameResult {
    /// The result as a training target: 0, ½ or 1.
    pub fn target(self) -> f32 {
        f32::from(self as u8) / 2.0
    }
}

/// One decoded record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The units on the board: colour, role, square (ascending squares).
    pub pieces: ArrayVec<(Color, Role, Square), 32>,
    /// The side to move.
    pub turn: Color,
    /// The search score in centipawns, side to move's view.
    pub score: i16,
    /// The game's result, side to move's view.
    pub result: GameResult,
    /// The best move as (from, to, promotion).
    pub best: (Square, Square, Option<Role>),
    /// Corners whose rooks may still castle (bit 0 h1, 1 a1, 2 h8, 3 a8).
    pub castling: u8,
    /// The en-passant square, when one is legal.
    pub ep: Option<Square>,
}

/// What was wrong with a data file or record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataError {
    /// The file is shorter than its header.
    ShortHeader,
    /// The file does not start with [`MAGIC`].
    Magic,
    /// A version this code does not read.
    Version(u32),
    /// A record size other than [`RECORD_BYTES`].
    RecordSize(u32),
    /// The records do not fill the file evenly: this many bytes are left over.
    Trailing(usize),
    /// A record that no position encodes, with the reason.
    Record(&'static str),
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataError::ShortHeader => write!(f, "header: file shorter than {HEADER_BYTES} bytes"),
            DataError::Magic => write!(f, "header: magic is not {:?}", "ATOMDATA"),
            DataError::Version(v) => write!(f, "header: version {v} (this build reads {VERSION})"),
            DataError::RecordSize(s) => {
                write!(
                    f,
                    "header: record size {s} (this build reads {RECORD_BYTES})"
                )
            }
            DataError::Trailing(n) => write!(f, "records: {n} bytes after the last whole record"),
            DataError::Record(why) => write!(f, "record: {why}"),
        }
    }
}

impl std::error::Error for DataError {}

/// The file header.
pub fn header() -> [u8; HEADER_BYTES] {
    let mut out = [0u8; HEADER_BYTES];
    out[..8].copy_from_slice(MAGIC);
    out[8..12].copy_from_slice(&VERSION.to_le_bytes());
    out[12..16].copy_from_slice(&(RECORD_BYTES as u32).to_le_bytes());
    out
}

/// Checks a file's header and returns its records (the bytes after the header).
pub fn records(file: &[u8]) -> Result<&[u8], DataError> {
    let head = file.get(..HEADER_BYTES).ok_or(DataError::ShortHeader)?;
    if &head[..8] != MAGIC {
        return Err(DataError::Magic);
    }
    let word = |at: usize| u32::from_le_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    if word(8) != VERSION {
        return Err(DataError::Version(word(8)));
    }
    if word(12) != RECORD_BYTES as u32 {
        return Err(DataError::RecordSize(word(12)));
    }
    let body = &file[HEADER_BYTES..];
    match body.len() % RECORD_BYTES {
        0 => Ok(body),
        n => Err(DataError::Trailing(n)),
    }
}

const CORNERS: [Square; 4] = [Square::H1, Square::A1, Square::H8, Square::A8];

/// Encodes a position with its score, result and best move.
pub fn encode(pos: &Position, score: i32, result: GameResult, best: Move) -> [u8; RECORD_BYTES] {
    let mut out = [0u8; RECORD_BYTES];
    let board = pos.board();
    let occupied = board.occupied();
    out[..8].copy_from_slice(&occupied.0.to_le_bytes());
    for (i, sq) in occupied.enumerate() {
        let color = board.color_at(sq).map_or(0, Color::index) as u8;
        let role = board.role_at(sq).map_or(0, Role::index) as u8;
        out[8 + i / 2] |= (color << 3 | role) << (4 * (i % 2));
    }
    let score = score.clamp(-SCORE_LIMIT, SCORE_LIMIT) as i16;
    out[24..26].copy_from_slice(&score.to_le_bytes());
    out[26] = result as u8;
    out[27] = pos.turn().index() as u8;
    let promo = best.promotion().map_or(0, Role::index) as u16;
    let mv = best.from().index() as u16 | (best.to().index() as u16) << 6 | promo << 12;
    out[28..30].copy_from_slice(&mv.to_le_bytes());
    let rights = pos.castling_rights();
    out[30] = CORNERS
        .iter()
        .enumerate()
        .filter(|(_, c)| rights.contains(**c))
        .fold(0, |acc, (i, _)| acc | 1 << i);
    out[31] = pos.ep_square().map_or(0, |sq| sq.index() as u8 + 1);
    out
}

/// Decodes one record (exactly [`RECORD_BYTES`] bytes).
pub fn decode(bytes: &[u8]) -> Result<Sample, DataError> {
    let bytes: &[u8; RECORD_BYTES] = bytes
        .try_into()
        .map_err(|_| DataError::Record("not 32 bytes"))?;
    let occupied = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    if occupied.count_ones() > 32 {
        return Err(DataError::Record("more than 32 occupied squares"));
    }
    let mut pieces = ArrayVec::new();
    let mut bits = occupied;
    let mut i = 0;
    while bits != 0 {
        let sq = Square::new(bits.trailing_zeros());
        bits &= bits - 1;
        let nibble = (bytes[8 + i / 2] >> (4 * (i % 2))) & 0xf;
        let role = *Role::ALL
            .get(usize::from(nibble & 7))
            .ok_or(DataError::Record("role above 5"))?;
        let color = if nibble >> 3 == 0 {
            Color::White
        } else {
            Color::Black
        };
        pieces.push((color, role, sq));
        i += 1;
    }
    let score = i16::from_le_bytes([bytes[24], bytes[25]]);
    let result = match bytes[26] {
        0 => GameResult::Loss,
        1 => GameResult::Draw,
        2 => GameResult::Win,
        _ => return Err(DataError::Record("result above 2")),
    };
    let turn = match bytes[27] {
        0 => Color::White,
        1 => Color::Black,
        _ => return Err(DataError::Record("side to move above 1")),
    };
    let mv = u16::from_le_bytes([bytes[28], bytes[29]]);
    let promo = match (mv >> 12) & 7 {
        0 => None,
        r @ 1..=4 => Some(Role::ALL[usize::from(r)]),
        _ => return Err(DataError::Record("promotion role not 1-4")),
    };
    let best = (
        Square::new(u32::from(mv & 63)),
        Square::new(u32::from((mv >> 6) & 63)),
        promo,
    );
    if bytes[30] > 0xf {
        return Err(DataError::Record("castling bits above 3"));
    }
    let ep = match bytes[31] {
        0 => None,
        n => Some(Square::from_index(u32::from(n - 1)).ok_or(DataError::Record("ep above 64"))?),
    };
    Ok(Sample {
        pieces,
        turn,
        score,
        result,
        best,
        castling: bytes[30],
        ep,
    })
}

impl Sample {
    /// The position as FEN (halfmove clock 0, move number 1: the record keeps neither).
    pub fn to_fen(&self) -> String {
        let mut grid = [None; 64];
        for &(color, role, sq) in &self.pieces {
            grid[sq.index()] = Some((color, role));
        }
        let mut fen = String::with_capacity(90);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match grid[rank * 8 + file] {
                    None => empty += 1,
                    Some((color, role)) => {
                        if empty > 0 {
                            fen.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        let c = role.char();
                        fen.push(if color == Color::White {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        });
                    }
                }
            }
            if empty > 0 {
                fen.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                fen.push('/');
            }
        }
        fen.push_str(if self.turn == Color::White {
            " w "
        } else {
            " b "
        });
        let rights: String = [(0, 'K'), (1, 'Q'), (2, 'k'), (3, 'q')]
            .iter()
            .filter(|(bit, _)| self.castling & (1 << bit) != 0)
            .map(|(_, c)| *c)
            .collect();
        fen.push_str(if rights.is_empty() { "-" } else { &rights });
        match self.ep {
            Some(sq) => fen.push_str(&format!(" {sq} 0 1")),
            None => fen.push_str(" - 0 1"),
        }
        fen
    }

    /// The best move in UCI notation.
    pub fn best_uci(&self) -> String {
        let (from, to, promo) = self.best;
        match promo {
            Some(r) => format!("{from}{to}{}", r.char()),
            None => format!("{from}{to}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(fen: &str, moves: &[&str]) -> Position {
        let mut pos = Position::from_fen(fen).expect("fen");
        for m in moves {
            let mv = pos.parse_uci(m).expect("move");
            pos = pos.play(mv).expect("legal");
        }
        pos
    }

    #[test]
    fn records_round_trip_to_the_same_fen_and_move() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let cases = [
            (play(start, &[]), "e2e4", 35, GameResult::Win),
            (
                play(start, &["e2e4", "d7d5", "e4e5", "f7f5"]),
                "e5f6",
                -120,
                GameResult::Loss,
            ),
            (
                play("4k3/1P6/8/8/8/8/8/4K2R w K - 0 1", &[]),
                "b7b8q",
                20_000,
                GameResult::Draw,
            ),
            (
                play(start, &["g1f3", "d7d5", "f3e5"]),
                "d8d6",
                -30_000,
                GameResult::Win,
            ),
        ];
        for (pos, best, score, result) in cases {
            let mv = pos.parse_uci(best).expect("best");
            let bytes = encode(&pos, score, result, mv);
            let sample = decode(&bytes).expect("decodes");
            let fen = pos.to_fen();
            let placement_etc: Vec<&str> = fen.split(' ').take(4).collect();
            let back = sample.to_fen();
            assert_eq!(back.split(' ').take(4).collect::<Vec<_>>(), placement_etc);
            assert_eq!(sample.best_uci(), best);
            assert_eq!(
                i32::from(sample.score),
                score.clamp(-SCORE_LIMIT, SCORE_LIMIT)
            );
            assert_eq!(sample.result, result);
            assert_eq!(sample.turn, pos.turn());
            assert_eq!(sample.pieces.len(), pos.board().occupied().count() as usize);
            Position::from_fen(&back).expect("decoded FEN parses");
        }
    }

    #[test]
    fn bad_headers_and_records_are_named() {
        let mut file = header().to_vec();
        file.extend_from_slice(&[0u8; RECORD_BYTES]);
        assert_eq!(records(&file).map(<[u8]>::len), Ok(RECORD_BYTES));
        assert_eq!(records(&file[..10]), Err(DataError::ShortHeader));
        let mut bad = file.clone();
        bad[0] = b'X';
        assert_eq!(records(&bad), Err(DataError::Magic));
        let mut bad = file.clone();
        bad[8] = 2;
        assert_eq!(records(&bad), Err(DataError::Version(2)));
        let mut bad = file.clone();
        bad[12] = 31;
        assert_eq!(records(&bad), Err(DataError::RecordSize(31)));
        assert_eq!(
            records(&file[..file.len() - 1]),
            Err(DataError::Trailing(31))
        );
        let mut rec = [0u8; RECORD_BYTES];
        rec[26] = 3;
        assert_eq!(decode(&rec), Err(DataError::Record("result above 2")));
        rec[26] = 0;
        rec[..8].copy_from_slice(&1u64.to_le_bytes());
        rec[8] = 6;
        assert_eq!(decode(&rec), Err(DataError::Record("role above 5")));
        assert!(decode(&rec[..31]).is_err());
        assert!(DataError::Version(2).to_string().contains("version 2"));
    }
}
