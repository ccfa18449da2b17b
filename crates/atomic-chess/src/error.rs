//! Error types. Each `Display` names what was wrong and why, for logs and UCI replies.

use std::fmt;

use crate::moves::Move;

/// The FEN field an error refers to.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FenField {
    /// Field 1: piece placement.
    Board,
    /// Field 2: side to move.
    Turn,
    /// Field 3: castling availability.
    Castling,
    /// Field 4: en-passant target square.
    EnPassant,
    /// Field 5: halfmove clock.
    Halfmove,
    /// Field 6: fullmove number.
    Fullmove,
    /// The text as a whole (empty, or too many fields).
    Whole,
}

impl fmt::Display for FenField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FenField::Board => "piece placement (field 1)",
            FenField::Turn => "side to move (field 2)",
            FenField::Castling => "castling (field 3)",
            FenField::EnPassant => "en passant (field 4)",
            FenField::Halfmove => "halfmove clock (field 5)",
            FenField::Fullmove => "fullmove number (field 6)",
            FenField::Whole => "FEN",
        })
    }
}

/// A FEN that could not be read: which field, and why.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FenError {
    /// The field at fault.
    pub field: FenField,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid FEN: {}: {}", self.field, self.reason)
    }
}

impl std::error::Error for FenError {}

/// Why a UCI move was rejected.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UciErrorKind {
    /// Not of the form `<from><to>[qrbn]`, e.g. `e2e4` or `e7e8q`.
    Syntax,
    /// Well-formed, but not a legal move in the position.
    Illegal,
}

/// A UCI move string that could not be used.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct UciError {
    /// The offending text (truncated to 16 characters).
    pub uci: String,
    /// Why it was rejected.
    pub kind: UciErrorKind,
}

impl fmt::Display for UciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            UciErrorKind::Syntax => write!(
                f,
                "invalid UCI move {:?}: expected <from><to>[q|r|b|n] like e2e4 or e7e8q",
                self.uci
            ),
            UciErrorKind::Illegal => write!(f, "illegal move {:?} in this position", self.uci),
        }
    }
}

impl std::error::Error for UciError {}

/// A move passed to a checked `play` that is not legal in the position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PlayError {
    /// The rejected move.
    pub m: Move,
}

impl fmt::Display for PlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "illegal move {} in this position", self.m)
    }
}

impl std::error::Error for PlayError {}

/// A move list that could not be replayed: the ply (1-based) and the move text.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct GameError {
    /// The 1-based index of the failing move in the list.
    pub ply: usize,
    /// The move text as given.
    pub uci: String,
    /// The underlying reason.
    pub source: UciError,
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "move {} ({:?}): {}", self.ply, self.uci, self.source)
    }
}

impl std::error::Error for GameError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}
