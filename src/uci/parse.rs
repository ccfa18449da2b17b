//! Parsing UCI commands: pure functions from a line of text to a [`Command`].
//!
//! Bad input never panics: a malformed command becomes an error message that the front prints
//! as `info string error: ...`, and the engine's state stays as it was.

use std::time::Duration;

/// The parameters of `go`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Go {
    /// White's clock.
    pub wtime: Option<Duration>,
    /// Black's clock.
    pub btime: Option<Duration>,
    /// White's increment.
    pub winc: Option<Duration>,
    /// Black's increment.
    pub binc: Option<Duration>,
    /// Moves to the next time control.
    pub movestogo: Option<u32>,
    /// Fixed time for this move.
    pub movetime: Option<Duration>,
    /// Playout limit.
    pub nodes: Option<u64>,
    /// Depth limit (average playout depth).
    pub depth: Option<u32>,
    /// Stop once a mate in this many moves is found.
    pub mate: Option<u32>,
    /// Search until `stop`.
    pub infinite: bool,
    /// Search on the opponent's time until `ponderhit` or `stop`.
    pub ponder: bool,
    /// Search only these moves (UCI notation, as given; checked against the position when
    /// the search starts).
    pub searchmoves: Vec<String>,
}

/// The parameters `go` knows: a move list after `searchmoves` ends at the next of these.
const GO_KEYWORDS: &[&str] = &[
    "perft",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "movetime",
    "nodes",
    "depth",
    "mate",
    "infinite",
    "ponder",
    "searchmoves",
];

/// One UCI command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `uci`
    Uci,
    /// `isready`
    IsReady,
    /// `ucinewgame`
    NewGame,
    /// `setoption name <name> [value <value>]`
    SetOption {
        /// Option name (may contain spaces).
        name: String,
        /// Value, absent for buttons.
        value: Option<String>,
    },
    /// `position startpos|fen <fen> [moves ...]`
    Position {
        /// `None` for `startpos`.
        fen: Option<String>,
        /// Moves in UCI notation.
        moves: Vec<String>,
    },
    /// `go ...`
    Go(Go),
    /// `go perft N`
    Perft(u32),
    /// `stop`
    Stop,
    /// `ponderhit`
    PonderHit,
    /// `quit`
    Quit,
    /// `d`: print the board and its FEN.
    Display,
    /// `bench`
    Bench,
    /// An empty line (ignored).
    Empty,
}

/// Parses one line. `Err` carries a message naming the problem.
pub fn parse_command(line: &str) -> Result<Command, String> {
    let mut tokens = line.split_whitespace();
    let Some(head) = tokens.next() else {
        return Ok(Command::Empty);
    };
    let rest: Vec<&str> = tokens.collect();
    match head {
        "uci" => Ok(Command::Uci),
        "isready" => Ok(Command::IsReady),
        "ucinewgame" => Ok(Command::NewGame),
        "setoption" => parse_setoption(&rest),
        "position" => parse_position(&rest),
        "go" => parse_go(&rest),
        "stop" => Ok(Command::Stop),
        "ponderhit" => Ok(Command::PonderHit),
        "quit" => Ok(Command::Quit),
        "d" => Ok(Command::Display),
        "bench" => Ok(Command::Bench),
        other => Err(format!("unknown command '{other}'")),
    }
}

fn parse_setoption(tokens: &[&str]) -> Result<Command, String> {
    if tokens.first() != Some(&"name") {
        return Err("setoption: expected 'name'".to_string());
    }
    let value_at = tokens.iter().position(|&t| t == "value");
    let name_end = value_at.unwrap_or(tokens.len());
    let name = tokens[1..name_end].join(" ");
    if name.is_empty() {
        return Err("setoption: empty option name".to_string());
    }
    let value = value_at.map(|i| tokens[i + 1..].join(" "));
    Ok(Command::SetOption { name, value })
}

