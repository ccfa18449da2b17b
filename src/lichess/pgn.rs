//! PGN of a finished game (headers as lichess writes them, moves in SAN), and appending it to
//! the configured folder.

use std::io::Write;
use std::path::Path;

use atomic_chess::{Game, Move, Position, Role};

use crate::lichess::model::{GameFull, GameState};

/// Standard Algebraic Notation of a legal move `m` in `pos` (`#` when it ends the game with a
/// winner: mate or an exploded king, `+` for check).
pub fn san(pos: &Position, m: Move) -> String {
    let mut s = String::new();
    if m.is_castle() {
        s.push_str(if m.to().file() > m.from().file() {
            "O-O"
        } else {
            "O-O-O"
        });
    } else {
        let sq = |q: atomic_chess::Square| q.to_string();
        if m.role() == Role::Pawn {
            if m.is_capture() {
                s.push(char::from(b'a' + m.from().file()));
                s.push('x');
            }
            s.push_str(&sq(m.to()));
            if let Some(p) = m.promotion() {
                s.push('=');
                s.push(p.char().to_ascii_uppercase());
            }
        } else {
            s.push(m.role().char().to_ascii_uppercase());
            let others: Vec<Move> = pos
                .legal_moves()
                .iter()
                .copied()
                .filter(|o| {
                    o.role() == m.role()
                        && o.to() == m.to()
                        && o.from() != m.from()
                        && !o.is_castle()
                })
                .collect();
            if !others.is_empty() {
                let file_unique = others.iter().all(|o| o.from().file() != m.from().file());
                let rank_unique = others.iter().all(|o| o.from().rank() != m.from().rank());
                let from = sq(m.from());
                if file_unique {
                    s.push_str(&from[..1]);
                } else if rank_unique {
                    s.push_str(&from[1..]);
                } else {
                    s.push_str(&from);
                }
            }
            if m.is_capture() {
                s.push('x');
            }
            s.push_str(&sq(m.to()));
        }
    }
    if let Ok(next) = pos.play(m) {
        match next.outcome() {
            Some(o) if o.winner.is_some() => s.push('#'),
            _ if next.is_check() => s.push('+'),
            _ => {}
        }
    }
    s
}

/// PGN result token of a final state.
pub fn result_token(state: &GameState) -> &'static str {
    match (state.winner.as_deref(), state.status.as_str()) {
        (Some("white"), _) => "1-0",
        (Some("black"), _) => "0-1",
        (_, "aborted" | "started" | "created" | "") => "*",
        _ => "1/2-1/2",
    }
}

fn termination(status: &str) -> &'static str {
    match status {
        "mate" | "resign" | "stalemate" | "draw" | "variantEnd" | "insufficientMaterialClaim" => {
            "Normal"
        }
        "outoftime" => "Time forfeit",
        "timeout" | "noStart" | "aborted" => "Abandoned",
        "cheat" => "Rules infraction",
        _ => "Unterminated",
    }
}

/// `yyyy.mm.dd` (UTC) of epoch milliseconds.
pub fn pgn_date(epoch_ms: i64) -> String {
    // Howard Hinnant's civil_from_days.
    let z = epoch_ms.div_euclid(86_400_000) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}.{m:02}.{d:02}")
}

