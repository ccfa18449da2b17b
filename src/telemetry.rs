//! Logging: subscriber setup, the per-game span and the per-game summary line.
//!
//! - Logs go to **stderr**: stdout belongs to the UCI protocol, and `docker logs` shows both.
//! - `LOG_FORMAT=json` (set in the container image) gives one JSON object per line for log
//!   shippers; anything else gives human-readable text.
//! - `RUST_LOG` filters as usual (the configured `log.level`, else `info`, when unset; invalid
//!   directives are ignored rather than stopping the bot).
//! - Every game task runs inside [`game_span`], so each line it logs carries the game id (a
//!   `span` object in JSON, a `game{game_id=…}:` prefix in text).
//! - When a game ends, the task builds a [`GameSummary`] from its [`GameStats`] and calls
//!   [`GameSummary::log`]: one line with the result, termination, clock left, average think
//!   time and nodes per second, the numbers an owner greps for after a bad day.

use std::fmt;
use std::time::Duration;

use tracing::Span;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::config::LogFormat;

/// The environment variable that selects the log format.
pub const LOG_FORMAT_ENV: &str = "LOG_FORMAT";

/// The format chosen by `LOG_FORMAT` if set and valid, else `fallback` (typically the value
/// from the configuration file). The environment wins so that the container image can force
/// JSON without touching a mounted configuration.
pub fn format_from_env_or(fallback: LogFormat) -> LogFormat {
    std::env::var(LOG_FORMAT_ENV)
        .ok()
        .and_then(|v| LogFormat::parse(&v))
        .unwrap_or(fallback)
}

/// The log filter: `RUST_LOG` when set, else `default_directives` (the configuration's
/// `log.level`, e.g. `info` or `atomic_bot=debug,info`), else `info`. Invalid directives are
/// skipped (tracing prints a warning) rather than refusing to start a long-running service over a
/// typo.
pub fn env_filter(default_directives: &str) -> EnvFilter {
    let from_env = std::env::var(EnvFilter::DEFAULT_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let directives = from_env.as_deref().unwrap_or(default_directives);
    EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .parse_lossy(directives)
}

/// Builds the subscriber for `format`, writing through `writer`. Separate from [`init`] so that
/// tests can capture the output.
pub fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    writer: W,
) -> Box<dyn tracing::Subscriber + Send + Sync>
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    match format {
        LogFormat::Json => Box::new(
            builder
                .json()
                .with_current_span(true)
                .with_span_list(false)
                .flatten_event(true)
                .finish(),
        ),
        LogFormat::Text => Box::new(builder.with_ansi(false).finish()),
    }
}

/// Installs the global subscriber: stderr, [`env_filter`]`(default_directives)`, `format`.
/// Returns false if one was already installed (for example when called twice in tests), which is
/// harmless.
pub fn init(format: LogFormat, default_directives: &str) -> bool {
    let sub = subscriber(format, env_filter(default_directives), std::io::stderr);
    tracing::subscriber::set_global_default(sub).is_ok()
}

/// The span every game task runs in: its lines carry `game_id`.
pub fn game_span(game_id: &str) -> Span {
    tracing::info_span!("game", game_id = %game_id)
}

/// How a finished game went, from our side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameResult {
    /// We won.
    Win,
    /// We lost.
    Loss,
    /// Nobody won.
    Draw,
    /// The game was aborted (no rating change, not a played game).
    Aborted,
    /// We left the game without lichess's final state (our abort or resign went unanswered,
    /// lichess refused its stream, or its task kept failing): the result is unknown.
    Left,
}

impl GameResult {
    /// Derives the result from lichess's terminal `status` name, the optional `winner`
    /// (`"white"`/`"black"`) and our colour (`"white"`/`"black"`).
    pub fn from_lichess(status: &str, winner: Option<&str>, our_color: &str) -> GameResult {
        if status == "aborted" {
            return GameResult::Aborted;
        }
        match winner {
            Some(w) if w.eq_ignore_ascii_case(our_color) => GameResult::Win,
            Some(_) => GameResult::Loss,
            None => GameResult::Draw,
        }
    }

    /// `"win"`, `"loss"`, `"draw"`, `"aborted"` or `"left"`.
    pub fn as_str(self) -> &'static str {
        match self {
            GameResult::Win => "win",
            GameResult::Loss => "loss",
            GameResult::Draw => "draw",
            GameResult::Aborted => "aborted",
            GameResult::Left => "left",
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Per-game accumulator of our own moves' search statistics. Cheap to update (three adds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GameStats {
    /// Moves we played that went through the search.
    pub moves: u32,
    /// Total wall time the search ran for those moves.
    pub think_total: Duration,
    /// Total nodes (playouts) searched for those moves.
    pub nodes_total: u64,
}

impl GameStats {
    /// Adds one searched move.
    pub fn record_move(&mut self, think: Duration, nodes: u64) {
        self.moves = self.moves.saturating_add(1);
        self.think_total = self.think_total.saturating_add(think);
        self.nodes_total = self.nodes_total.saturating_add(nodes);
    }

    /// Mean think time per searched move (zero before the first).
    pub fn average_think(&self) -> Duration {
        if self.moves == 0 {
            Duration::ZERO
        } else {
            self.think_total / self.moves
        }
    }

