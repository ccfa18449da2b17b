//! Game results and lichess's game-end rules (scalachess `Position.status` order).

use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::moves::MoveList;
use crate::position::Position;
use crate::role::{Piece, Role};

/// Why a game ended.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Termination {
    /// The side to move is in check and has no legal move.
    Checkmate,
    /// A king was blown up (lichess "variant end").
    KingExploded,
    /// The side to move is not in check and has no legal move.
    Stalemate,
    /// Neither side can win, by lichess's atomic rule.
    InsufficientMaterial,
    /// The halfmove clock reached 100 (automatic on lichess).
    FiftyMoves,
    /// The same position occurred three times (see [`crate::Game`]).
    ThreefoldRepetition,
}

/// A finished game: the winner (`None` for a draw) and the reason.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Outcome {
    /// The winning side, or `None` for a draw.
    pub winner: Option<Color>,
    /// How the game ended.
    pub termination: Termination,
}

impl Outcome {
    /// The PGN result string: `1-0`, `0-1` or `1/2-1/2`.
    pub fn result(&self) -> &'static str {
        match self.winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }
}

impl Position {
    /// The game end lichess decides from this position alone, in its order:
    /// checkmate, a king exploded, stalemate, insufficient material (lichess's atomic
    /// rule), halfmove clock >= 100. Repetition needs the history: see [`crate::Game`].
    pub fn outcome(&self) -> Option<Outcome> {
        let mut moves = MoveList::new();
        self.legal_moves_into(&mut moves);
        let decisive = |termination| {
            Some(Outcome {
                winner: Some(!self.turn),
                termination,
            })
        };
        let draw = |termination| {
            Some(Outcome {
                winner: None,
                termination,
            })
        };
        if moves.is_empty() && self.is_check() {
            return decisive(Termination::Checkmate);
        }
        if !self.has_both_kings() {
            // scalachess: the side that just moved wins.
            return decisive(Termination::KingExploded);
        }
        if moves.is_empty() {
            return draw(Termination::Stalemate);
        }
        if self.is_insufficient_material() {
            return draw(Termination::InsufficientMaterial);
        }
        if self.halfmove >= 100 {
            return draw(Termination::FiftyMoves);
        }
        None
    }

    /// lichess's atomic insufficient-material rule (scalachess
    /// `Atomic.isInsufficientMaterial`), judged for both colours together: too little
    /// material to win, or a closed pawn structure nobody can open.
    pub fn is_insufficient_material(&self) -> bool {
        self.insufficient_winning_material() || self.closed_position()
    }

    /// Whether `c` has nothing but its king (or nothing at all). lichess uses this when
    /// a flag falls: running out of time against a bare king is a draw.
    pub fn has_insufficient_material(&self, c: Color) -> bool {
        (self.board.by_color(c) & !self.board.by_role(Role::King)).is_empty()
    }

    fn insufficient_winning_material(&self) -> bool {
        let b = &self.board;
        let occ = b.occupied();
        let n = occ.count();
        let kings = b.by_role(Role::King);
        let bishops = b.by_role(Role::Bishop);
        let knights = b.by_role(Role::Knight);
        let rooks = b.by_role(Role::Rook);
        let bishops_on_both_colors =
            bishops.intersects(Bitboard::LIGHT) && bishops.intersects(Bitboard::DARK);
        if b.by_color(Color::White).count() >= 2 && b.by_color(Color::Black).count() >= 2 {
            (occ & !(kings | bishops)).is_empty() && n <= 4 && bishops_on_both_colors
        } else if (occ & !(kings | knights)).is_empty() {
            n <= 4
        } else {
            (occ & !(kings | rooks | bishops | knights)).is_empty()
                && !bishops_on_both_colors
                && n <= 3
        }
    }

    /// The pawns of `color` with no legal move, judged as if `color` were to move
    /// (en passant only for the side actually to move).
    fn immobile_pawns(&self, color: Color) -> Bitboard {
        let mut pos = *self;
        if pos.turn != color {
            pos.turn = color;
            pos.ep = None;
        }
        let mut moves = MoveList::new();
        pos.legal_moves_into(&mut moves);
        let mut mobile = Bitboard::EMPTY;
        for m in &moves {
            mobile = mobile.with(m.from());
        }
        self.board.by_piece(Piece {
            color,
            role: Role::Pawn,
        }) & !mobile
    }

    fn closed_position(&self) -> bool {
        let b = &self.board;
        let pawns = b.by_role(Role::Pawn);
        let bishops = b.by_role(Role::Bishop);
        if (b.occupied() & !(pawns | bishops | b.by_role(Role::King))).any() {
            return false;
        }
        // Blocked pawn: the square ahead holds a pawn and the pawn cannot move.
        let white_pawns = pawns & b.by_color(Color::White);
        let black_pawns = pawns & b.by_color(Color::Black);
        let white_blocked = Bitboard((pawns.0 >> 8) & white_pawns.0);
        let black_blocked = Bitboard((pawns.0 << 8) & black_pawns.0);
        if white_blocked != white_pawns || black_blocked != black_pawns {
            return false;
        }
        if self.immobile_pawns(Color::White) != white_pawns
            || self.immobile_pawns(Color::Black) != black_pawns
        {
            return false;
        }
        // Bishops absent, or "pawnitized": all bishops belong to one side S and stand on
        // one square colour c, and the other side's pawns stand only on the other colour.
        let Some(first) = bishops.first() else {
            return true;
        };
        let Some(side) = b.color_at(first) else {
            return true;
        };
        let shade = if first.is_light() {
            Bitboard::LIGHT
        } else {
            Bitboard::DARK
        };
        let their_pawns = pawns & b.by_color(!side);
        (bishops & !(b.by_color(side) & shade)).is_empty() && (their_pawns & shade).is_empty()
    }
}
