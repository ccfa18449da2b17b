//! Differential and property tests.
//!
//! * Random walks against shakmaty (GPL, a dev-dependency only) from the start
//!   position and from every FEN of the perft and positions files: legal move sets,
//!   check, the FEN after every move and the decisive/stalemate outcomes agree at
//!   every ply. Insufficient material is not compared: lichess's rule (ours) differs
//!   from shakmaty's by design.
//! * Along the same walks: incremental Zobrist equals from-scratch, the FEN round trip
//!   is exact, and UCI parsing accepts exactly the generated moves (all 64x64
//!   from/to pairs with and without promotion suffixes).
//! * No input string makes FEN or UCI parsing panic.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use atomic_chess::{Move, Position, Termination};
use proptest::prelude::*;
use shakmaty::fen::Fen;
use shakmaty::variant::Atomic;
use shakmaty::{CastlingMode, EnPassantMode, Position as _};

/// Start FENs: the start position, every perft.txt FEN and the positions.jsonl FENs
/// with both kings present.
fn start_fens() -> &'static [String] {
    static FENS: OnceLock<Vec<String>> = OnceLock::new();
    FENS.get_or_init(|| {
        let mut fens: Vec<String> = vec![Position::startpos().to_fen()];
        let perft = include_str!("data/perft.txt");
        for line in perft
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let fen = line.split(';').next().unwrap_or("").to_owned();
            if !fens.contains(&fen) {
                fens.push(fen);
            }
        }
        let positions = include_str!("data/positions.jsonl");
        for line in positions.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("json");
            let fen = v["fen"].as_str().expect("fen").to_owned();
            if v["legal"].as_array().is_some_and(|a| !a.is_empty()) {
                fens.push(fen);
            }
        }
        fens
    })
}

/// The number of proptest cases: `default`, or `ORACLE_CASES_SCALE` times it
/// (e.g. `ORACLE_CASES_SCALE=50` for a long local soak).
fn cases(default: u32) -> u32 {
    let scale = std::env::var("ORACLE_CASES_SCALE")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or(1);
    default.saturating_mul(scale.max(1))
}

#[test]
fn shakmaty_accepts_the_start_fens() {
    let fens = start_fens();
    let accepted = fens.iter().filter(|f| shakmaty_pos(f).is_some()).count();
    assert!(
        accepted * 100 >= fens.len() * 95,
        "{accepted} of {}",
        fens.len()
    );
}

fn shakmaty_pos(fen: &str) -> Option<Atomic> {
    fen.parse::<Fen>()
        .ok()?
        .into_position(CastlingMode::Standard)
        .ok()
}

fn shakmaty_moves(pos: &Atomic) -> BTreeSet<String> {
    pos.legal_moves()
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect()
}

fn our_moves(pos: &Position) -> BTreeSet<String> {
    pos.legal_moves().iter().map(Move::to_string).collect()
}

/// Every UCI string `parse_uci` accepts, in canonical spelling, must be generated, and
/// every generated move must be accepted in its own spelling and by checked `play`.
fn check_uci_acceptance(pos: &Position) -> Result<(), TestCaseError> {
    let legal = pos.legal_moves();
    for m in &legal {
        prop_assert_eq!(pos.parse_uci(&m.to_string()).ok(), Some(*m));
        prop_assert!(pos.play(*m).is_ok());
    }
    let mut accepted = 0usize;
    for from in atomic_chess::Square::ALL {
        for to in atomic_chess::Square::ALL {
            for suffix in ["", "q", "r", "b", "n", "k"] {
                let uci = format!("{from}{to}{suffix}");
                if let Ok(m) = pos.parse_uci(&uci) {
                    prop_assert!(
                        legal.contains(&m),
                        "{} accepted {} but not generated",
                        pos.to_fen(),
                        uci
                    );
                    if m.to_string() == uci {
                        accepted += 1;
                    }
                }
            }
        }
    }
    prop_assert_eq!(accepted, legal.len());
    Ok(())
}

