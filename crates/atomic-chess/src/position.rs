//! The position: placement, side to move, castling rights, the legal en-passant square,
//! clocks and an incrementally maintained Zobrist key. `Copy` (96 bytes) for copy-make.

use std::fmt;

use crate::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks};
use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::error::{PlayError, UciError, UciErrorKind};
use crate::moves::{Move, MoveList};
use crate::role::{Piece, Role};
use crate::square::Square;
use crate::zobrist;

/// The four corner squares whose rooks can carry castling rights.
pub(crate) const CASTLING_CORNERS: Bitboard = Bitboard(0x8100_0000_0000_0081);

/// A position of an atomic chess game, following lichess's rules.
///
/// Equality compares everything including the clocks; compare [`Position::zobrist`]
/// for repetition purposes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Position {
    pub(crate) board: Board,
    /// Rook squares with castling rights (a subset of the corners, each backed by a
    /// rook of the right colour with its king on e1/e8).
    pub(crate) castling: Bitboard,
    pub(crate) zobrist: u64,
    pub(crate) fullmove: u32,
    pub(crate) halfmove: u32,
    pub(crate) turn: Color,
    /// Only set when an en-passant capture is legal (lichess convention).
    pub(crate) ep: Option<Square>,
}

impl Default for Position {
    fn default() -> Position {
        Position::startpos()
    }
}

impl Position {
    /// The standard starting position, White to move.
    pub fn startpos() -> Position {
        let mut pos = Position {
            board: Board::startpos(),
            castling: CASTLING_CORNERS,
            zobrist: 0,
            fullmove: 1,
            halfmove: 0,
            turn: Color::White,
            ep: None,
        };
        pos.zobrist = pos.compute_zobrist();
        pos
    }

    /// The piece placement.
    #[inline]
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The side to move.
    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// The rook squares that still carry castling rights.
    #[inline]
    pub fn castling_rights(&self) -> Bitboard {
        self.castling
    }

