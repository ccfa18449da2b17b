//! Bot configuration: built-in defaults, then an optional TOML file, then environment overrides
//! `ATOMIC_BOT_<SECTION>__<KEY>` (for example `ATOMIC_BOT_CHALLENGE__MAX_GAMES=2`).
//!
//! The lichess token is deliberately *not* a configuration key: it comes only from the
//! `LICHESS_BOT_TOKEN` environment variable or from the file named by `lichess.token_file`
//! (Docker secrets), so it can never be committed in a config file or printed with it.
//!
//! Unknown keys, wrong types and impossible bounds are errors that name the key
//! (`#[serde(deny_unknown_fields)]` plus [`Settings::validate`]). Every key and its default is
//! documented in `config.example.toml`, which a test parses and compares with [`Settings::default`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

/// Environment variable prefix of the overrides.
pub const ENV_PREFIX: &str = "ATOMIC_BOT";
/// The only environment variable the token is read from.
pub const TOKEN_ENV: &str = "LICHESS_BOT_TOKEN";
/// Environment variable naming the config file (read by the CLI, not an override).
pub const CONFIG_PATH_ENV: &str = "ATOMIC_BOT_CONFIG";

/// Keys whose environment value is a comma-separated list.
const LIST_KEYS: &[&str] = &[
    "challenge.variants",
    "challenge.modes",
    "challenge.allow_list",
    "challenge.block_list",
    "matchmaking.time_controls",
    "matchmaking.block_list",
];

/// Why the configuration could not be loaded. The messages name the offending key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Parsing, unknown keys, wrong types (the `config` crate names the key).
    #[error("configuration error: {0}")]
    Load(#[from] config::ConfigError),
    /// A value outside its allowed range, or min above max.
    #[error("configuration error: `{key}`: {reason}")]
    Invalid {
        /// Dotted key, e.g. `challenge.min_initial_s`.
        key: &'static str,
        /// Human explanation.
        reason: String,
    },
    /// No token anywhere.
    #[error(
        "no lichess token: set the {TOKEN_ENV} environment variable or `lichess.token_file` \
         (create one at https://lichess.org/account/oauth/token/create?scopes[]=bot:play)"
    )]
    MissingToken,
    /// The token file could not be read (the path is named, never the content).
    #[error("cannot read the token file {path}: {source}")]
    TokenFile {
        /// Path from `lichess.token_file`.
        path: PathBuf,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// A token with characters lichess never issues (it would also break the HTTP header).
    #[error("the lichess token is malformed (expected letters, digits and `_` only)")]
    MalformedToken,
}

/// The whole configuration.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Server connection and HTTP behaviour.
    pub lichess: LichessSettings,
    /// Which challenges to accept.
    pub challenge: ChallengeSettings,
    /// How games are played.
    pub game: GameSettings,
    /// Search resources shared by all games.
    pub search: SearchSettings,
    /// What happens on SIGTERM/SIGINT.
    pub shutdown: ShutdownSettings,
    /// Logging.
    pub log: LogSettings,
    /// Challenging other bots when idle (off by default).
    pub matchmaking: crate::lichess::matchmaking::MatchmakingConfig,
    /// Chat commands and the spectator greeting.
    pub chat: crate::lichess::chat_commands::ChatSettings,
    /// Liveness file read by `atomic-bot healthcheck`.
    pub heartbeat: crate::heartbeat::HeartbeatSettings,
    /// Prometheus endpoint (off by default).
    pub metrics: crate::metrics::MetricsSettings,
}

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

/// Which move picker plays.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
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
    /// Total search threads, divided among the running games.
    pub threads: u32,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            engine: Engine::Alphabeta,
            hash_mb: 128,
            threads: 1,
        }
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

/// Log output format.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line (containers).
    Json,
}

/// `[log]`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    /// `text` or `json`.
    pub format: LogFormat,
    /// Default filter when `RUST_LOG` is unset, e.g. `info` or `atomic_bot=debug`.
    pub level: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        Self {
            format: LogFormat::Text,
            level: "info".into(),
        }
    }
}

/// Where the configuration comes from; `env` is injected so tests never touch the process
/// environment.
#[derive(Clone, Debug, Default)]
pub struct ConfigSource {
    /// The config file; `None` = built-in defaults only.
    pub file: Option<PathBuf>,
    /// Whether a missing `file` is an error (an explicit `--config`) or silently skipped.
    pub file_required: bool,
    /// Environment variables (`ATOMIC_BOT_*` are applied as overrides).
    pub env: HashMap<String, String>,
}

impl ConfigSource {
    /// The CLI's rule: `--config FILE` must exist; otherwise `config.toml` is used if present.
    pub fn from_cli(explicit: Option<PathBuf>) -> Self {
        let env: HashMap<String, String> = std::env::vars().collect();
        match explicit {
            Some(file) => Self {
                file: Some(file),
                file_required: true,
                env,
            },
            None => Self {
                file: Path::new("config.toml")
                    .exists()
                    .then(|| PathBuf::from("config.toml")),
                file_required: false,
                env,
            },
        }
    }
}

