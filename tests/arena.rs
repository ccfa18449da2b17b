//! `atomic-bot arena` end to end, through the binary: the bot (its real search, a small Hash)
//! against our own UCI engine as an external process, on the local server's clock with lag.

use std::process::Command;

use atomic_bot::lichess::pgn::san;
use atomic_chess::Position;

const BIN: &str = env!("CARGO_BIN_EXE_atomic-bot");

/// The value after `prefix` on the line that starts with it.
fn line_after<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{out}"))
}

/// Replays every game of a PGN from its FEN header; each SAN must name exactly one legal move.
/// Returns the number of games and of moves.
fn replay_pgn(pgn: &str) -> (usize, usize) {
    let mut games = 0;
    let mut moves = 0;
    for block in pgn.split("[Event ").skip(1) {
        games += 1;
        let fen = block
            .lines()
            .find_map(|l| l.strip_prefix("[FEN \"")?.strip_suffix("\"]"))
            .unwrap_or_else(|| panic!("a game without its FEN:\n{block}"));
        let mut pos = Position::from_fen(fen).expect("the FEN header parses");
        let (_headers, text) = block
            .split_once("\n\n")
            .unwrap_or_else(|| panic!("no move text:\n{block}"));
        for token in text.split_ascii_whitespace() {
            if token.ends_with('.') || ["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
                continue;
            }
            let matching: Vec<_> = pos
                .legal_moves()
                .iter()
                .copied()
                .filter(|&m| san(&pos, m) == token)
                .collect();
            assert_eq!(
                matching.len(),
                1,
                "{token} is not one legal move in {}",
                pos.to_fen()
            );
            pos = pos.play(matching[0]).expect("a legal move plays");
            moves += 1;
        }
    }
    (games, moves)
}

#[test]
fn arena_plays_every_game_to_a_result_with_legal_moves_and_no_bot_flag() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bot.toml");
    std::fs::write(&config, "[search]\nhash_mb = 16\n").unwrap();
    let pgn = dir.path().join("games.pgn");
    let engine = format!("{BIN} uci");
    let out = Command::new(BIN)
        .args(["arena", "--engine", &engine])
        // A fast opponent: it keeps most of its clock out of its plan.
        .args(["--option", "Move Overhead=5000", "--option", "Hash=8"])
        .args(["--games", "2", "--concurrency", "2", "--clock", "0.5+0"])
        .args(["--lag-ms", "40", "--seed", "3"])
        .arg("--config")
        .arg(&config)
        .arg("--pgn")
        .arg(&pgn)
        .env_remove("ATOMIC_BOT_CONFIG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert_eq!(
        line_after(&stdout, "Games: "),
        "2 of 2 played (0 without a result)"
    );
    let wdl = line_after(&stdout, "Bot W/D/L: ");
    let sum: u32 = wdl
        .split_ascii_whitespace()
        .next()
        .unwrap()
        .split('/')
        .map(|n| n.parse::<u32>().unwrap())
        .sum();
    assert_eq!(sum, 2, "{wdl}");
    assert!(
        line_after(&stdout, "Time forfeits: ").starts_with("bot 0,"),
        "{stdout}"
    );
    assert!(
        line_after(&stdout, "Illegal moves: ").starts_with("bot 0 rejected"),
        "{stdout}"
    );
    assert!(stdout.contains("Elo: "), "{stdout}");
    // Response times were measured for the bot's moves.
    let response = line_after(&stdout, "Bot response (state received -> move sent, ");
    assert!(!response.starts_with("0 moves"), "{stdout}");
    assert!(stdout.contains("Peak RSS (VmHWM): "), "{stdout}");
    let text = std::fs::read_to_string(&pgn).unwrap();
    let (games, moves) = replay_pgn(&text);
    assert_eq!(games, 2, "{text}");
    assert!(moves >= 2, "{text}");
    // Colours alternate: the bot is White in one game and Black in the other.
    assert_eq!(text.matches("[White \"AtomicBot\"]").count(), 1, "{text}");
    assert_eq!(text.matches("[Black \"AtomicBot\"]").count(), 1, "{text}");
}

#[test]
fn a_bad_engine_command_is_a_clear_setup_error() {
    let out = Command::new(BIN)
        .args(["arena", "--engine", "/nonexistent/fairy-stockfish --x"])
        .args(["--games", "1", "--clock", "1+0"])
        .env_remove("ATOMIC_BOT_CONFIG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("cannot start the engine `/nonexistent/fairy-stockfish --x`"),
        "{stderr}"
    );
}

#[test]
fn an_engine_that_is_not_atomic_is_refused() {
    let script = "read l; echo 'id name Plain'; echo uciok; sleep 5";
    let out = Command::new(BIN)
        .args(["arena", "--engine", &format!("sh -c \"{script}\"")])
        .args(["--games", "1", "--clock", "1+0"])
        .env_remove("ATOMIC_BOT_CONFIG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("UCI_Variant"), "{stderr}");
}

#[test]
fn an_ultrabullet_clock_is_refused() {
    let out = Command::new(BIN)
        .args(["arena", "--engine", "x", "--clock", "0.25+0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("UltraBullet"));
}

#[test]
fn an_engine_that_crashes_loses_its_games_and_the_arena_goes_on() {
    // Speaks UCI, then dies on every `go`: each game is lost (aborted before the second ply,
    // as lichess aborts it), the crash is reported, and the engine is restarted for the next.
    let script = "while read l; do case $l in uci) echo 'id name Crashy'; \
        echo 'option name UCI_Variant type combo default atomic var atomic'; echo uciok;; \
        isready) echo readyok;; go*) exit 3;; esac; done";
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bot.toml");
    std::fs::write(&config, "[search]\nhash_mb = 16\n").unwrap();
    let out = Command::new(BIN)
        .args(["arena", "--engine", &format!("sh -c \"{script}\"")])
        .args(["--games", "2", "--clock", "0.5+0", "--lag-ms", "0"])
        .arg("--config")
        .arg(&config)
        .env_remove("ATOMIC_BOT_CONFIG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        line_after(&stdout, "Games: ").starts_with("2 of 2 played"),
        "{stdout}"
    );
    assert!(
        line_after(&stdout, "Illegal moves: ").ends_with("engine crashed or hung: 2"),
        "{stdout}"
    );
    assert!(
        line_after(&stdout, "Bot W/D/L: ").starts_with("0/0/0"),
        "{stdout}"
    );
}
