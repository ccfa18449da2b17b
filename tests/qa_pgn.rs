//! QA regression: the PGN of a game started from a FEN (`initialFen` not `startpos`).

use atomic_bot::lichess::model::{GameFull, GameState};
use atomic_bot::lichess::pgn;

#[test]
fn a_game_from_a_fen_records_the_fen_and_numbers_from_it() {
    let fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2";
    let full = GameFull {
        id: "abcd1234".into(),
        initial_fen: fen.into(),
        ..GameFull::default()
    };
    let last = GameState {
        moves: "g8f6 g1f3".into(),
        status: "resign".into(),
        winner: Some("white".into()),
        ..GameState::default()
    };
    let text = pgn::render("https://lichess.org", &full, &last);
    assert!(text.contains(&format!("[FEN \"{fen}\"]")), "{text}");
    assert!(text.contains("[SetUp \"1\"]"), "{text}");
    assert!(text.contains("2... Nf6 3. Nf3 1-0"), "{text}");
    // The start position keeps its plain headers and numbering.
    let full = GameFull {
        initial_fen: "startpos".into(),
        ..full
    };
    let last = GameState {
        moves: "e2e4 e7e5".into(),
        ..last
    };
    let text = pgn::render("https://lichess.org", &full, &last);
    assert!(!text.contains("[FEN "), "{text}");
    assert!(text.contains("1. e4 e5 1-0"), "{text}");
}