fn parse_position(tokens: &[&str]) -> Result<Command, String> {
    let moves_at = tokens.iter().position(|&t| t == "moves");
    let setup = &tokens[..moves_at.unwrap_or(tokens.len())];
    let moves = moves_at
        .map(|i| tokens[i + 1..].iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    let fen = match setup.first() {
        Some(&"startpos") if setup.len() == 1 => None,
        Some(&"startpos") => {
            return Err(format!(
                "position: unexpected '{}' after startpos",
                setup[1]
            ));
        }
        Some(&"fen") if setup.len() > 1 => Some(setup[1..].join(" ")),
        Some(&"fen") => return Err("position: missing FEN after 'fen'".to_string()),
        Some(other) => {
            return Err(format!(
                "position: expected 'startpos' or 'fen', got '{other}'"
            ));
        }
        None => return Err("position: expected 'startpos' or 'fen'".to_string()),
    };
    Ok(Command::Position { fen, moves })
}

fn parse_go(tokens: &[&str]) -> Result<Command, String> {
    let mut go = Go::default();
    let mut i = 0;
    while i < tokens.len() {
        let key = tokens[i];
        let arg = tokens.get(i + 1).copied();
        let mut takes_arg = true;
        match key {
            "perft" => {
                let depth = number::<u32>(key, arg)?;
                return Ok(Command::Perft(depth));
            }
            "wtime" => go.wtime = Some(millis(key, arg)?),
            "btime" => go.btime = Some(millis(key, arg)?),
            "winc" => go.winc = Some(millis(key, arg)?),
            "binc" => go.binc = Some(millis(key, arg)?),
            "movestogo" => go.movestogo = Some(number(key, arg)?),
            "movetime" => go.movetime = Some(millis(key, arg)?),
            "nodes" => go.nodes = Some(number(key, arg)?),
            "depth" => go.depth = Some(number(key, arg)?),
            "mate" => go.mate = Some(number(key, arg)?),
            "infinite" => {
                go.infinite = true;
                takes_arg = false;
            }
            "ponder" => {
                go.ponder = true;
                takes_arg = false;
            }
            "searchmoves" => {
                let moves: Vec<String> = tokens[i + 1..]
                    .iter()
                    .take_while(|t| !GO_KEYWORDS.contains(t))
                    .map(|t| (*t).to_string())
                    .collect();
                i += 1 + moves.len();
                go.searchmoves.extend(moves);
                continue;
            }
            other => return Err(format!("go: unknown parameter '{other}'")),
        }
        i += if takes_arg { 2 } else { 1 };
    }
    Ok(Command::Go(go))
}

fn number<T: std::str::FromStr>(key: &str, arg: Option<&str>) -> Result<T, String> {
    let arg = arg.ok_or_else(|| format!("go: missing value after '{key}'"))?;
    arg.parse()
        .map_err(|_| format!("go: bad value '{arg}' for '{key}'"))
}

/// Clock values may be negative (some GUIs send the clock after a flag); they count as zero.
fn millis(key: &str, arg: Option<&str>) -> Result<Duration, String> {
    let ms: i64 = number(key, arg)?;
    Ok(Duration::from_millis(ms.max(0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Option<Duration> {
        Some(Duration::from_millis(v))
    }

    #[test]
    fn simple_commands() {
        assert_eq!(parse_command("uci"), Ok(Command::Uci));
        assert_eq!(parse_command("  isready  "), Ok(Command::IsReady));
        assert_eq!(parse_command("ucinewgame"), Ok(Command::NewGame));
        assert_eq!(parse_command("stop"), Ok(Command::Stop));
        assert_eq!(parse_command("ponderhit"), Ok(Command::PonderHit));
        assert_eq!(parse_command("quit"), Ok(Command::Quit));
        assert_eq!(parse_command("d"), Ok(Command::Display));
        assert_eq!(parse_command(""), Ok(Command::Empty));
        assert_eq!(parse_command("   \t"), Ok(Command::Empty));
        assert!(
            parse_command("frobnicate")
                .unwrap_err()
                .contains("frobnicate")
        );
    }

    #[test]
    fn position_startpos_and_fen() {
        assert_eq!(
            parse_command("position startpos moves e2e4 e7e5"),
            Ok(Command::Position {
                fen: None,
                moves: vec!["e2e4".into(), "e7e5".into()]
            })
        );
        assert_eq!(
            parse_command("position startpos"),
            Ok(Command::Position {
                fen: None,
                moves: vec![]
            })
        );
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        assert_eq!(
            parse_command(&format!("position fen {fen} moves e7e5")),
            Ok(Command::Position {
                fen: Some(fen.into()),
                moves: vec!["e7e5".into()]
            })
        );
        assert_eq!(
            parse_command(&format!("position fen {fen}")),
            Ok(Command::Position {
                fen: Some(fen.into()),
                moves: vec![]
            })
        );
        assert!(parse_command("position").is_err());
        assert!(parse_command("position fen").is_err());
        assert!(parse_command("position banana").is_err());
        assert!(parse_command("position startpos e2e4").is_err());
    }

    #[test]
    fn go_with_clocks() {
        let cmd =
            parse_command("go wtime 60000 btime 59000 winc 100 binc 200 movestogo 30").unwrap();
        assert_eq!(
            cmd,
            Command::Go(Go {
                wtime: ms(60000),
                btime: ms(59000),
                winc: ms(100),
                binc: ms(200),
                movestogo: Some(30),
                ..Go::default()
            })
        );
    }

    #[test]
    fn go_limits_and_flags() {
        assert_eq!(
            parse_command("go movetime 250"),
            Ok(Command::Go(Go {
                movetime: ms(250),
                ..Go::default()
            }))
        );
        assert_eq!(
            parse_command("go nodes 1000"),
            Ok(Command::Go(Go {
                nodes: Some(1000),
                ..Go::default()
            }))
        );
        assert_eq!(
            parse_command("go depth 7 mate 3"),
            Ok(Command::Go(Go {
                depth: Some(7),
                mate: Some(3),
                ..Go::default()
            }))
        );
        assert_eq!(
            parse_command("go infinite"),
            Ok(Command::Go(Go {
                infinite: true,
                ..Go::default()
            }))
        );
        assert_eq!(
            parse_command("go ponder wtime 1000 btime 1000"),
            Ok(Command::Go(Go {
                ponder: true,
                wtime: ms(1000),
                btime: ms(1000),
                ..Go::default()
            }))
        );
        assert_eq!(parse_command("go"), Ok(Command::Go(Go::default())));
    }

    #[test]
    fn go_searchmoves_takes_the_moves_up_to_the_next_parameter() {
        let moves = |list: &[&str]| list.iter().map(|m| (*m).to_string()).collect();
        assert_eq!(
            parse_command("go searchmoves e2e4 d2d4 nodes 500"),
            Ok(Command::Go(Go {
                searchmoves: moves(&["e2e4", "d2d4"]),
                nodes: Some(500),
                ..Go::default()
            }))
        );
        assert_eq!(
            parse_command("go wtime 900 searchmoves g1f3 searchmoves e7e8q"),
            Ok(Command::Go(Go {
                wtime: ms(900),
                searchmoves: moves(&["g1f3", "e7e8q"]),
                ..Go::default()
            }))
        );
        assert_eq!(
            parse_command("go searchmoves infinite"),
            Ok(Command::Go(Go {
                infinite: true,
                ..Go::default()
            }))
        );
    }

    #[test]
    fn go_perft() {
        assert_eq!(parse_command("go perft 4"), Ok(Command::Perft(4)));
        assert!(parse_command("go perft").is_err());
        assert!(parse_command("go perft x").is_err());
    }

    #[test]
    fn go_errors_and_negative_clocks() {
        assert!(parse_command("go wtime").is_err());
        assert!(parse_command("go wtime abc").is_err());
        assert!(parse_command("go nodes -5").is_err());
        assert!(parse_command("go sideways 3").is_err());
        assert_eq!(
            parse_command("go wtime -300 btime 10"),
            Ok(Command::Go(Go {
                wtime: ms(0),
                btime: ms(10),
                ..Go::default()
            }))
        );
    }

    #[test]
    fn setoption() {
        assert_eq!(
            parse_command("setoption name Move Overhead value 300"),
            Ok(Command::SetOption {
                name: "Move Overhead".into(),
                value: Some("300".into())
            })
        );
        assert_eq!(
            parse_command("setoption name Clear Hash"),
            Ok(Command::SetOption {
                name: "Clear Hash".into(),
                value: None
            })
        );
        assert_eq!(
            parse_command("setoption name UCI_Variant value atomic"),
            Ok(Command::SetOption {
                name: "UCI_Variant".into(),
                value: Some("atomic".into())
            })
        );
        assert!(parse_command("setoption").is_err());
        assert!(parse_command("setoption name").is_err());
        assert!(parse_command("setoption value 3").is_err());
    }
}
