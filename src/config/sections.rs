//! The sections of the configuration that say how the bot plays: the server and its HTTP
//! discipline, the challenge policy, games, the search, shutdown and chat. Each section is a
//! plain serde struct whose `Default` is the documented default (`config.example.toml`).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::threads::{EffectiveThreads, Threads, detected_cores, resolve};

/// `[lichess]`: where the server is and how we talk to it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LichessSettings {
    /// Base URL; tests and `atomic-bot demo` point it at a local server.
    pub url: String,
    /// File holding the token (Docker secrets). Used only if `LICHESS_BOT_TOKEN` is unset.
    pub token_file: Option<PathBuf>,
    /// Timeout of one ordinary (non-stream) request.
    pub request_timeout_ms: u64,
    /// TCP connect timeout (also for streams).
    pub connect_timeout_ms: u64,
    /// Watchdog: a stream silent for this long is dropped and reopened (lichess sends a
    /// keep-alive every 6-7 s).
    pub stream_idle_timeout_ms: u64,
    /// After a 429, that kind of endpoint waits this long (lichess asks for at least 60 s).
    pub rate_limit_cooldown_ms: u64,
    /// 5xx/network retries: first delay.
    pub retry_min_ms: u64,
    /// 5xx/network retries: delay cap.
    pub retry_max_ms: u64,
    /// 5xx/network retries: attempts after the first one.
    pub retry_max_times: u32,
    /// Stream reconnect backoff: first delay.
    pub reconnect_min_ms: u64,
    /// Stream reconnect backoff: cap (reopening the event stream is limited to 30 per 10 min).
    pub reconnect_max_ms: u64,
    /// A connection that lived this long counts as healthy and resets the backoff.
    pub healthy_after_ms: u64,
}

impl Default for LichessSettings {
    fn default() -> Self {
        Self {
            url: "https://lichess.org".into(),
            token_file: None,
            request_timeout_ms: 10_000,
            connect_timeout_ms: 10_000,
            stream_idle_timeout_ms: 20_000,
            rate_limit_cooldown_ms: 60_000,
            retry_min_ms: 500,
            retry_max_ms: 10_000,
            retry_max_times: 5,
            reconnect_min_ms: 1_000,
            reconnect_max_ms: 60_000,
            healthy_after_ms: 30_000,
        }
    }
}

impl LichessSettings {
    /// `stream_idle_timeout_ms` as a duration.
    pub fn stream_idle_timeout(&self) -> Duration {
        Duration::from_millis(self.stream_idle_timeout_ms)
    }
}

/// `[challenge]`: the accept/decline policy (see `lichess::challenge::decide`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ChallengeSettings {
    /// Accepted variant keys (lichess keys, e.g. `atomic`).
    pub variants: Vec<String>,
    /// `rated`, `casual` or both.
    pub modes: Vec<String>,
    /// Minimum initial clock, seconds (below: `tooFast`).
    pub min_initial_s: u32,
    /// Maximum initial clock, seconds (above: `tooSlow`).
    pub max_initial_s: u32,
    /// Minimum increment, seconds (below: `tooFast`).
    pub min_increment_s: u32,
    /// Maximum increment, seconds (above: `tooSlow`).
    pub max_increment_s: u32,
    /// Accept correspondence games (else `timeControl`).
    pub correspondence: bool,
    /// Minimum days per move for correspondence (below: `tooFast`).
    pub min_days: u32,
    /// Maximum days per move for correspondence (above: `tooSlow`).
    pub max_days: u32,
    /// Accept games without a clock (else `timeControl`).
    pub unlimited: bool,
    /// Accept challenges from bots (else `noBot`).
    pub accept_bots: bool,
    /// Accept only bots (humans get `onlyBot`).
    pub only_bots: bool,
    /// If non-empty, only these user ids may challenge us (others: `generic`).
    pub allow_list: Vec<String>,
    /// These user ids are always declined (`generic`).
    pub block_list: Vec<String>,
    /// Concurrent games, counting accepted games that have not started yet.
    pub max_games: u32,
    /// Challenges held while all game slots are busy (0 = decline with `later` at once).
    pub queue_size: u32,
}

impl Default for ChallengeSettings {
    fn default() -> Self {
        Self {
            variants: vec!["atomic".into()],
            modes: vec!["casual".into(), "rated".into()],
            min_initial_s: 0,
            max_initial_s: 3_600,
            min_increment_s: 0,
            max_increment_s: 60,
            correspondence: false,
            min_days: 1,
            max_days: 14,
            unlimited: false,
            accept_bots: true,
            only_bots: false,
            allow_list: Vec::new(),
            block_list: Vec::new(),
            max_games: 1,
            queue_size: 2,
        }
    }
}

/// What to do with a draw offer from the opponent.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DrawPolicy {
    /// Accept when our win probability is at most `draw_accept_max_win`.
    Eval,
    /// Always accept.
    Accept,
    /// Always decline.
    Decline,
}