impl Settings {
    /// Defaults, then the file, then `ATOMIC_BOT_*` overrides; validated.
    pub fn load(source: &ConfigSource) -> Result<Settings, ConfigError> {
        let mut builder = config::Config::builder();
        if let Some(file) = &source.file {
            builder = builder.add_source(
                config::File::from(file.as_path())
                    .format(config::FileFormat::Toml)
                    .required(source.file_required),
            );
        }
        // Only `ATOMIC_BOT_<SECTION>__<KEY>` variables are overrides: the CLI's own
        // ATOMIC_BOT_CONFIG is not a key and would otherwise fail as unknown.
        let overrides: config::Map<String, String> = source
            .env
            .iter()
            .filter(|(k, _)| k.starts_with("ATOMIC_BOT_") && k.as_str() != CONFIG_PATH_ENV)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut env = config::Environment::with_prefix(ENV_PREFIX)
            .prefix_separator("_")
            .separator("__")
            .try_parsing(true)
            .list_separator(",")
            .source(Some(overrides));
        for key in LIST_KEYS {
            env = env.with_list_parse_key(key);
        }
        let settings: Settings = builder.add_source(env).build()?.try_deserialize()?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks ranges and min/max pairs; the error names the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        fn bad(key: &'static str, reason: impl Into<String>) -> Result<(), ConfigError> {
            Err(ConfigError::Invalid {
                key,
                reason: reason.into(),
            })
        }
        let l = &self.lichess;
        if !(l.url.starts_with("http://") || l.url.starts_with("https://")) {
            return bad("lichess.url", format!("`{}` is not an http(s) URL", l.url));
        }
        for (key, v) in [
            ("lichess.request_timeout_ms", l.request_timeout_ms),
            ("lichess.connect_timeout_ms", l.connect_timeout_ms),
            ("lichess.stream_idle_timeout_ms", l.stream_idle_timeout_ms),
            ("lichess.retry_min_ms", l.retry_min_ms),
            ("lichess.reconnect_min_ms", l.reconnect_min_ms),
        ] {
            if v == 0 {
                return bad(key, "must be greater than 0");
            }
        }
        if l.retry_min_ms > l.retry_max_ms {
            return bad("lichess.retry_min_ms", "is above lichess.retry_max_ms");
        }
        if l.reconnect_min_ms > l.reconnect_max_ms {
            return bad(
                "lichess.reconnect_min_ms",
                "is above lichess.reconnect_max_ms",
            );
        }
        let c = &self.challenge;
        if c.min_initial_s > c.max_initial_s {
            return bad(
                "challenge.min_initial_s",
                "is above challenge.max_initial_s",
            );
        }
        if c.min_increment_s > c.max_increment_s {
            return bad(
                "challenge.min_increment_s",
                "is above challenge.max_increment_s",
            );
        }
        if c.min_days > c.max_days {
            return bad("challenge.min_days", "is above challenge.max_days");
        }
        if c.max_games == 0 {
            return bad("challenge.max_games", "must be at least 1");
        }
        if c.accept_bots.eq(&false) && c.only_bots {
            return bad(
                "challenge.only_bots",
                "contradicts challenge.accept_bots = false (nobody could challenge us)",
            );
        }
        for m in &c.modes {
            if m != "rated" && m != "casual" {
                return bad(
                    "challenge.modes",
                    format!("`{m}` is not `rated` or `casual`"),
                );
            }
        }
        let g = &self.game;
        if !(0.0..=1.0).contains(&g.draw_accept_max_win) {
            return bad("game.draw_accept_max_win", "must be between 0 and 1");
        }
        if g.greeting.chars().count() > 140 {
            return bad(
                "game.greeting",
                "lichess chat lines are at most 140 characters",
            );
        }
        if g.goodbye.chars().count() > 140 {
            return bad(
                "game.goodbye",
                "lichess chat lines are at most 140 characters",
            );
        }
        if self.search.threads == 0 {
            return bad("search.threads", "must be at least 1");
        }
        if self.search.hash_mb == 0 {
            return bad("search.hash_mb", "must be at least 1");
        }
        for check in [
            self.matchmaking.validate(),
            self.chat.validate(),
            self.heartbeat.validate(),
            self.metrics.validate(),
        ] {
            if let Err((key, reason)) = check {
                return bad(key, reason);
            }
        }
        Ok(())
    }

