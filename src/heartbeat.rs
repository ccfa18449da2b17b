//! Liveness heartbeat for container health checks.
//!
//! The bot has no inbound port and the runtime image has no shell or curl, so Docker's
//! `HEALTHCHECK` runs `atomic-bot healthcheck`, a second short-lived process. The two processes
//! talk through one small file: the running bot writes the current time into it on every line of
//! the lichess event stream (lichess sends a keep-alive newline every 6-7 s), and the health check
//! reads it back. A stale file therefore means the event stream is dead or stuck, which is exactly
//! the failure mode (a silent socket) that a restart fixes.
//!
//! Writes are cheap and atomic:
//! - at most one write per `min_interval` ([`Heartbeat::with_min_interval`]) (default 1 s), whatever the line rate, so a
//!   burst of events costs one syscall triple, not one per line;
//! - the time goes into a sibling temporary file which is then renamed over the heartbeat file,
//!   so a reader never sees a half-written file.
//!
//! The file holds the Unix time in milliseconds as decimal text (`1780000000123\n`), readable by
//! humans and by `cat` in a debug shell; the file's mtime is not used because some overlay and
//! network file systems round or cache it.

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::config::HeartbeatSettings;

/// Writes the heartbeat file, rate-limited so that it can be called on every stream line.
#[derive(Debug)]
pub struct Heartbeat {
    /// Where the heartbeat goes.
    path: PathBuf,
    /// The sibling temporary file that is renamed over `path` (same directory, so the rename is
    /// atomic on POSIX file systems).
    tmp_path: PathBuf,
    /// Minimum time between two writes; calls in between are no-ops.
    min_interval: Duration,
    /// When we last wrote successfully; `None` before the first write, so that the first beat is
    /// always written.
    last_write: Option<Instant>,
    /// Whether the last write failed; used to log a failure once rather than every second.
    failing: bool,
}

impl Heartbeat {
    /// The writer for the event-stream loop, or `None` when `[heartbeat]` is disabled.
    pub fn from_settings(settings: &HeartbeatSettings) -> Option<Heartbeat> {
        settings.enabled.then(|| Heartbeat::new(&settings.path))
    }

    /// A heartbeat writing to `path` at most once per second.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let mut tmp_name = path
            .file_name()
            .map(std::ffi::OsStr::to_os_string)
            .unwrap_or_default();
        tmp_name.push(".tmp");
        let tmp_path = path.with_file_name(tmp_name);
        Heartbeat {
            path,
            tmp_path,
            min_interval: Duration::from_secs(1),
            last_write: None,
            failing: false,
        }
    }

    /// Changes the minimum interval between writes (tests use zero).
    pub fn with_min_interval(mut self, min_interval: Duration) -> Self {
        self.min_interval = min_interval;
        self
    }

    /// The file this heartbeat writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records that the event stream is alive. Writes the file unless the previous write was less
    /// than `min_interval` ago. Never fails: a health file that cannot be written must not stop
    /// the bot, so errors are logged (once per failing streak) and the next beat retries.
    pub fn beat(&mut self) {
        let now = Instant::now();
        if let Some(last) = self.last_write
            && now.duration_since(last) < self.min_interval
        {
            return;
        }
        match self.write_now(SystemTime::now()) {
            Ok(()) => {
                if self.failing {
                    tracing::info!(path = %self.path.display(), "heartbeat file writable again");
                }
                self.failing = false;
                self.last_write = Some(now);
            }
            Err(err) => {
                if !self.failing {
                    tracing::warn!(path = %self.path.display(), error = %err,
                        "cannot write the heartbeat file; the container health check will fail");
                }
                self.failing = true;
            }
        }
    }

    /// Writes `time` into the heartbeat file atomically (temporary file, then rename).
    pub fn write_now(&self, time: SystemTime) -> io::Result<()> {
        let millis = unix_millis(time);
        {
            let mut file = fs::File::create(&self.tmp_path)?;
            writeln!(file, "{millis}")?;
        }
        fs::rename(&self.tmp_path, &self.path)
    }
}

/// What the health check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// The heartbeat is at most `max_age` old (`age` may be zero if the clock went backwards).
    Fresh {
        /// How old the heartbeat is.
        age: Duration,
    },
    /// The heartbeat is older than `max_age`.
    Stale {
        /// How old the heartbeat is.
        age: Duration,
    },
    /// No heartbeat file: the bot has not connected yet or is not running.
    Missing,
    /// The file exists but does not hold a timestamp.
    Invalid,
}