fn walk(start: usize, choices: &[u32], exhaustive_uci: bool) -> Result<(), TestCaseError> {
    let fens = start_fens();
    let fen = &fens[start % fens.len()];
    let mut ours = Position::from_fen(fen).expect("start FEN parses");
    let Some(mut theirs) = shakmaty_pos(fen) else {
        return Ok(()); // shakmaty rejects a few hand-made set-ups; nothing to compare
    };
    for &choice in choices {
        let fen_now = ours.to_fen();
        prop_assert_eq!(
            &fen_now,
            &Fen::from_position(&theirs, EnPassantMode::Legal).to_string()
        );
        prop_assert_eq!(
            Position::from_fen(&fen_now).ok(),
            Some(ours),
            "FEN round trip"
        );
        prop_assert_eq!(ours.zobrist(), ours.compute_zobrist());
        let moves = our_moves(&ours);
        prop_assert_eq!(
            &moves,
            &shakmaty_moves(&theirs),
            "legal moves of {}",
            fen_now
        );
        prop_assert_eq!(ours.is_check(), theirs.is_check(), "check in {}", fen_now);

        let outcome = ours.outcome();
        let term = outcome.map(|o| o.termination);
        let winner = outcome.and_then(|o| o.winner);
        match term {
            Some(Termination::Checkmate) => prop_assert!(theirs.is_checkmate()),
            Some(Termination::KingExploded) => prop_assert!(theirs.is_variant_end()),
            Some(Termination::Stalemate) => prop_assert!(theirs.is_stalemate()),
            _ => {}
        }
        if matches!(
            term,
            Some(Termination::Checkmate | Termination::KingExploded)
        ) {
            let theirs_winner = theirs
                .outcome()
                .known()
                .and_then(shakmaty::KnownOutcome::winner);
            prop_assert_eq!(
                winner.map(|c| c == atomic_chess::Color::White),
                theirs_winner.map(|c| c == shakmaty::Color::White)
            );
        }
        prop_assert_eq!(theirs.is_checkmate(), term == Some(Termination::Checkmate));
        prop_assert_eq!(
            theirs.is_variant_end(),
            term == Some(Termination::KingExploded)
        );
        prop_assert_eq!(theirs.is_stalemate(), term == Some(Termination::Stalemate));

        if exhaustive_uci {
            check_uci_acceptance(&ours)?;
        }
        let legal = ours.legal_moves();
        prop_assert_eq!(ours.has_legal_moves(), !legal.is_empty());
        let mut noisy = atomic_chess::MoveList::new();
        ours.noisy_moves_into(&mut noisy);
        let expected_noisy: Vec<_> = legal
            .iter()
            .copied()
            .filter(|m| m.is_capture() || m.promotion().is_some())
            .collect();
        prop_assert_eq!(noisy.as_slice(), expected_noisy.as_slice());
        if legal.is_empty() {
            break;
        }
        let m = legal[choice as usize % legal.len()];
        let uci = m.to_string();
        let sm = theirs
            .legal_moves()
            .into_iter()
            .find(|sm| sm.to_uci(CastlingMode::Standard).to_string() == uci)
            .expect("same move sets");
        ours = ours.play(m).expect("generated move is legal");
        theirs.play_unchecked(sm);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(400), ..ProptestConfig::default() })]

    #[test]
    fn random_walks_agree_with_shakmaty(start in any::<usize>(), choices in prop::collection::vec(any::<u32>(), 1..120)) {
        walk(start, &choices, false)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(24), ..ProptestConfig::default() })]

    #[test]
    fn uci_accepts_exactly_the_generated_moves(start in any::<usize>(), choices in prop::collection::vec(any::<u32>(), 1..30)) {
        walk(start, &choices, true)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_fen_never_panics(s in ".{0,120}") {
        let _ = Position::from_fen(&s);
    }

    #[test]
    fn fen_like_strings_never_panic(s in "[pnbrqkPNBRQK0-9/ wb\\-a-h]{0,90}") {
        if let Ok(pos) = Position::from_fen(&s) {
            // Whatever parses must be usable and round-trip.
            let _ = pos.outcome();
            prop_assert_eq!(Position::from_fen(&pos.to_fen()).ok(), Some(pos));
        }
    }

    #[test]
    fn mutated_fens_never_panic(start in any::<usize>(), at in any::<usize>(), c in "[pnbrqkPNBRQK0-9/ wb\\-a-h]") {
        let fens = start_fens();
        let mut fen: Vec<char> = fens[start % fens.len()].chars().collect();
        let i = at % fen.len();
        fen[i] = c.chars().next().unwrap_or('x');
        let fen: String = fen.into_iter().collect();
        if let Ok(pos) = Position::from_fen(&fen) {
            let _ = pos.outcome();
            prop_assert_eq!(pos.zobrist(), pos.compute_zobrist());
            prop_assert_eq!(Position::from_fen(&pos.to_fen()).ok(), Some(pos));
            for m in pos.legal_moves() {
                let next = pos.play(m).expect("generated move is legal");
                prop_assert_eq!(next.zobrist(), next.compute_zobrist());
            }
        }
    }

    #[test]
    fn arbitrary_uci_never_panics(start in any::<usize>(), s in ".{0,8}", t in "[a-i0-9qrbnkQ]{0,6}") {
        let fens = start_fens();
        let pos = Position::from_fen(&fens[start % fens.len()]).expect("start FEN");
        let _ = pos.parse_uci(&s);
        if let Ok(m) = pos.parse_uci(&t) {
            prop_assert!(pos.is_legal(m));
        }
    }
}

/// Perft of every data FEN against shakmaty at depth `ORACLE_PERFT_DEPTH` (default 3;
/// 1 s in release; 4 passed in 30 s). On demand only:
/// `cargo test --release -p atomic-chess --test oracle -- --ignored`.
#[test]
#[ignore = "slow in debug builds; run in release"]
fn deep_perft_of_every_data_fen_agrees_with_shakmaty() {
    let depth = std::env::var("ORACLE_PERFT_DEPTH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    for fen in start_fens() {
        let Some(theirs) = shakmaty_pos(fen) else {
            continue;
        };
        let ours = Position::from_fen(fen).expect("FEN");
        assert_eq!(
            atomic_chess::perft(&ours, depth),
            shakmaty::perft(&theirs, depth),
            "{fen}"
        );
    }
}
