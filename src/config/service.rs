//! The sections of the configuration that say how the bot runs as a service: logging, the
//! liveness heartbeat and the metrics endpoint. The modules that act on them (`telemetry`,
//! `heartbeat`, `metrics`) import these types; the configuration imports none of them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How log lines are written (`log.format`; the `LOG_FORMAT` environment variable overrides
/// it, see `telemetry`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (the default outside containers).
    #[default]
    Text,
    /// One JSON object per line (containers, log shippers).
    Json,
}

impl LogFormat {
    /// Parses `json` or `text` (also `plain` and `pretty`), case-insensitive; anything else is
    /// `None`. For the `LOG_FORMAT` environment variable, which must never stop the bot.
    pub fn parse(value: &str) -> Option<LogFormat> {
        match value.trim().to_ascii_lowercase().as_str() {
            "json" => Some(LogFormat::Json),
            "text" | "plain" | "pretty" => Some(LogFormat::Text),
            _ => None,
        }
    }
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

/// Default heartbeat path: `/tmp` is writable for uid 65532 in the distroless image and on any
/// Linux host; mount a tmpfs there if the container's root file system is read-only.
pub const DEFAULT_HEARTBEAT_PATH: &str = "/tmp/atomic-bot.heartbeat";

/// Default age after which the heartbeat counts as stale. Longer than the event stream's 20 s
/// watchdog plus a 60 s rate-limit pause, so a bot that is merely reconnecting stays healthy.
pub const DEFAULT_HEARTBEAT_MAX_AGE: Duration = Duration::from_secs(90);

/// The `[heartbeat]` configuration section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HeartbeatSettings {
    /// Write the heartbeat file (on by default: it is one small write per second at most).
    pub enabled: bool,
    /// The file; `atomic-bot healthcheck` reads the same setting.
    pub path: PathBuf,
    /// `atomic-bot healthcheck` fails when the last event-stream line is older than this.
    pub max_age_s: u64,
}

impl Default for HeartbeatSettings {
    fn default() -> Self {
        HeartbeatSettings {
            enabled: true,
            path: PathBuf::from(DEFAULT_HEARTBEAT_PATH),
            max_age_s: DEFAULT_HEARTBEAT_MAX_AGE.as_secs(),
        }
    }
}

impl HeartbeatSettings {
    /// Checks bounds; the error is `(key, reason)`.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.max_age_s < 10 {
            return Err((
                "heartbeat.max_age_s",
                "must be at least 10 (lichess keep-alives come every 6-7 s)".into(),
            ));
        }
        if self.enabled && self.path.as_os_str().is_empty() {
            return Err(("heartbeat.path", "must not be empty when enabled".into()));
        }
        Ok(())
    }

    /// `max_age_s` as a duration.
    pub fn max_age(&self) -> Duration {
        Duration::from_secs(self.max_age_s)
    }
}

/// Default listen address of the metrics endpoint (loopback only).
pub const DEFAULT_METRICS_LISTEN: &str = "127.0.0.1:9464";

/// The `[metrics]` configuration section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsSettings {
    /// Serve the endpoint. Off by default.
    pub enabled: bool,
    /// `address:port` to listen on. Keep it on loopback outside containers; inside one use
    /// `0.0.0.0:9464` and publish the port to the host's loopback only
    /// (`-p 127.0.0.1:9464:9464`).
    pub listen: String,
}

impl Default for MetricsSettings {
    fn default() -> Self {
        MetricsSettings {
            enabled: false,
            listen: DEFAULT_METRICS_LISTEN.into(),
        }
    }
}

impl MetricsSettings {
    /// The parsed listen address; the error is `(key, reason)`.
    pub fn listen_addr(&self) -> Result<SocketAddr, (&'static str, String)> {
        self.listen.parse().map_err(|_| {
            (
                "metrics.listen",
                format!(
                    "`{}` is not an address:port such as 127.0.0.1:9464",
                    self.listen
                ),
            )
        })
    }

    /// Checks the address (even when disabled, so a typo is caught before it is switched on).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        self.listen_addr().map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_format_parse() {
        assert_eq!(LogFormat::parse("JSON"), Some(LogFormat::Json));
        assert_eq!(LogFormat::parse("text"), Some(LogFormat::Text));
        assert_eq!(LogFormat::parse("yaml"), None);
    }

    #[test]
    fn heartbeat_settings_validate() {
        assert!(HeartbeatSettings::default().validate().is_ok());
        let bad = HeartbeatSettings {
            max_age_s: 5,
            ..HeartbeatSettings::default()
        };
        assert_eq!(bad.validate().unwrap_err().0, "heartbeat.max_age_s");
    }

    #[test]
    fn metrics_settings_validate() {
        assert!(!MetricsSettings::default().enabled);
        assert!(MetricsSettings::default().validate().is_ok());
        let bad = MetricsSettings {
            enabled: true,
            listen: "localhost".into(),
        };
        assert_eq!(bad.validate().unwrap_err().0, "metrics.listen");
    }
}