impl Health {
    /// The process exit code for Docker's `HEALTHCHECK`: 0 healthy, 1 unhealthy (Docker reserves
    /// 2, so it is never used).
    pub fn exit_code(self) -> i32 {
        match self {
            Health::Fresh { .. } => 0,
            Health::Stale { .. } | Health::Missing | Health::Invalid => 1,
        }
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Health::Fresh { age } => write!(
                f,
                "healthy: last event-stream line {} ms ago",
                age.as_millis()
            ),
            Health::Stale { age } => write!(
                f,
                "unhealthy: last event-stream line {} s ago (stale)",
                age.as_secs()
            ),
            Health::Missing => write!(f, "unhealthy: no heartbeat file (bot not connected yet?)"),
            Health::Invalid => write!(f, "unhealthy: heartbeat file holds no timestamp"),
        }
    }
}

/// Checks the heartbeat file at `path` against `max_age`, as of `now`.
pub fn check(path: &Path, max_age: Duration, now: SystemTime) -> Health {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Health::Missing,
        Err(_) => return Health::Invalid,
    };
    let Ok(millis) = text.trim().parse::<u64>() else {
        return Health::Invalid;
    };
    let age = Duration::from_millis(unix_millis(now).saturating_sub(millis));
    if age <= max_age {
        Health::Fresh { age }
    } else {
        Health::Stale { age }
    }
}

/// Milliseconds since the Unix epoch (0 for times before it).
fn unix_millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory, removed when dropped.
    fn temp_dir(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("atomic-bot-hb-{name}-"))
            .tempdir()
            .unwrap()
    }

    #[test]
    fn disabled_settings_give_no_writer() {
        let off = HeartbeatSettings {
            enabled: false,
            ..HeartbeatSettings::default()
        };
        assert!(Heartbeat::from_settings(&off).is_none());
        assert!(Heartbeat::from_settings(&HeartbeatSettings::default()).is_some());
    }

    #[test]
    fn missing_file_is_unhealthy() {
        let dir = temp_dir("missing");
        let health = check(
            &dir.path().join("nope"),
            crate::config::DEFAULT_HEARTBEAT_MAX_AGE,
            SystemTime::now(),
        );
        assert_eq!(health, Health::Missing);
        assert_eq!(health.exit_code(), 1);
    }

    #[test]
    fn fresh_then_stale() {
        let dir = temp_dir("fresh");
        let path = dir.path().join("hb");
        let mut hb = Heartbeat::new(&path);
        hb.beat();
        let now = SystemTime::now();
        let health = check(&path, Duration::from_secs(90), now);
        assert!(matches!(health, Health::Fresh { .. }), "{health:?}");
        assert_eq!(health.exit_code(), 0);
        let later = now + Duration::from_secs(91);
        let health = check(&path, Duration::from_secs(90), later);
        assert!(
            matches!(health, Health::Stale { age } if age >= Duration::from_secs(90)),
            "{health:?}"
        );
        assert_eq!(health.exit_code(), 1);
        assert!(
            !dir.path().join("hb.tmp").exists(),
            "temporary file left behind"
        );
    }

    #[test]
    fn clock_going_backwards_counts_as_fresh() {
        let dir = temp_dir("backwards");
        let path = dir.path().join("hb");
        let now = SystemTime::now();
        Heartbeat::new(&path)
            .write_now(now + Duration::from_secs(5))
            .unwrap();
        assert_eq!(
            check(&path, Duration::from_secs(1), now),
            Health::Fresh {
                age: Duration::ZERO
            }
        );
    }

    #[test]
    fn garbage_is_invalid() {
        let dir = temp_dir("garbage");
        let path = dir.path().join("hb");
        fs::write(&path, "not a time").unwrap();
        let health = check(
            &path,
            crate::config::DEFAULT_HEARTBEAT_MAX_AGE,
            SystemTime::now(),
        );
        assert_eq!(health, Health::Invalid);
        assert_eq!(health.exit_code(), 1);
    }

    #[test]
    fn beats_are_rate_limited() {
        let dir = temp_dir("rate");
        let path = dir.path().join("hb");
        let mut hb = Heartbeat::new(&path).with_min_interval(Duration::from_secs(3600));
        hb.beat();
        fs::write(&path, "0\n").unwrap();
        hb.beat(); // within the interval: must not rewrite
        assert_eq!(fs::read_to_string(&path).unwrap(), "0\n");
        let mut hb = Heartbeat::new(&path).with_min_interval(Duration::ZERO);
        hb.beat();
        assert_ne!(fs::read_to_string(&path).unwrap(), "0\n");
    }

    #[test]
    fn unwritable_directory_does_not_panic() {
        let mut hb = Heartbeat::new("/nonexistent-dir-for-atomic-bot/hb");
        hb.beat();
        hb.beat();
        assert!(hb.failing);
    }
}
