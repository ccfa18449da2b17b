//! One game of the UCI engine on the local server: it follows the game stream in-process, and
//! on its turn sends the engine `position` and `go` with the server's clocks, then plays the
//! answer through the server as any player's move.
//!
//! Its clock is charged only what the engine thinks (the stream reaches it with no lag and the
//! move is applied in-process). An illegal answer, a crash or a hang loses the game (the arena
//! resigns it for the engine) and is reported; the arena goes on.

use std::time::Duration;

use atomic_chess::{Color, Game, Position};
use tokio::time::Instant;

use crate::arena::engine::{EngineError, GoClocks, UciEngine};
use crate::fakelichess::FakeLichess;
use crate::lichess::model::{GameEvent, GameFull, GameState};

/// Time an engine gets beyond its own clock before it is declared hung (the server flags it
/// first; this only catches an engine that never answers, e.g. before the clocks start).
const HANG_GRACE: Duration = Duration::from_secs(5);
/// How long a stopped search may take to give its `bestmove`.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// The longest the engine may think on its first move (`go ... movetime`), whatever its clock
/// says: lichess aborts a game whose first moves do not come in time (the local server after
/// `first_move_timeout`, 25 s by default), and with several games at once on a loaded machine an
/// engine that plans a long first move from a 3+2 clock was aborted. The bot caps its own first
/// move the same way (`game.first_move_think_ms`, 3 s).
const FIRST_MOVE_CAP_MS: i64 = 3_000;

/// What went wrong on the engine's side in a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineFault {
    /// It answered a move the server rejected (the move as given).
    Illegal(String),
    /// It crashed or stopped answering (the driver must be restarted).
    Failed(String),
}

/// A finished game as the engine's side saw it.
#[derive(Clone, Debug)]
pub struct Played {
    /// The first line of its stream (players, clock, initial position).
    pub full: GameFull,
    /// The final state.
    pub last: GameState,
    /// Set when the engine lost the game by misbehaving.
    pub fault: Option<EngineFault>,
}

/// Plays game `game` as `me` (the engine's account id) with `engine` until the game is over.
/// An error means the game could not be followed at all (no such game).
pub async fn play(
    fake: &FakeLichess,
    game: &str,
    me: &str,
    engine: &mut UciEngine,
) -> Result<Played, String> {
    let mut stream = fake.game_stream(game, me)?;
    let mut full: Option<GameFull> = None;
    let mut fault: Option<EngineFault> = None;
    let mut answered: Option<usize> = None;
    loop {
        let Some(bytes) = stream.recv().await else {
            return Err(format!(
                "the stream of game {game} ended before its final state"
            ));
        };
        let Some(state) = read_state(&bytes, &mut full) else {
            continue;
        };
        let Some(f) = full.as_ref() else { continue };
        if state.is_terminal() {
            return Ok(Played {
                full: f.clone(),
                last: state,
                fault,
            });
        }
        if fault.is_some() {
            continue;
        }
        let plies = state.move_list().len();
        let (position, turn) = match engine_position(f, &state) {
            Ok(p) => p,
            Err(e) => return Err(format!("game {game}: {e}")),
        };
        let ours = if f.white.id.as_deref() == Some(me) {
            Color::White
        } else {
            Color::Black
        };
        if turn != ours || answered == Some(plies) {
            continue;
        }
        answered = Some(plies);
        let clocks = GoClocks {
            wtime: state.wtime,
            btime: state.btime,
            winc: state.winc,
            binc: state.binc,
            movetime: (plies < 2).then_some(FIRST_MOVE_CAP_MS),
        };
        let own = if ours == Color::White {
            state.wtime + state.winc
        } else {
            state.btime + state.binc
        };
        let deadline = Instant::now() + Duration::from_millis(own.max(0) as u64) + HANG_GRACE;
        let answer = match engine.go(&position, clocks) {
            Ok(()) => think(engine, &mut stream, &mut full, deadline).await,
            Err(e) => Answer::Failed(e),
        };
        match answer {
            Answer::Move(mv) => {
                if let Err(e) = fake.play(game, me, &mv) {
                    let over = fake.game(game).is_none_or(|g| g.is_over());
                    if !over {
                        tracing::warn!(game, mv, error = %e, "the engine played an illegal move");
                        fault = Some(EngineFault::Illegal(mv));
                        let _ = fake.resign(game, me);
                    }
                }
            }
            Answer::GameOver(state) => {
                if let Some(f) = full.as_ref() {
                    // A stopped search must still answer: otherwise the engine is hung.
                    let stopped = match engine.stop() {
                        Ok(()) => engine.best_move(Instant::now() + STOP_GRACE).await,
                        Err(e) => Err(e),
                    };
                    let fault = fault.or(stopped.err().map(|e| EngineFault::Failed(e.to_string())));
                    return Ok(Played {
                        full: f.clone(),
                        last: state,
                        fault,
                    });
                }
            }
            Answer::StreamEnded => {
                return Err(format!(
                    "the stream of game {game} ended during the engine's turn"
                ));
            }
            Answer::Failed(e) => {
                tracing::warn!(game, error = %e, "the engine failed");
                fault = Some(EngineFault::Failed(e.to_string()));
                let _ = fake.resign(game, me);
            }
        }
    }
}

