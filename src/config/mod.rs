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
//!
//! Every configuration type lives here, below everything that reads it: this module imports
//! nothing else of the crate, so no module can reach it through a loop of imports. The sections
//! are in [`sections`] (how the bot plays), [`service`] (logging, heartbeat, metrics) and
//! [`matchmaking`]; [`clock`] holds the one clock notation, lichess's; [`threads`] the rule
//! that turns `search.threads` into a number of threads.

pub mod clock;
pub mod correspondence;
pub mod matchmaking;
pub mod online;
pub mod sections;
pub mod service;
pub mod threads;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

pub use clock::TimeControl;
pub use correspondence::CorrespondenceSettings;
pub use matchmaking::MatchmakingConfig;
pub use online::{CloudEvalSettings, ExplorerSettings, OnlineSettings, TablebaseSettings};
pub use sections::{
    ChallengeSettings, ChatSettings, DEFAULT_CHAT_COOLDOWN, DrawPolicy, Engine, GameSettings,
    LichessSettings, MAX_CHAT_CHARS, SearchSettings, ShutdownMode, ShutdownSettings,
};
pub use service::{
    DEFAULT_HEARTBEAT_MAX_AGE, DEFAULT_HEARTBEAT_PATH, DEFAULT_METRICS_LISTEN, HeartbeatSettings,
    LogFormat, LogSettings, MetricsSettings,
};
pub use threads::{EffectiveThreads, MAX_THREADS, Threads, ThreadsSource};

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
    "online.explorer.speeds",
    "online.explorer.ratings",
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
    pub matchmaking: MatchmakingConfig,
    /// Chat commands and the spectator greeting.
    pub chat: ChatSettings,
    /// Liveness file read by `atomic-bot healthcheck`.
    pub heartbeat: HeartbeatSettings,
    /// Prometheus endpoint (off by default).
    pub metrics: MetricsSettings,
    /// Online move sources: tablebase, opening explorer, cloud eval (each off by default).
    pub online: OnlineSettings,
    /// Correspondence games: think time, check-in and disconnect periods.
    pub correspondence: CorrespondenceSettings,
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
        if let Err(reason) = self.search.threads.validate() {
            return bad("search.threads", reason);
        }
        if self.search.hash_mb == 0 {
            return bad("search.hash_mb", "must be at least 1");
        }
        for check in [
            self.matchmaking.validate(),
            self.chat.validate(),
            self.heartbeat.validate(),
            self.metrics.validate(),
            self.online.validate(),
            self.correspondence.validate(),
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
        let text = include_str!("../../config.example.toml");
        assert_eq!(load(Some(text), &[]).unwrap(), Settings::default());
    }

    #[test]
    fn the_search_section_takes_an_eval_file() {
        let s = load(Some("[search]\neval_file = \"nets/a.nnue\"\n"), &[]).unwrap();
        assert_eq!(s.search.eval_file, Some(PathBuf::from("nets/a.nnue")));
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
    fn search_threads_is_auto_or_a_number() {
        assert_eq!(load(None, &[]).unwrap().search.threads, Threads::Auto);
        let s = load(Some("[search]\nthreads = \"auto\"\n"), &[]).unwrap();
        assert_eq!(s.search.threads, Threads::Auto);
        assert_eq!(s.search.effective_threads().source, ThreadsSource::Detected);
        let s = load(Some("[search]\nthreads = 3\n"), &[]).unwrap();
        assert_eq!(s.search.threads, Threads::Count(3));
        assert_eq!(
            s.search.effective_threads(),
            EffectiveThreads {
                count: 3,
                source: ThreadsSource::Configured
            }
        );
        let s = load(None, &[("ATOMIC_BOT_SEARCH__THREADS", "5")]).unwrap();
        assert_eq!(s.search.threads, Threads::Count(5));
        let s = load(
            Some("[search]\nthreads = 3\n"),
            &[("ATOMIC_BOT_SEARCH__THREADS", "auto")],
        )
        .unwrap();
        assert_eq!(s.search.threads, Threads::Auto);
    }

    #[test]
    fn bad_search_threads_are_named() {
        for (file, env) in [
            (Some("[search]\nthreads = 0\n"), None),
            (Some("[search]\nthreads = \"x\"\n"), None),
            (Some("[search]\nthreads = -2\n"), None),
            (Some("[search]\nthreads = 1000\n"), None),
            (Some("[search]\nthreads = 1.5\n"), None),
            (None, Some("0")),
            (None, Some("many")),
        ] {
            let env: Vec<(&str, &str)> = env
                .map(|v| ("ATOMIC_BOT_SEARCH__THREADS", v))
                .into_iter()
                .collect();
            let e = load(file, &env).unwrap_err().to_string();
            assert!(e.contains("search.threads"), "{file:?} {env:?}: {e}");
        }
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