    /// The en-passant target square, only if an en-passant capture is legal.
    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep
    }

    /// Half-moves since the last capture or pawn move.
    #[inline]
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove
    }

    /// The move number, starting at 1 and incremented after Black moves.
    #[inline]
    pub fn fullmove_number(&self) -> u32 {
        self.fullmove
    }

    /// The Zobrist key (placement, side to move, castling rights, legal ep file).
    #[inline]
    pub fn zobrist(&self) -> u64 {
        self.zobrist
    }

    /// The Zobrist key computed from scratch (for verification; `zobrist()` is the fast path).
    pub fn compute_zobrist(&self) -> u64 {
        let mut key = 0;
        for color in Color::ALL {
            for role in Role::ALL {
                for sq in self.board.by_piece(Piece { color, role }) {
                    key ^= zobrist::piece(color, role, sq);
                }
            }
        }
        for sq in self.castling {
            key ^= zobrist::castling(sq);
        }
        if let Some(ep) = self.ep {
            key ^= zobrist::ep_file(ep);
        }
        if self.turn == Color::Black {
            key ^= zobrist::black_to_move();
        }
        key
    }

    /// Plain chess attackers of `sq` of colour `attacker` with the given occupancy,
    /// kings included (atomic check ignores kings; see [`Position::checkers`]).
    pub fn attackers_to(&self, sq: Square, attacker: Color, occupied: Bitboard) -> Bitboard {
        let b = &self.board;
        self.non_king_attackers(sq, attacker, b.by_color(attacker), occupied)
            | (king_attacks(sq) & b.by_role(Role::King) & b.by_color(attacker))
    }

    /// Non-king attackers of `sq` among `pieces`, which must all be of colour
    /// `attacker`, with the given occupancy.
    #[inline]
    pub(crate) fn non_king_attackers(
        &self,
        sq: Square,
        attacker: Color,
        pieces: Bitboard,
        occupied: Bitboard,
    ) -> Bitboard {
        let b = &self.board;
        ((knight_attacks(sq) & b.by_role(Role::Knight))
            | (pawn_attacks(!attacker, sq) & b.by_role(Role::Pawn))
            | (bishop_attacks(sq, occupied) & b.bishops_queens())
            | (rook_attacks(sq, occupied) & b.rooks_queens()))
            & pieces
    }

    /// The enemy non-king pieces attacking the king of the side to move, or EMPTY when
    /// the kings touch (a king next to the enemy king can never be in check) or a king
    /// is missing.
    pub fn checkers(&self) -> Bitboard {
        let (Some(ksq), Some(tsq)) = (
            self.board.king_of(self.turn),
            self.board.king_of(!self.turn),
        ) else {
            return Bitboard::EMPTY;
        };
        if king_attacks(ksq).contains(tsq) {
            return Bitboard::EMPTY;
        }
        self.non_king_attackers(
            ksq,
            !self.turn,
            self.board.by_color(!self.turn),
            self.board.occupied(),
        )
    }

    /// Whether the side to move is in check (atomic sense: never while the kings touch).
    pub fn is_check(&self) -> bool {
        self.checkers().any()
    }

    /// Whether both kings are on the board.
    #[inline]
    pub fn has_both_kings(&self) -> bool {
        (self.board.by_role(Role::King) & self.board.by_color(Color::White)).any()
            && (self.board.by_role(Role::King) & self.board.by_color(Color::Black)).any()
    }

    /// The squares emptied by the capture `m` (capturer, victim and adjacent non-pawns);
    /// EMPTY for non-captures.
    pub fn blast_squares(&self, m: Move) -> Bitboard {
        let Some(victim) = m.capture_square() else {
            return Bitboard::EMPTY;
        };
        let occ = self.board.occupied();
        (king_attacks(m.to()) & occ & !self.board.by_role(Role::Pawn))
            | (m.from().bitboard() & occ)
            | (victim.bitboard() & occ)
    }

    /// Whether the capture `m` destroys (our king, their king). (false, false) for
    /// non-captures.
    pub fn king_explodes(&self, m: Move) -> (bool, bool) {
        let blast = self.blast_squares(m);
        let kings = self.board.by_role(Role::King) & blast;
        (
            (kings & self.board.by_color(self.turn)).any(),
            (kings & self.board.by_color(!self.turn)).any(),
        )
    }

    /// All legal moves.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list
    }

    /// All legal moves, written into `out` (cleared first). Allocation-free.
    pub fn legal_moves_into(&self, out: &mut MoveList) {
        out.clear();
        crate::movegen::generate(self, out);
    }

    /// The legal captures and promotions, written into `out` (cleared first), in the order in
    /// which [`Position::legal_moves`] lists them. Allocation-free.
    pub fn noisy_moves_into(&self, out: &mut MoveList) {
        out.clear();
        crate::movegen::generate_noisy(self, out);
    }

    /// Whether there is any legal move: the same answer as `!legal_moves().is_empty()`, faster
    /// when a king step is legal (the usual answer to a check), which is tried first.
    pub fn has_legal_moves(&self) -> bool {
        crate::movegen::has_any(self)
    }

    /// Whether `m` is legal here. Moves are compared exactly (flags included).
    pub fn is_legal(&self, m: Move) -> bool {
        self.legal_moves().contains(&m)
    }

    /// Parses a UCI move and checks that it is legal. Castling is accepted both as the
    /// king's two-square move (`e1g1`) and as king-onto-rook (`e1h1`); a promotion
    /// without a suffix is read as a queen, as lichess does.
    pub fn parse_uci(&self, uci: &str) -> Result<Move, UciError> {
        let err = |kind| UciError {
            uci: uci.chars().take(16).collect(),
            kind,
        };
        let bytes = uci.as_bytes();
        if !(bytes.len() == 4 || bytes.len() == 5) {
            return Err(err(UciErrorKind::Syntax));
        }
        let from = Square::from_ascii(&bytes[0..2]).ok_or_else(|| err(UciErrorKind::Syntax))?;
        let to = Square::from_ascii(&bytes[2..4]).ok_or_else(|| err(UciErrorKind::Syntax))?;
        let promotion = match bytes.get(4) {
            None => None,
            Some(b'q') => Some(Role::Queen),
            Some(b'r') => Some(Role::Rook),
            Some(b'b') => Some(Role::Bishop),
            Some(b'n') => Some(Role::Knight),
            Some(_) => return Err(err(UciErrorKind::Syntax)),
        };
        let legal = self.legal_moves();
        let found = legal.iter().copied().find(|m| {
            m.from() == from
                && (m.to() == to || m.castle_rook_from() == Some(to))
                && (m.promotion() == promotion
                    || (promotion.is_none() && m.promotion() == Some(Role::Queen)))
        });
        found.ok_or_else(|| err(UciErrorKind::Illegal))
    }

    /// Plays `m` if it is legal, returning the new position.
    pub fn play(&self, m: Move) -> Result<Position, PlayError> {
        if self.is_legal(m) {
            let mut next = *self;
            next.play_unchecked(m);
            Ok(next)
        } else {
            Err(PlayError { m })
        }
    }

    #[inline]
    fn remove_piece(&mut self, sq: Square, p: Piece) {
        self.board.remove(sq, p);
        self.zobrist ^= zobrist::piece(p.color, p.role, sq);
    }

    #[inline]
    fn put_piece(&mut self, sq: Square, p: Piece) {
        self.board.put(sq, p);
        self.zobrist ^= zobrist::piece(p.color, p.role, sq);
    }

    /// The position with the move passed to the other side (a "null move", for search
    /// heuristics): no en-passant square, the fifty-move clock advanced. Not a legal move of
    /// the game; meaningless when the side to move is in check.
    pub fn null_move(&self) -> Position {
        let mut next = *self;
        if let Some(ep) = next.ep.take() {
            next.zobrist ^= zobrist::ep_file(ep);
        }
        next.halfmove = next.halfmove.saturating_add(1);
        if next.turn == Color::Black {
            next.fullmove = next.fullmove.saturating_add(1);
        }
        next.turn = !next.turn;
        next.zobrist ^= zobrist::black_to_move();
        next
    }

    /// Plays `m`, which must be legal here (from [`Position::legal_moves`] or checked
    /// with [`Position::is_legal`]); an illegal move leaves an unspecified but
    /// memory-safe position.
    pub fn play_unchecked(&mut self, m: Move) {
        let us = self.turn;
        let them = !us;
        if let Some(ep) = self.ep.take() {
            self.zobrist ^= zobrist::ep_file(ep);
        }
        self.halfmove = self.halfmove.saturating_add(1);
        let old_castling = self.castling;
        let from = m.from();
        let to = m.to();
        let mover = Piece {
            color: us,
            role: m.role(),
        };
        let mut ep_candidate = None;

        if let Some(victim_sq) = m.capture_square() {
            self.halfmove = 0;
            if let Some(victim) = self.board.piece_at(victim_sq) {
                self.remove_piece(victim_sq, victim);
            }
            if self.board.by_piece(mover).contains(from) {
                self.remove_piece(from, mover);
            }
            let blast = king_attacks(to) & self.board.occupied() & !self.board.by_role(Role::Pawn);
            for sq in blast {
                if let Some(p) = self.board.piece_at(sq) {
                    self.remove_piece(sq, p);
                }
            }
            self.castling &= !(blast | from.bitboard() | victim_sq.bitboard());
            // A side whose king exploded (in the blast, or captured directly in a
            // bad set-up) has no castling rights left.
            for c in Color::ALL {
                if self.board.king_of(c).is_none() {
                    self.castling &= !backrank(c);
                }
            }
        } else if let Some(rook_from) = m.castle_rook_from() {
            let rook = Piece {
                color: us,
                role: Role::Rook,
            };
            let rook_to = Square::from_coords((from.file() + to.file()) / 2, from.rank());
            self.remove_piece(from, mover);
            self.remove_piece(rook_from, rook);
            self.put_piece(to, mover);
            self.put_piece(rook_to, rook);
            self.castling &= !backrank(us);
        } else {
            self.remove_piece(from, mover);
            let placed = match m.promotion() {
                Some(role) => Piece { color: us, role },
                None => mover,
            };
            self.put_piece(to, placed);
            match m.role() {
                Role::Pawn => {
                    self.halfmove = 0;
                    if from.index().abs_diff(to.index()) == 16 {
                        ep_candidate = Some(Square::new(((from.index() + to.index()) / 2) as u32));
                    }
                }
                Role::King => self.castling &= !backrank(us),
                _ => {}
            }
            self.castling &= !(from.bitboard() | to.bitboard());
        }

        for sq in old_castling ^ self.castling {
            self.zobrist ^= zobrist::castling(sq);
        }
        self.turn = them;
        self.zobrist ^= zobrist::black_to_move();
        if us == Color::Black {
            self.fullmove = self.fullmove.saturating_add(1);
        }
        if let Some(ep) = ep_candidate {
            self.set_ep_if_legal(ep);
        }
        debug_assert!(self.is_consistent(), "inconsistent position after {m}");
    }

    /// Cheap structural invariants, checked after every move in debug builds: the
    /// colour and role sets partition the occupied squares, at most one king per side,
    /// castling rights backed by a home king and a corner rook.
    fn is_consistent(&self) -> bool {
        let b = &self.board;
        let white = b.by_color(Color::White);
        let black = b.by_color(Color::Black);
        let mut roles = Bitboard::EMPTY;
        let mut total = 0;
        for r in Role::ALL {
            roles |= b.by_role(r);
            total += b.by_role(r).count();
        }
        let rights_ok = self.castling.into_iter().all(|rook| {
            let color = if rook.rank() == 0 {
                Color::White
            } else {
                Color::Black
            };
            CASTLING_CORNERS.contains(rook)
                && b.by_piece(Piece {
                    color,
                    role: Role::Rook,
                })
                .contains(rook)
                && b.king_of(color) == Some(Square::from_coords(4, rook.rank()))
        });
        (white & black).is_empty()
            && roles == (white | black)
            && total == roles.count()
            && !(b.by_role(Role::King) & white).more_than_one()
            && !(b.by_role(Role::King) & black).more_than_one()
            && rights_ok
    }

    /// Sets the en-passant square `ep` (behind a pawn that just double-pushed) if the
    /// side to move has a legal en-passant capture onto it.
    pub(crate) fn set_ep_if_legal(&mut self, ep: Square) {
        let us = self.turn;
        let candidates = pawn_attacks(!us, ep)
            & self.board.by_piece(Piece {
                color: us,
                role: Role::Pawn,
            });
        if candidates.is_empty() {
            return;
        }
        self.ep = Some(ep);
        let legal = Iterator::any(&mut candidates.into_iter(), |from| {
            crate::movegen::en_passant_is_legal(self, from, ep)
        });
        if legal {
            self.zobrist ^= zobrist::ep_file(ep);
        } else {
            self.ep = None;
        }
    }
}

/// The first or last rank of `c`: where its castling rooks live.
#[inline]
pub(crate) const fn backrank(c: Color) -> Bitboard {
    match c {
        Color::White => Bitboard(0xff),
        Color::Black => Bitboard(0xff00_0000_0000_0000),
    }
}

/// An ASCII board in the style of Stockfish's `d` command (rank 8 first).
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, " +---+---+---+---+---+---+---+---+")?;
        for rank in (0..8).rev() {
            for file in 0..8 {
                let c = self
                    .board
                    .piece_at(Square::from_coords(file, rank))
                    .map_or(' ', Piece::char);
                write!(f, " | {c}")?;
            }
            writeln!(f, " | {}", rank + 1)?;
            writeln!(f, " +---+---+---+---+---+---+---+---+")?;
        }
        writeln!(f, "   a   b   c   d   e   f   g   h")
    }
}
