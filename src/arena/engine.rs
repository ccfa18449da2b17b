//! A UCI engine as an opponent: a child process spoken to over pipes, every wait bounded.
//!
//! The arena must survive any engine: one that cannot start is a setup error naming the
//! command; one that crashes, hangs or answers nonsense during a game loses that game, and the
//! arena restarts it for the next. So every answer is awaited with a deadline, output is read
//! on a thread of its own (a blocking read never holds up the runtime), and the process is
//! killed when the driver is dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

/// How long an engine may take to answer `uci` and `isready`.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Lines of the engine's standard error kept for error messages.
const STDERR_TAIL: usize = 5;

/// What went wrong with an engine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The command could not be run at all.
    #[error("cannot start the engine `{command}`: {reason}")]
    Start {
        /// The command as given.
        command: String,
        /// Why.
        reason: String,
    },
    /// The process ended (or closed its output).
    #[error("the engine `{command}` exited{stderr}")]
    Exited {
        /// The command as given.
        command: String,
        /// The last lines of its standard error, if any (with a leading `: `).
        stderr: String,
    },
    /// No answer in time.
    #[error("the engine `{command}` did not answer `{waiting_for}` within {waited:?}")]
    Timeout {
        /// The command as given.
        command: String,
        /// The answer awaited.
        waiting_for: &'static str,
        /// How long it was awaited.
        waited: Duration,
    },
    /// It cannot play Atomic or refused the configuration.
    #[error("the engine `{command}` {problem}")]
    Unsuitable {
        /// The command as given.
        command: String,
        /// What is wrong.
        problem: String,
    },
}

/// The clocks of a `go` command, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoClocks {
    /// White's time left.
    pub wtime: i64,
    /// Black's time left.
    pub btime: i64,
    /// White's increment.
    pub winc: i64,
    /// Black's increment.
    pub binc: i64,
    /// A limit on this move's think time (`movetime`), beside the clocks: the engine's first
    /// move, which the server aborts the game over if it comes too late.
    pub movetime: Option<i64>,
}

/// The nice value of the engine: that of the bot's search threads (`lichess::game` runs them
/// at 5 so its async runtime is never queued behind them). Both share the arena's cores, and at
/// the default nice 0 the engine would get about three times the bot's CPU whenever the cores
/// are oversubscribed (several games at once), which would bias every result.
#[cfg(target_os = "linux")]
const ENGINE_NICE: libc::c_int = 5;