enum Answer {
    Move(String),
    GameOver(GameState),
    Failed(EngineError),
    StreamEnded,
}

/// Waits for the engine's move while following the stream (the game may end meanwhile: the
/// engine flagged, or the bot resigned or claimed).
async fn think(
    engine: &mut UciEngine,
    stream: &mut tokio::sync::mpsc::UnboundedReceiver<axum::body::Bytes>,
    full: &mut Option<GameFull>,
    deadline: Instant,
) -> Answer {
    loop {
        tokio::select! {
            best = engine.best_move(deadline) => return match best {
                Ok(mv) => Answer::Move(mv),
                Err(e) => Answer::Failed(e),
            },
            line = stream.recv() => match line {
                Some(bytes) => {
                    if let Some(state) = read_state(&bytes, full)
                        && state.is_terminal()
                    {
                        return Answer::GameOver(state);
                    }
                }
                // The server stopped: nothing more to play for.
                None => return Answer::StreamEnded,
            },
        }
    }
}

/// The state a stream line carries (a `gameFull` is also kept in `full`).
fn read_state(bytes: &[u8], full: &mut Option<GameFull>) -> Option<GameState> {
    let text = std::str::from_utf8(bytes).ok()?.trim();
    if text.is_empty() {
        return None;
    }
    match serde_json::from_str::<GameEvent>(text).ok()? {
        GameEvent::GameFull(f) => {
            let state = f.state.clone();
            *full = Some(*f);
            Some(state)
        }
        GameEvent::GameState(s) => Some(s),
        _ => None,
    }
}

/// The engine's `position` argument for a state (moves in standard UCI: the server writes
/// castling king-takes-rook, which engines outside Chess960 do not read) and the side to move.
pub fn engine_position(full: &GameFull, state: &GameState) -> Result<(String, Color), String> {
    let custom = !(full.initial_fen.is_empty() || full.initial_fen == "startpos");
    let start = if custom {
        Position::from_fen(&full.initial_fen).map_err(|e| format!("bad initialFen: {e}"))?
    } else {
        Position::startpos()
    };
    let mut game = Game::new(start);
    let mut moves = Vec::new();
    for uci in state.move_list() {
        let m = game
            .position()
            .parse_uci(uci)
            .map_err(|e| format!("move {uci}: {e}"))?;
        moves.push(m.to_string());
        game.play(m).map_err(|e| format!("move {uci}: {e}"))?;
    }
    let mut position = if custom {
        format!("fen {}", full.initial_fen)
    } else {
        "startpos".to_owned()
    };
    if !moves.is_empty() {
        position.push_str(" moves ");
        position.push_str(&moves.join(" "));
    }
    Ok((position, game.position().turn()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn castling_reaches_the_engine_in_standard_notation() {
        let full = GameFull {
            initial_fen: "startpos".into(),
            ..GameFull::default()
        };
        let state = GameState {
            moves: "e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1h1".into(),
            ..GameState::default()
        };
        let (position, turn) = engine_position(&full, &state).unwrap();
        assert_eq!(
            position,
            "startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1"
        );
        assert_eq!(turn, Color::Black);
    }

    #[test]
    fn a_game_from_a_fen_is_sent_with_it() {
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let full = GameFull {
            initial_fen: fen.into(),
            ..GameFull::default()
        };
        let (position, turn) = engine_position(&full, &GameState::default()).unwrap();
        assert_eq!(position, format!("fen {fen}"));
        assert_eq!(turn, Color::Black);
        let bad = GameState {
            moves: "e2e4".into(),
            ..GameState::default()
        };
        assert!(engine_position(&full, &bad).is_err());
    }
}
