//! What the fake's online move sources answer (API.md §9.1): the atomic tablebase
//! (`GET /atomic`), the opening explorer (`GET /lichess`) and the cloud eval
//! (`GET /api/cloud-eval`), all served by the one fake server (the bot's hosts are configurable,
//! so tests and the demo point all three at it).
//!
//! An answer set by a test ([`super::FakeLichess::set_online_answer`]) wins; otherwise:
//! - the tablebase follows a toy rule, not a real table: in a position of at most 6 units each
//!   legal move is a `loss` for the opponent when it wins at once, a `win` for the opponent when
//!   it lets the opponent win at once, else a `draw`, best first like lichess; bigger positions
//!   get `unknown` with no moves;
//! - the explorer has a small invented book of the first plies (shaped like lichess's answers,
//!   not lichess's data), and no moves elsewhere;
//! - the cloud eval knows the start position and answers 404 elsewhere, as lichess does for
//!   most atomic positions.
//!
//! A test may also delay a source's answers ([`super::FakeLichess::delay_online`]). This module
//! knows nothing of the server state, which holds an [`OnlineTables`].

use std::collections::HashMap;
use std::time::Duration;

use atomic_chess::{Game, Position};
use serde_json::{Value, json};

use crate::lichess::client::Endpoint;

/// A book move: `(uci, white wins, draws, black wins)`.
type BookMove = (&'static str, u64, u64, u64);

/// The invented book: a line from the start, and its moves.
const BOOK: &[(&str, &[BookMove])] = &[
    (
        "",
        &[
            ("g1f3", 2900, 200, 1900),
            ("e2e3", 1500, 100, 1300),
            ("d2d4", 500, 40, 460),
            ("c2c3", 90, 10, 120),
            ("e2e4", 60, 5, 140),
            ("b1c3", 4, 0, 3),
        ],
    ),
    (
        "g1f3",
        &[
            ("f7f6", 1400, 100, 1500),
            ("e7e6", 300, 20, 250),
            ("d7d5", 150, 10, 60),
            ("h7h6", 30, 0, 10),
        ],
    ),
    (
        "e2e3",
        &[
            ("e7e6", 600, 40, 560),
            ("b8c6", 200, 10, 230),
            ("d7d5", 300, 20, 200),
        ],
    ),
    (
        "g1f3 f7f6",
        &[
            ("e2e3", 700, 50, 650),
            ("d2d4", 400, 30, 370),
            ("c2c3", 80, 10, 60),
        ],
    ),
];

/// The cloud evaluation of the start position.
const START_EVAL: (&str, i32, u32, u64) = ("g1f3 f7f6 e2e3 e7e6", 28, 36, 52_000);

/// The online sources' answers and delays.
#[derive(Default)]
pub(crate) struct OnlineTables {
    /// Answers set by tests, by endpoint and position key.
    set: HashMap<(Endpoint, String), Value>,
    /// Built-in answers (book and cloud eval), by endpoint and position key.
    builtin: HashMap<(Endpoint, String), Value>,
    /// Delays of a source's answers.
    delays: HashMap<Endpoint, Duration>,
}

/// The key of a position: the FEN's first four fields (the counters do not matter here), or
/// why the FEN is no position.
pub(crate) fn key(fen: &str) -> Result<(Position, String), String> {
    let pos = Position::from_fen(fen.trim()).map_err(|e| format!("Invalid fen: {e}"))?;
    let fen = pos.to_fen();
    let key = fen.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
    Ok((pos, key))
}

impl OnlineTables {
    /// The tables with the built-in book and start-position evaluation.
    pub(crate) fn new() -> Self {
        let mut builtin = HashMap::new();
        for (line, moves) in BOOK {
            let ucis: Vec<&str> = line.split_whitespace().collect();
            let Ok(game) = Game::from_uci_moves(Position::startpos(), &ucis) else {
                continue;
            };
            let Ok((_, k)) = key(&game.position().to_fen()) else {
                continue;
            };
            let moves: Vec<Value> = moves
                .iter()
                .map(|(uci, white, draws, black)| {
                    json!({"uci": uci, "san": uci, "white": white, "draws": draws,
                        "black": black, "averageRating": 2000})
                })
                .collect();
            builtin.insert((Endpoint::Explorer, k), explorer_answer(moves));
        }
        let start = Position::startpos().to_fen();
        if let Ok((_, k)) = key(&start) {
            let (line, cp, depth, knodes) = START_EVAL;
            builtin.insert(
                (Endpoint::CloudEval, k),
                json!({"fen": start, "knodes": knodes, "depth": depth,
                    "pvs": [{"moves": line, "cp": cp}]}),
            );
        }
        Self {
            builtin,
            ..Self::default()
        }
    }

    /// From now on `endpoint` answers `answer` for the position `fen`.
    pub(crate) fn set(
        &mut self,
        endpoint: Endpoint,
        fen: &str,
        answer: Value,
    ) -> Result<(), String> {
        let (_, k) = key(fen)?;
        self.set.insert((endpoint, k), answer);
        Ok(())
    }

    /// From now on `endpoint` answers after `delay`.
    pub(crate) fn delay(&mut self, endpoint: Endpoint, delay: Duration) {
        self.delays.insert(endpoint, delay);
    }

    /// How long `endpoint` waits before answering.
    pub(crate) fn delay_of(&self, endpoint: Endpoint) -> Duration {
        self.delays.get(&endpoint).copied().unwrap_or_default()
    }

    /// The answer of `endpoint` for `fen`: status and JSON body.
    pub(crate) fn answer(&self, endpoint: Endpoint, fen: &str) -> (u16, Value) {
        let (pos, k) = match key(fen) {
            Ok(x) => x,
            Err(e) => return (400, json!({ "error": e })),
        };
        let k = (endpoint, k);
        if let Some(v) = self.set.get(&k).or_else(|| self.builtin.get(&k)) {
            return (200, v.clone());
        }
        match endpoint {
            Endpoint::Tablebase => (200, tablebase_rule(&pos)),
            Endpoint::Explorer => (200, explorer_answer(Vec::new())),
            _ => (
                404,
                json!({"error": "No cloud evaluation available for that position"}),
            ),
        }
    }
}

/// An explorer answer with these moves and their totals.
fn explorer_answer(moves: Vec<Value>) -> Value {
    let sum = |field: &str| moves.iter().filter_map(|m| m[field].as_u64()).sum::<u64>();
    json!({"white": sum("white"), "draws": sum("draws"), "black": sum("black"),
        "moves": moves, "topGames": [], "opening": null})
}

/// The toy tablebase rule of the module docs.
fn tablebase_rule(pos: &Position) -> Value {
    if pos.board().occupied().count() > 6 {
        return json!({"category": "unknown", "dtz": null, "dtm": null, "moves": []});
    }
    let mover = pos.turn();
    // (rank for the mover: 0 best, the move's JSON)
    let mut moves: Vec<(u8, Value)> = pos
        .legal_moves()
        .iter()
        .filter_map(|&m| {
            let after = pos.play(m).ok()?;
            let wins_now = after.outcome().is_some_and(|o| o.winner == Some(mover));
            let loses_next = !wins_now
                && after.legal_moves().iter().any(|&r| {
                    after
                        .play(r)
                        .ok()
                        .and_then(|p| p.outcome())
                        .is_some_and(|o| o.winner == Some(!mover))
                });
            let (rank, category, dtz) = if wins_now {
                (0, "loss", 0)
            } else if loses_next {
                (2, "win", 1)
            } else {
                (1, "draw", 0)
            };
            Some((
                rank,
                json!({"uci": m.to_string(), "san": m.to_string(), "category": category,
                    "dtz": dtz, "dtm": null, "checkmate": false, "stalemate": false,
                    "variant_win": false, "variant_loss": wins_now, "zeroing": m.is_capture()}),
            ))
        })
        .collect();
    moves.sort_by_key(|(rank, _)| *rank);
    let category = match moves.first().map(|(r, _)| *r) {
        Some(0) => "win",
        Some(1) => "draw",
        Some(_) => "loss",
        None if pos.is_check() => "loss",
        None => "draw",
    };
    json!({"category": category, "dtz": null, "dtm": null, "checkmate": false,
        "stalemate": false, "variant_win": false, "variant_loss": false,
        "moves": moves.into_iter().map(|(_, v)| v).collect::<Vec<_>>()})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn book_rule_and_set_answers() {
        let mut t = OnlineTables::new();
        let start = Position::startpos().to_fen();
        let (status, v) = t.answer(Endpoint::Explorer, &start);
        assert_eq!(status, 200);
        assert_eq!(v["moves"][0]["uci"], "g1f3");
        assert_eq!(v["white"], 2900 + 1500 + 500 + 90 + 60 + 4);
        let (status, v) = t.answer(Endpoint::CloudEval, &start);
        assert_eq!((status, v["depth"].as_u64()), (200, Some(36)));
        let after = Game::from_uci_moves(Position::startpos(), &["a2a3"]).unwrap();
        let fen = after.position().to_fen();
        assert_eq!(t.answer(Endpoint::CloudEval, &fen).0, 404);
        assert_eq!(t.answer(Endpoint::Explorer, &fen).1["moves"], json!([]));
        assert_eq!(t.answer(Endpoint::Tablebase, &fen).1["category"], "unknown");
        assert_eq!(t.answer(Endpoint::Tablebase, "not a fen").0, 400);
        // A set answer wins, whatever the counters of the FEN.
        let other = fen.replace(" 0 1", " 3 9");
        t.set(Endpoint::Explorer, &other, json!({"moves": []}))
            .unwrap();
        assert_eq!(t.answer(Endpoint::Explorer, &fen).1, json!({"moves": []}));
    }

    #[test]
    fn the_toy_tablebase_rule_puts_the_winning_move_first() {
        // White: Kg1, Nf5; Black: Ke8, pawn e7 ... Nf5xe7 explodes e8's king.
        let pos = Position::from_fen("4k3/4p3/8/5N2/8/8/8/6K1 w - - 0 1").unwrap();
        let v = tablebase_rule(&pos);
        assert_eq!(v["category"], "win");
        assert_eq!(v["moves"][0]["uci"], "f5e7");
        assert_eq!(v["moves"][0]["category"], "loss");
        assert_eq!(v["moves"][0]["variant_loss"], true);
        let n = v["moves"].as_array().unwrap().len();
        assert_eq!(n, pos.legal_moves().len());
    }
}