/// `[game]`: how a game is played.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct GameSettings {
    /// Time subtracted from our clock for the network round trip. Bots get no lag compensation
    /// on lichess, so this must cover push + POST latency.
    pub move_overhead_ms: u64,
    /// Think time cap for our first move (lichess aborts after 20-35 s without a first move).
    pub first_move_think_ms: u64,
    /// Think on the opponent's time.
    pub ponder: bool,
    /// Answer to draw offers.
    pub draw_policy: DrawPolicy,
    /// With `draw_policy = "eval"`: accept if our win probability is at most this (0..1).
    pub draw_accept_max_win: f64,
    /// Accept takeback requests (declined by default).
    pub accept_takebacks: bool,
    /// Claim the win when the opponent left and lichess allows it.
    pub claim_victory: bool,
    /// Resign when the search proves a loss.
    pub resign_proven_loss: bool,
    /// Abort a game with a clock whose opponent has not made a first move after this long.
    /// Lichess itself aborts such games after 20-35 s (by speed) counted from the previous move;
    /// our timer starts later (when we read the state), so above 35 s lichess's neutral abort
    /// always comes first and ours is only a backstop (a final state that never reached us).
    pub abort_after_s: u64,
    /// The same for games without a clock (correspondence, unlimited), which lichess never
    /// aborts: only we free the slot, but their players may take days over a move.
    pub abort_unclocked_s: u64,
    /// Chat sent at the start of a game (`{me}` and `{opponent}` are replaced; empty = off).
    pub greeting: String,
    /// Chat sent at the end of a game (empty = off).
    pub goodbye: String,
    /// Folder the PGN of every finished game is appended to (unset = off).
    pub pgn_dir: Option<PathBuf>,
}

impl Default for GameSettings {
    fn default() -> Self {
        Self {
            move_overhead_ms: 400,
            first_move_think_ms: 3_000,
            ponder: true,
            draw_policy: DrawPolicy::Eval,
            draw_accept_max_win: 0.35,
            accept_takebacks: false,
            claim_victory: true,
            resign_proven_loss: false,
            abort_after_s: 40,
            abort_unclocked_s: 86_400,
            greeting: "Hi {opponent}, I am {me}, an Atomic chess bot. Good luck!".into(),
            goodbye: "Good game, thanks for playing!".into(),
            pgn_dir: None,
        }
    }
}

/// Which move picker plays (also `atomic-bot demo --engine`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The alpha-beta search (the real engine; the stronger search, docs/ENGINE.md).
    Alphabeta,
    /// The MCTS search with its solver.
    Mcts,
    /// An instant rule-based picker (tests, smoke runs, very weak machines).
    Simple,
}

/// `[search]`: resources of the searcher, shared by all running games.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SearchSettings {
    /// `alphabeta`, `mcts` or `simple`.
    pub engine: Engine,
    /// Total tree memory in MB, divided among `challenge.max_games` searchers.
    pub hash_mb: u64,
    /// Total search threads, shared by the running games: `"auto"` (the default) = every
    /// core the process may use ([`super::threads`]), or a number.
    pub threads: Threads,
    /// The evaluation: absent or `<embedded>` the network built into the binary, `<linear>` the
    /// linear evaluation, else a network file (format in `search::nnue::format`) loaded once at
    /// start-up and shared by every game.
    pub eval_file: Option<PathBuf>,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            engine: Engine::Alphabeta,
            hash_mb: 128,
            threads: Threads::Auto,
            eval_file: None,
        }
    }
}

impl SearchSettings {
    /// The total number of search threads and where it came from (`"auto"` asks the system
    /// once per process).
    pub fn effective_threads(&self) -> EffectiveThreads {
        resolve(self.threads, detected_cores())
    }
}

/// What to do with running games on SIGTERM/SIGINT.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ShutdownMode {
    /// Play the running games to their end (no new ones), then exit.
    Finish,
    /// After the grace period, abort games (or resign those that can no longer be aborted).
    Abort,
    /// After the grace period, resign games.
    Resign,
}

/// `[shutdown]`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ShutdownSettings {
    /// `finish`, `abort` or `resign`.
    pub mode: ShutdownMode,
    /// With `abort`/`resign`: how long games may continue first.
    pub grace_s: u64,
}

impl Default for ShutdownSettings {
    fn default() -> Self {
        Self {
            mode: ShutdownMode::Finish,
            grace_s: 5,
        }
    }
}

/// lichess's chat line limit, in characters.
pub const MAX_CHAT_CHARS: usize = 140;

/// Default minimum time between two chat replies in the same room.
pub const DEFAULT_CHAT_COOLDOWN: Duration = Duration::from_secs(5);

/// The `[chat]` configuration section (the player-room greeting and goodbye are `game.greeting`
/// and `game.goodbye`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChatSettings {
    /// Answer `!help`, `!eval`, `!name` and `!queue`.
    pub commands: bool,
    /// Minimum seconds between two replies in the same room.
    pub cooldown_s: u64,
    /// Greeting posted in the spectator room at the start of a game (`{me}`, `{opponent}`
    /// replaced; empty = off).
    pub spectator_greeting: String,
}

impl Default for ChatSettings {
    fn default() -> Self {
        ChatSettings {
            commands: true,
            cooldown_s: DEFAULT_CHAT_COOLDOWN.as_secs(),
            spectator_greeting:
                "Hi! I am {me}, an Atomic chess engine. Commands: !help !eval !name !queue".into(),
        }
    }
}

impl ChatSettings {
    /// Checks bounds; the error is `(key, reason)`.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.spectator_greeting.chars().count() > MAX_CHAT_CHARS {
            return Err((
                "chat.spectator_greeting",
                format!("lichess chat lines are at most {MAX_CHAT_CHARS} characters"),
            ));
        }
        Ok(())
    }

    /// `cooldown_s` as a duration.
    pub fn cooldown(&self) -> Duration {
        Duration::from_secs(self.cooldown_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_settings_validate() {
        assert!(ChatSettings::default().validate().is_ok());
        let long = ChatSettings {
            spectator_greeting: "x".repeat(MAX_CHAT_CHARS + 1),
            ..ChatSettings::default()
        };
        assert_eq!(long.validate().unwrap_err().0, "chat.spectator_greeting");
    }
}