/// Starts the engine at [`ENGINE_NICE`]: set in the child before it runs the engine, so every
/// thread the engine creates inherits it.
fn at_search_priority(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs in the forked child before exec and only calls
        // setpriority, which is async-signal-safe and touches no memory of ours; a failure
        // (not expected: raising a nice value needs no privilege) leaves the priority as is.
        unsafe {
            cmd.pre_exec(|| {
                libc::setpriority(libc::PRIO_PROCESS, 0, ENGINE_NICE);
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Splits a command line into words: whitespace separates, single and double quotes group
/// (a quote-less backslash escapes the next character). No shell is involved.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                word.push(chars.next().ok_or("the command ends with a backslash")?);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("unclosed quote in the command {line:?}"));
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err("the engine command is empty".into());
    }
    Ok(words)
}

/// A running UCI engine.
pub struct UciEngine {
    command: String,
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::UnboundedReceiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// `id name` of the engine (the command's first word when it gives none).
    pub name: String,
}

impl Drop for UciEngine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl UciEngine {
    /// Starts `command`, checks that it speaks UCI and plays Atomic (`UCI_Variant` with
    /// `atomic`), sets `UCI_Variant atomic` and then `options` (each must be one the engine
    /// offers), and waits until it is ready.
    pub async fn start(command: &str, options: &[(String, String)]) -> Result<Self, EngineError> {
        let start_error = |reason: String| EngineError::Start {
            command: command.to_owned(),
            reason,
        };
        let words = split_command(command).map_err(start_error)?;
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        at_search_priority(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| start_error(e.to_string()))?;
        let (Some(stdin), Some(stdout), Some(stderr_pipe)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(start_error("no pipes to the process".into()));
        };
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("engine-stdout".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| start_error(format!("cannot start a reader thread: {e}")))?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr.clone();
        std::thread::Builder::new()
            .name("engine-stderr".into())
            .spawn(move || {
                for line in BufReader::new(stderr_pipe).lines() {
                    let Ok(line) = line else { break };
                    if let Ok(mut t) = tail.lock() {
                        if t.len() == STDERR_TAIL {
                            t.pop_front();
                        }
                        t.push_back(line);
                    }
                }
            })
            .map_err(|e| start_error(format!("cannot start a reader thread: {e}")))?;
        let mut engine = UciEngine {
            command: command.to_owned(),
            child,
            stdin,
            lines,
            stderr,
            name: words[0].rsplit('/').next().unwrap_or(&words[0]).to_owned(),
        };
        engine.handshake(options).await?;
        Ok(engine)
    }

    async fn handshake(&mut self, options: &[(String, String)]) -> Result<(), EngineError> {
        self.send("uci")?;
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        let mut offered: Vec<String> = Vec::new();
        let mut atomic = false;
        loop {
            let line = self.next_line(deadline, "uciok").await?;
            let line = line.trim();
            if line == "uciok" {
                break;
            }
            if let Some(name) = line.strip_prefix("id name ") {
                self.name = name.trim().to_owned();
            } else if let Some(rest) = line.strip_prefix("option name ") {
                let name = rest.split(" type ").next().unwrap_or(rest).trim();
                if name.eq_ignore_ascii_case("UCI_Variant") {
                    atomic = rest.split_ascii_whitespace().any(|w| w == "atomic");
                }
                offered.push(name.to_owned());
            }
        }
        if !atomic {
            return Err(self.unsuitable("does not offer `UCI_Variant` with `atomic`".into()));
        }
        self.send("setoption name UCI_Variant value atomic")?;
        for (name, value) in options {
            if !offered.iter().any(|o| o.eq_ignore_ascii_case(name)) {
                return Err(self.unsuitable(format!(
                    "has no option `{name}` (it offers: {})",
                    offered.join(", ")
                )));
            }
            self.send(&format!("setoption name {name} value {value}"))?;
        }
        self.ready().await
    }

    fn unsuitable(&self, problem: String) -> EngineError {
        EngineError::Unsuitable {
            command: self.command.clone(),
            problem,
        }
    }

    /// `ucinewgame`, then waits for `readyok`.
    pub async fn new_game(&mut self) -> Result<(), EngineError> {
        self.send("ucinewgame")?;
        self.ready().await
    }

    async fn ready(&mut self) -> Result<(), EngineError> {
        self.send("isready")?;
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        while self.next_line(deadline, "readyok").await?.trim() != "readyok" {}
        Ok(())
    }

    /// Starts a search: `position <position>` (`startpos ...` or `fen ...`, with its moves),
    /// then `go` with the clocks.
    pub fn go(&mut self, position: &str, clocks: GoClocks) -> Result<(), EngineError> {
        self.send(&format!("position {position}"))?;
        let mut go = format!(
            "go wtime {} btime {} winc {} binc {}",
            clocks.wtime.max(0),
            clocks.btime.max(0),
            clocks.winc.max(0),
            clocks.binc.max(0)
        );
        if let Some(ms) = clocks.movetime {
            go.push_str(&format!(" movetime {}", ms.max(1)));
        }
        self.send(&go)
    }

    /// Asks a running search to stop (its `bestmove` still has to be read).
    pub fn stop(&mut self) -> Result<(), EngineError> {
        self.send("stop")
    }

    /// Waits for the `bestmove` of the running search until `deadline`; returns its move
    /// (`(none)` and `0000` as given: the caller decides what an impossible move means).
    /// Cancel-safe: dropping the future loses no line.
    pub async fn best_move(&mut self, deadline: Instant) -> Result<String, EngineError> {
        loop {
            let line = self.next_line(deadline, "bestmove").await?;
            let mut words = line.split_ascii_whitespace();
            if words.next() == Some("bestmove") {
                return Ok(words.next().unwrap_or("(none)").to_owned());
            }
        }
    }

    fn send(&mut self, line: &str) -> Result<(), EngineError> {
        let written = writeln!(self.stdin, "{line}").and_then(|()| self.stdin.flush());
        written.map_err(|_| self.exited())
    }

    async fn next_line(
        &mut self,
        deadline: Instant,
        waiting_for: &'static str,
    ) -> Result<String, EngineError> {
        let started = Instant::now();
        match tokio::time::timeout_at(deadline, self.lines.recv()).await {
            Ok(Some(line)) => Ok(line),
            Ok(None) => Err(self.exited()),
            Err(_) => Err(EngineError::Timeout {
                command: self.command.clone(),
                waiting_for,
                waited: deadline.saturating_duration_since(started),
            }),
        }
    }

    fn exited(&mut self) -> EngineError {
        // The stderr thread may still be reading the last lines of a process that just died.
        let _ = self.child.try_wait();
        let tail: Vec<String> = self
            .stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default();
        EngineError::Exited {
            command: self.command.clone(),
            stderr: if tail.is_empty() {
                String::new()
            } else {
                format!(": {}", tail.join(" | "))
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_like_a_shell_without_one() {
        assert_eq!(
            split_command("target/release/atomic-bot uci").unwrap(),
            ["target/release/atomic-bot", "uci"]
        );
        assert_eq!(
            split_command("  python3 'my engine.py'  \"a b\" c\\ d ''").unwrap(),
            ["python3", "my engine.py", "a b", "c d", ""]
        );
        assert!(split_command("   ").unwrap_err().contains("empty"));
        assert!(
            split_command("a 'b")
                .unwrap_err()
                .contains("unclosed quote")
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_engine_runs_at_the_searchs_nice_value() {
        // An "engine" that prints its own nice value (field 19 of /proc/self/stat) as its name.
        let script = "read l; echo id name $(cut -d' ' -f19 /proc/self/stat); \
            echo 'option name UCI_Variant type combo default atomic var atomic'; echo uciok; \
            read l; read l; echo readyok; sleep 5";
        let engine = UciEngine::start(&format!("sh -c \"{script}\""), &[])
            .await
            .unwrap();
        assert_eq!(engine.name, ENGINE_NICE.to_string());
    }

    #[tokio::test]
    async fn go_sends_the_clocks_and_a_movetime_only_when_capped() {
        // An "engine" whose best move is the rest of its last `go` line after `go`, words
        // joined by underscores.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("echo-engine.sh");
        std::fs::write(
            &path,
            "while read -r l; do case \"$l\" in\n\
             uci) echo 'id name Echo'; \
             echo 'option name UCI_Variant type combo default atomic var atomic'; echo uciok;;\n\
             isready) echo readyok;;\n\
             go*) echo \"bestmove $(echo \"${l#go }\" | tr ' ' _)\";;\n\
             quit) exit 0;;\n\
             esac; done\n",
        )
        .unwrap();
        let mut engine = UciEngine::start(&format!("sh {}", path.display()), &[])
            .await
            .unwrap();
        let deadline = || Instant::now() + Duration::from_secs(5);
        let mut clocks = GoClocks {
            wtime: 60_000,
            btime: -5,
            winc: 1_000,
            binc: 1_000,
            movetime: None,
        };
        engine.go("startpos", clocks).unwrap();
        assert_eq!(
            engine.best_move(deadline()).await.unwrap(),
            "wtime_60000_btime_0_winc_1000_binc_1000"
        );
        clocks.movetime = Some(3_000);
        engine.go("startpos moves e2e4", clocks).unwrap();
        assert_eq!(
            engine.best_move(deadline()).await.unwrap(),
            "wtime_60000_btime_0_winc_1000_binc_1000_movetime_3000"
        );
    }

    #[tokio::test]
    async fn a_missing_program_is_a_start_error_naming_it() {
        let Err(err) = UciEngine::start("/nonexistent/engine --x", &[]).await else {
            panic!("a missing program started")
        };
        assert!(matches!(err, EngineError::Start { .. }), "{err:?}");
        assert!(err.to_string().contains("/nonexistent/engine --x"), "{err}");
    }

    #[tokio::test]
    async fn a_program_that_is_no_engine_is_reported() {
        // `true` exits at once: its output closes before any `uciok`.
        let Err(err) = UciEngine::start("true", &[]).await else {
            panic!("`true` passed as a UCI engine")
        };
        assert!(matches!(err, EngineError::Exited { .. }), "{err:?}");
        assert!(err.to_string().contains("`true`"), "{err}");
    }

    #[tokio::test]
    async fn an_engine_without_atomic_is_unsuitable() {
        let script = "read l; echo 'id name Plain'; echo 'option name Hash type spin default 1 min 1 max 2'; echo uciok; sleep 5";
        let Err(err) = UciEngine::start(&format!("sh -c \"{script}\""), &[]).await else {
            panic!("an engine without UCI_Variant passed")
        };
        assert!(err.to_string().contains("UCI_Variant"), "{err}");
    }
}
