//! The worked examples of the team's RULES.md (lichess behaviour), one assertion each,
//! plus the game record (threefold repetition) and error reporting.

use atomic_chess::{Color, Game, Position, Termination};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).expect("valid FEN")
}

fn after(fen: &str, uci: &str) -> String {
    let p = pos(fen);
    let m = p.parse_uci(uci).expect("legal move");
    p.play(m).expect("legal").to_fen()
}

fn legal(fen: &str, uci: &str) -> bool {
    pos(fen).parse_uci(uci).is_ok()
}

#[test]
fn en_passant_blast_is_centred_on_the_landing_square() {
    assert_eq!(
        after("4k3/2pp1b1p/3r1r2/3Ppb2/8/8/1K6/4NB2 w - e6 0 2", "d5e6"),
        "4k3/2pp3p/8/8/8/8/1K6/4NB2 b - - 0 2"
    );
}

#[test]
fn promotion_capture_explodes_the_new_piece_and_the_king() {
    let fen = "3qk3/4P3/8/8/8/8/8/4K3 w - - 0 1";
    assert_eq!(after(fen, "e7d8n"), "8/8/8/8/8/8/8/4K3 b - - 0 1");
    let next = pos(&after(fen, "e7d8n"));
    let o = next.outcome().expect("game over");
    assert_eq!(o.termination, Termination::KingExploded);
    assert_eq!(o.winner, Some(Color::White));
    assert!(next.legal_moves().is_empty());
    // Four distinct promotion captures, one board.
    assert_eq!(
        pos(fen)
            .legal_moves()
            .iter()
            .filter(|m| m.to().to_string() == "d8")
            .count(),
        4
    );
}

#[test]
fn blown_up_rook_loses_its_castling_right() {
    assert_eq!(
        after("r3k2r/6b1/8/8/8/8/1B6/R3K2R b KQkq - 0 1", "g7b2"),
        "r3k2r/8/8/8/8/8/8/4K2R w Kkq - 0 2"
    );
}

#[test]
fn both_kings_blast_is_illegal() {
    assert!(!legal("8/8/8/2K5/2P5/2k1n3/8/2R5 b - - 0 1", "e3c4"));
}

#[test]
fn exploding_the_enemy_king_beats_check() {
    let fen = "8/8/1Q2pk2/8/8/8/3K4/1n6 w - - 0 1";
    assert!(pos(fen).is_check());
    assert!(legal(fen, "b6e6"));
    assert!(!legal(fen, "b6a7"));
}

#[test]
fn blast_removing_own_shield_is_illegal() {
    assert!(!legal(
        "r1b1k2r/pp1pBppp/2p1p2n/q3P3/B2P4/2N2Q2/PPn2PPP/R3K1NR w KQkq - 9 11",
        "a4c2"
    ));
}

#[test]
fn castling_with_connected_kings_and_xray() {
    assert!(legal("8/8/8/8/8/8/4k3/R3K2r w Q - 0 1", "e1c1"));
    assert!(!legal("8/8/8/8/8/8/5k2/R3K2r w Q - 0 1", "e1c1"));
}

#[test]
fn castling_accepts_both_spellings_and_writes_king_two_squares() {
    let p = Position::startpos();
    let g = Game::from_uci_moves(p, &["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1h1"])
        .expect("king-onto-rook castling");
    assert_eq!(
        g.moves().last().map(ToString::to_string).as_deref(),
        Some("e1g1")
    );
    let g2 = Game::from_uci_moves(p, &["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1"])
        .expect("king-two-squares castling");
    assert_eq!(g.position(), g2.position());
    assert_eq!(
        g.position().to_fen(),
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4"
    );
}

#[test]
fn en_passant_next_to_own_king_is_illegal_and_not_written() {
    let p = pos("8/8/4K3/3pP3/8/8/8/3k4 w - d6 0 1");
    assert!(p.parse_uci("e5d6").is_err());
    assert_eq!(p.ep_square(), None);
    assert_eq!(p.to_fen(), "8/8/4K3/3pP3/8/8/8/3k4 w - - 0 1");
}

#[test]
fn stalemate_when_the_king_could_only_capture() {
    let p = pos("k7/8/1R6/8/8/8/8/5K2 w - - 0 1");
    let next = p.play(p.parse_uci("b6b7").expect("legal")).expect("legal");
    // Black's king on a8 could only "capture" the rook on b7, which kings may not do.
    assert!(next.legal_moves().is_empty());
    assert!(!next.is_check());
    assert_eq!(
        next.outcome().map(|o| o.termination),
        Some(Termination::Stalemate)
    );
}

#[test]
fn lichess_insufficient_material_rule() {
    for fen in [
        "8/8/6p1/3K2P1/8/2k5/8/8 b - - 0 1",
        "B7/K7/7k/8/B7/8/8/8 w - - 0 27",
        "8/8/8/8/8/8/3k4/3K4 w - - 0 1",
    ] {
        assert_eq!(
            pos(fen).outcome().map(|o| o.termination),
            Some(Termination::InsufficientMaterial),
            "{fen}"
        );
    }
    // python-chess calls this a draw; lichess plays on.
    assert_eq!(pos("7k/4b3/8/8/8/3B4/2B5/K7 w - - 0 1").outcome(), None);
}

#[test]
fn fifty_moves_and_checkmate_order() {
    let p = pos("8/8/8/8/8/4k3/8/Q3K3 w - - 100 80");
    assert_eq!(
        p.outcome().map(|o| o.termination),
        Some(Termination::FiftyMoves)
    );
}

#[test]
fn threefold_repetition() {
    let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
    let mut g = Game::new(Position::startpos());
    for uci in shuffle {
        g.push_uci(uci).expect("legal");
    }
    assert_eq!(g.repetitions(), 2);
    assert_eq!(g.outcome(), None);
    for uci in shuffle {
        g.push_uci(uci).expect("legal");
    }
    assert_eq!(g.repetitions(), 3);
    assert_eq!(
        g.outcome().map(|o| o.termination),
        Some(Termination::ThreefoldRepetition)
    );
    assert_eq!(g.history_keys().len(), 9);
    // A pawn move clears the history.
    g.push_uci("e2e4").expect("legal");
    assert_eq!(g.history_keys().len(), 1);
    assert_eq!(g.repetitions(), 1);
}

#[test]
fn errors_name_the_problem() {
    let e = Game::from_uci_moves(Position::startpos(), &["e2e4", "e2e4"]).expect_err("illegal");
    assert_eq!(e.ply, 2);
    assert!(e.to_string().contains("e2e4"), "{e}");
    let e = Position::from_fen("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
        .expect_err("bad");
    assert!(e.to_string().contains("piece placement"), "{e}");
    let e = Position::from_fen("8/8/8/8/8/8/8/K6k x - - 0 1").expect_err("bad");
    assert!(e.to_string().contains("side to move"), "{e}");
    let e = Position::from_fen("8/8/8/8/8/8/8/K6k w - - x 1").expect_err("bad");
    assert!(e.to_string().contains("halfmove"), "{e}");
    assert!(Position::startpos().parse_uci("e2e9").is_err());
    assert!(Position::startpos().parse_uci("").is_err());
}

#[test]
fn display_board() {
    let s = Position::startpos().to_string();
    assert!(s.contains("| r | n | b | q | k | b | n | r | 8"), "{s}");
}