    /// Nodes per second over the whole game (zero when nothing was searched).
    pub fn nodes_per_second(&self) -> u64 {
        let secs = self.think_total.as_secs_f64();
        if secs <= 0.0 {
            0
        } else {
            // Saturating float-to-int conversion: a u64 cannot overflow meaningfully here.
            (self.nodes_total as f64 / secs) as u64
        }
    }
}

/// The one line logged per finished game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameSummary {
    /// lichess game id.
    pub game_id: String,
    /// Opponent's display name (or `"?"`).
    pub opponent: String,
    /// Our result.
    pub result: GameResult,
    /// lichess's terminal status name (`mate`, `variantEnd`, `outoftime`, `resign`, …).
    pub termination: String,
    /// Our clock when the game ended, if the game had a clock.
    pub clock_left: Option<Duration>,
    /// Our search statistics.
    pub stats: GameStats,
}

impl GameSummary {
    /// True if we lost on time: the number an owner tunes `move_overhead` against.
    pub fn is_time_forfeit(&self) -> bool {
        self.result == GameResult::Loss && self.termination == "outoftime"
    }

    /// Logs the summary at `info` as structured fields plus a readable message.
    pub fn log(&self) {
        tracing::info!(
            summary = true,
            game_id = %self.game_id,
            opponent = %self.opponent,
            result = self.result.as_str(),
            termination = %self.termination,
            clock_left_ms = self.clock_left.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            our_moves = self.stats.moves,
            avg_think_ms = u64::try_from(self.stats.average_think().as_millis()).unwrap_or(u64::MAX),
            nps = self.stats.nodes_per_second(),
            "{self}"
        );
    }
}

impl fmt::Display for GameSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "game {} finished: {} ({}) vs {}",
            self.game_id, self.result, self.termination, self.opponent
        )?;
        match self.clock_left {
            Some(left) => write!(f, ", clock left {:.1} s", left.as_secs_f64())?,
            None => write!(f, ", no clock")?,
        }
        write!(
            f,
            ", {} moves, avg think {:.2} s, {} nodes/s",
            self.stats.moves,
            self.stats.average_think().as_secs_f64(),
            self.stats.nodes_per_second()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::sync::{Arc, Mutex};

    /// A `MakeWriter` that appends to a shared buffer.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Buffer {
        type Writer = Buffer;
        fn make_writer(&'a self) -> Self::Writer {
            self.clone()
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn sample() -> GameSummary {
        let mut stats = GameStats::default();
        stats.record_move(Duration::from_millis(1000), 500_000);
        stats.record_move(Duration::from_millis(3000), 1_500_000);
        GameSummary {
            game_id: "Kp4Rt9Zx".into(),
            opponent: "BoomFan".into(),
            result: GameResult::Win,
            termination: "variantEnd".into(),
            clock_left: Some(Duration::from_millis(171_000)),
            stats,
        }
    }

    #[test]
    fn results_from_lichess() {
        assert_eq!(
            GameResult::from_lichess("variantEnd", Some("black"), "black"),
            GameResult::Win
        );
        assert_eq!(
            GameResult::from_lichess("outoftime", Some("white"), "black"),
            GameResult::Loss
        );
        assert_eq!(
            GameResult::from_lichess("draw", None, "white"),
            GameResult::Draw
        );
        assert_eq!(
            GameResult::from_lichess("aborted", None, "white"),
            GameResult::Aborted
        );
    }

    #[test]
    fn stats_average_and_nps() {
        let s = sample().stats;
        assert_eq!(s.average_think(), Duration::from_millis(2000));
        assert_eq!(s.nodes_per_second(), 500_000);
        assert_eq!(GameStats::default().nodes_per_second(), 0);
        assert_eq!(GameStats::default().average_think(), Duration::ZERO);
    }

    #[test]
    fn time_forfeit_detected() {
        let mut s = sample();
        assert!(!s.is_time_forfeit());
        s.result = GameResult::Loss;
        s.termination = "outoftime".into();
        assert!(s.is_time_forfeit());
    }

    #[test]
    fn json_summary_inside_game_span() {
        let buf = Buffer::default();
        let sub = subscriber(LogFormat::Json, EnvFilter::new("info"), buf.clone());
        tracing::subscriber::with_default(sub, || {
            let span = game_span("Kp4Rt9Zx");
            let _guard = span.enter();
            tracing::info!("thinking");
            sample().log();
        });
        let text = buf.text();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["span"]["game_id"], "Kp4Rt9Zx");
        let summary = &lines[1];
        assert_eq!(summary["span"]["name"], "game");
        assert_eq!(summary["result"], "win");
        assert_eq!(summary["termination"], "variantEnd");
        assert_eq!(summary["clock_left_ms"], 171_000);
        assert_eq!(summary["avg_think_ms"], 2000);
        assert_eq!(summary["nps"], 500_000);
        assert_eq!(summary["level"], "INFO");
    }

    #[test]
    fn text_summary_line() {
        let buf = Buffer::default();
        let sub = subscriber(LogFormat::Text, EnvFilter::new("info"), buf.clone());
        tracing::subscriber::with_default(sub, || {
            let _guard = game_span("Kp4Rt9Zx").entered();
            sample().log();
        });
        let text = buf.text();
        assert!(text.contains("game{game_id=Kp4Rt9Zx}"), "{text}");
        assert!(
            text.contains("game Kp4Rt9Zx finished: win (variantEnd) vs BoomFan, clock left 171.0 s, 2 moves, avg think 2.00 s, 500000 nodes/s"),
            "{text}"
        );
    }

    #[test]
    fn filter_drops_debug() {
        let buf = Buffer::default();
        let sub = subscriber(LogFormat::Text, EnvFilter::new("warn"), buf.clone());
        tracing::subscriber::with_default(sub, || {
            tracing::info!("hidden");
            tracing::warn!("shown");
        });
        let text = buf.text();
        assert!(!text.contains("hidden") && text.contains("shown"), "{text}");
    }
}
