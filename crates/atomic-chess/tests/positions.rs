//! Every position of `tests/data/positions.jsonl` (a copy of the team's lichess-verified
//! set): the legal move set, the check flag, the outcome and the FEN after every legal
//! move must agree exactly.

use std::collections::BTreeMap;

use atomic_chess::{Color, Outcome, Position, Termination};
use serde_json::Value;

fn outcome_json(o: Option<Outcome>) -> Value {
    match o {
        None => Value::Null,
        Some(o) => {
            let result = match o.winner {
                Some(Color::White) => "1-0",
                Some(Color::Black) => "0-1",
                None => "1/2-1/2",
            };
            let reason = match o.termination {
                Termination::Checkmate => "checkmate",
                Termination::KingExploded => "variant_end",
                Termination::Stalemate => "stalemate",
                Termination::InsufficientMaterial => "insufficient_material",
                Termination::FiftyMoves => "fifty_moves",
                Termination::ThreefoldRepetition => "threefold_repetition",
            };
            serde_json::json!({ "result": result, "reason": reason })
        }
    }
}

fn check_position(v: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let fen = v["fen"].as_str().expect("fen");
    let pos = match Position::from_fen(fen) {
        Ok(p) => p,
        Err(e) => return vec![format!("{fen}: parse error {e}")],
    };
    if pos.to_fen() != fen {
        errors.push(format!("{fen}: round trip gives {}", pos.to_fen()));
    }
    let mut legal: Vec<String> = pos.legal_moves().iter().map(ToString::to_string).collect();
    legal.sort();
    let mut expected: Vec<String> = v["legal"]
        .as_array()
        .expect("legal")
        .iter()
        .map(|m| m.as_str().expect("move").to_owned())
        .collect();
    expected.sort();
    if legal != expected {
        let extra: Vec<_> = legal.iter().filter(|m| !expected.contains(m)).collect();
        let missing: Vec<_> = expected.iter().filter(|m| !legal.contains(m)).collect();
        errors.push(format!(
            "{fen}: legal moves differ: extra {extra:?}, missing {missing:?}"
        ));
    }
    let mut noisy = atomic_chess::MoveList::new();
    pos.noisy_moves_into(&mut noisy);
    let expected_noisy: Vec<_> = pos
        .legal_moves()
        .into_iter()
        .filter(|m| m.is_capture() || m.promotion().is_some())
        .collect();
    if noisy.as_slice() != expected_noisy.as_slice() {
        errors.push(format!("{fen}: noisy moves {noisy:?}"));
    }
    if pos.has_legal_moves() == legal.is_empty() {
        errors.push(format!("{fen}: has_legal_moves {}", pos.has_legal_moves()));
    }
    if pos.is_check() != v["check"].as_bool().expect("check") {
        errors.push(format!("{fen}: check flag {}", pos.is_check()));
    }
    let outcome = outcome_json(pos.outcome());
    if outcome != v["outcome"] {
        errors.push(format!(
            "{fen}: outcome {outcome} expected {}",
            v["outcome"]
        ));
    }
    let after: BTreeMap<String, String> = v["after"]
        .as_object()
        .expect("after")
        .iter()
        .map(|(k, f)| (k.clone(), f.as_str().expect("after fen").to_owned()))
        .collect();
    for (uci, want) in &after {
        match pos.parse_uci(uci) {
            Ok(m) => {
                let next = pos.play(m).expect("parsed move is legal");
                if &next.to_fen() != want {
                    errors.push(format!(
                        "{fen} {uci}: after {} expected {want}",
                        next.to_fen()
                    ));
                }
                if next.zobrist() != next.compute_zobrist() {
                    errors.push(format!("{fen} {uci}: incremental zobrist differs"));
                }
            }
            Err(e) => errors.push(format!("{fen} {uci}: {e}")),
        }
    }
    errors
}

#[test]
fn positions_agree_with_lichess() {
    let data = include_str!("data/positions.jsonl");
    let mut errors = Vec::new();
    let mut count = 0;
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).expect("valid JSON line");
        errors.extend(check_position(&v));
        count += 1;
    }
    assert_eq!(count, 3000);
    assert!(
        errors.is_empty(),
        "{} mismatches, first 30:\n{}",
        errors.len(),
        errors
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