fn header_value(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The PGN of a game: headers from the `gameFull`, moves replayed from the final state
/// (a move the rules reject ends the move text, so the PGN is never wrong, only shorter).
pub fn render(site: &str, full: &GameFull, last: &GameState) -> String {
    let mut out = String::new();
    let mut h = |k: &str, v: &str| {
        out.push_str(&format!("[{k} \"{}\"]\n", header_value(v)));
    };
    let mode = if full.rated { "Rated" } else { "Casual" };
    h("Event", &format!("{mode} Atomic game"));
    h(
        "Site",
        &format!("{}/{}", site.trim_end_matches('/'), full.id),
    );
    h("Date", &pgn_date(full.created_at));
    h("White", &full.white.display());
    h("Black", &full.black.display());
    let result = result_token(last);
    h("Result", result);
    h("Variant", "Atomic");
    let tc = match full.clock {
        Some(c) => format!("{}+{}", c.initial / 1000, c.increment / 1000),
        None => "-".into(),
    };
    h("TimeControl", &tc);
    h("Termination", termination(&last.status));
    let custom = !(full.initial_fen.is_empty() || full.initial_fen == "startpos");
    if custom {
        // Without them the moves of a game from a position cannot be replayed.
        h("FEN", &full.initial_fen);
        h("SetUp", "1");
    }
    out.push('\n');
    let start = if custom {
        Position::from_fen(&full.initial_fen).unwrap_or_default()
    } else {
        Position::startpos()
    };
    let mut game = Game::new(start);
    let mut line = String::new();
    for (i, uci) in last.move_list().into_iter().enumerate() {
        let pos = *game.position();
        let Ok(m) = pos.parse_uci(uci) else { break };
        // Numbered from the start position (a FEN may start at any move, black to move).
        if pos.turn() == atomic_chess::Color::White {
            line.push_str(&format!("{}. ", pos.fullmove_number()));
        } else if i == 0 {
            line.push_str(&format!("{}... ", pos.fullmove_number()));
        }
        line.push_str(&san(&pos, m));
        line.push(' ');
        if game.play(m).is_err() {
            break;
        }
    }
    line.push_str(result);
    // Wrap at 80 columns as PGN export format asks.
    let mut col = 0;
    for word in line.split(' ') {
        if col > 0 && col + 1 + word.len() > 80 {
            out.push('\n');
            col = 0;
        } else if col > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += word.len();
    }
    out.push_str("\n\n");
    out
}

/// Appends a PGN to `<dir>/atomic-bot.pgn`, creating the folder if needed.
pub fn append(dir: &Path, pgn: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("atomic-bot.pgn"))?;
    f.write_all(pgn.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lichess::model::{Clock, Player};

    #[test]
    fn dates() {
        assert_eq!(pgn_date(0), "1970.01.01");
        assert_eq!(pgn_date(1_785_412_800_000), "2026.07.30");
    }

    #[test]
    fn san_and_render() {
        let full = GameFull {
            id: "abcd1234".into(),
            rated: true,
            created_at: 1_785_412_800_000,
            clock: Some(Clock {
                initial: 180_000,
                increment: 2_000,
            }),
            white: Player {
                name: Some("W".into()),
                ..Player::default()
            },
            black: Player {
                name: Some("B".into()),
                ..Player::default()
            },
            initial_fen: "startpos".into(),
            ..GameFull::default()
        };
        let last = GameState {
            moves: "g1f3 a7a6 f3g5 a6a5 g5f7".into(),
            status: "variantEnd".into(),
            winner: Some("white".into()),
            ..GameState::default()
        };
        let pgn = render("https://lichess.org", &full, &last);
        assert!(pgn.contains("[Result \"1-0\"]"), "{pgn}");
        assert!(pgn.contains("[TimeControl \"180+2\"]"), "{pgn}");
        assert!(pgn.contains("[Variant \"Atomic\"]"), "{pgn}");
        assert!(pgn.contains("[Termination \"Normal\"]"), "{pgn}");
        assert!(pgn.contains("1. Nf3 a6 2. Ng5 a5 3. Nxf7# 1-0"), "{pgn}");
    }

    #[test]
    fn castling_san_from_both_spellings() {
        let game = Game::from_uci_moves(
            Position::startpos(),
            &["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"],
        )
        .unwrap();
        let pos = *game.position();
        assert_eq!(san(&pos, pos.parse_uci("e1h1").unwrap()), "O-O");
        assert_eq!(san(&pos, pos.parse_uci("e1g1").unwrap()), "O-O");
    }
}