    /// The token: `LICHESS_BOT_TOKEN` first, else the content of `lichess.token_file`.
    pub fn token(&self, env: &HashMap<String, String>) -> Result<SecretString, ConfigError> {
        let raw = match env.get(TOKEN_ENV).filter(|t| !t.trim().is_empty()) {
            Some(t) => t.trim().to_owned(),
            None => match &self.lichess.token_file {
                Some(path) => std::fs::read_to_string(path)
                    .map_err(|source| ConfigError::TokenFile {
                        path: path.clone(),
                        source,
                    })?
                    .trim()
                    .to_owned(),
                None => return Err(ConfigError::MissingToken),
            },
        };
        if raw.is_empty() {
            return Err(ConfigError::MissingToken);
        }
        if !raw.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(ConfigError::MalformedToken);
        }
        Ok(SecretString::from(raw))
    }
}

impl LichessSettings {
    /// `stream_idle_timeout_ms` as a duration.
    pub fn stream_idle_timeout(&self) -> Duration {
        Duration::from_millis(self.stream_idle_timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    fn load(file: Option<&str>, env: &[(&str, &str)]) -> Result<Settings, ConfigError> {
        // Removed when dropped, at the end of this function.
        let dir = tempfile::Builder::new()
            .prefix("atomic-bot-cfg-")
            .tempdir()
            .unwrap();
        let path = dir.path().join("c.toml");
        if let Some(text) = file {
            std::fs::write(&path, text).unwrap();
        }
        Settings::load(&ConfigSource {
            file: file.map(|_| path),
            file_required: true,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        })
    }

    #[test]
    fn defaults_without_file() {
        assert_eq!(load(None, &[]).unwrap(), Settings::default());
    }

    #[test]
    fn example_file_is_exactly_the_defaults() {
        let text = include_str!("../config.example.toml");
        assert_eq!(load(Some(text), &[]).unwrap(), Settings::default());
    }

    #[test]
    fn env_overrides_file() {
        let s = load(
            Some("[challenge]\nmax_games = 2\n"),
            &[
                ("ATOMIC_BOT_CHALLENGE__MAX_GAMES", "3"),
                ("ATOMIC_BOT_LICHESS__URL", "http://127.0.0.1:9"),
                ("ATOMIC_BOT_CHALLENGE__VARIANTS", "atomic,standard"),
                ("ATOMIC_BOT_CONFIG", "/somewhere.toml"),
            ],
        )
        .unwrap();
        assert_eq!(s.challenge.max_games, 3);
        assert_eq!(s.lichess.url, "http://127.0.0.1:9");
        assert_eq!(s.challenge.variants, vec!["atomic", "standard"]);
    }

    #[test]
    fn unknown_key_is_named() {
        let e = load(Some("[challenge]\nmax_gmaes = 2\n"), &[]).unwrap_err();
        assert!(e.to_string().contains("max_gmaes"), "{e}");
        let e = load(None, &[("ATOMIC_BOT_GAME__PONDR", "true")]).unwrap_err();
        assert!(e.to_string().contains("pondr"), "{e}");
        let e = load(Some("[lichess]\ntoken = \"lip_x\"\n"), &[]).unwrap_err();
        assert!(e.to_string().contains("token"), "{e}");
        assert!(!e.to_string().contains("lip_x"), "{e}");
    }

    #[test]
    fn wrong_type_is_named() {
        let e = load(Some("[challenge]\nmax_games = \"many\"\n"), &[]).unwrap_err();
        assert!(e.to_string().contains("max_games"), "{e}");
        let e = load(None, &[("ATOMIC_BOT_GAME__PONDER", "maybe")]).unwrap_err();
        assert!(e.to_string().contains("ponder"), "{e}");
    }

    #[test]
    fn impossible_bounds_are_named() {
        let e = load(
            Some("[challenge]\nmin_initial_s = 600\nmax_initial_s = 60\n"),
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("challenge.min_initial_s"), "{e}");
        let e = load(None, &[("ATOMIC_BOT_CHALLENGE__MAX_GAMES", "0")]).unwrap_err();
        assert!(e.to_string().contains("challenge.max_games"), "{e}");
    }

    #[test]
    fn token_from_env_or_file() {
        let s = Settings::default();
        let env: HashMap<String, String> = [(TOKEN_ENV.to_string(), "lip_abc".to_string())].into();
        assert_eq!(s.token(&env).unwrap().expose_secret(), "lip_abc");
        assert!(matches!(
            s.token(&HashMap::new()),
            Err(ConfigError::MissingToken)
        ));
        let dir = tempfile::Builder::new()
            .prefix("atomic-bot-token-")
            .tempdir()
            .unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "lip_fromfile\n").unwrap();
        let mut s = Settings::default();
        s.lichess.token_file = Some(path.clone());
        assert_eq!(
            s.token(&HashMap::new()).unwrap().expose_secret(),
            "lip_fromfile"
        );
        std::fs::write(&path, "bad token\n").unwrap();
        let e = s.token(&HashMap::new()).unwrap_err();
        assert!(!e.to_string().contains("bad token"));
    }
}
