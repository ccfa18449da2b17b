//! `[online]`: the move sources lichess offers besides our own search — the atomic tablebase,
//! the opening explorer and the cloud evaluations (`lichess::online`). Each is off by default:
//! each costs a request (and its latency) per move it is asked for, counts against lichess's
//! rate limits, and sends the bot's token to the configured host.

use serde::{Deserialize, Serialize};

/// The largest positions the lichess atomic tablebase serves (kings included).
pub const TABLEBASE_MAX_UNITS: u32 = 6;

/// `[online]`: the three sources.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct OnlineSettings {
    /// `[online.tablebase]`.
    pub tablebase: TablebaseSettings,
    /// `[online.explorer]`.
    pub explorer: ExplorerSettings,
    /// `[online.cloud_eval]`.
    pub cloud_eval: CloudEvalSettings,
}

/// `[online.tablebase]`: `GET {url}/atomic?fen=…` in positions of at most `max_pieces` units.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TablebaseSettings {
    /// Ask the tablebase at all.
    pub enabled: bool,
    /// Its host (lichess: `https://tablebase.lichess.org`).
    pub url: String,
    /// Ask only with at most this many units on the board, kings included (at most 6).
    pub max_pieces: u32,
    /// Give up on an answer after this long (also never more than a tenth of the move's
    /// budget); the search then plays.
    pub timeout_ms: u64,
}

impl Default for TablebaseSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            url: "https://tablebase.lichess.org".into(),
            max_pieces: TABLEBASE_MAX_UNITS,
            timeout_ms: 2_000,
        }
    }
}

/// `[online.explorer]`: `GET {url}/lichess?variant=atomic&fen=…` in the first `max_ply` plies.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ExplorerSettings {
    /// Ask the explorer at all.
    pub enabled: bool,
    /// Its host (lichess: `https://explorer.lichess.org`).
    pub url: String,
    /// Ask only while fewer than this many plies were played.
    pub max_ply: u32,
    /// lichess speeds whose games count (`ultraBullet`, `bullet`, `blitz`, `rapid`,
    /// `classical`, `correspondence`).
    pub speeds: Vec<String>,
    /// Rating groups whose games count (lichess's buckets: 0, 1000, 1200, 1400, 1600, 1800,
    /// 2000, 2200, 2500).
    pub ratings: Vec<u32>,
    /// A move needs at least this many games.
    pub min_games: u64,
    /// A move needs at least this score for the side that plays it (wins + half the draws).
    pub min_score: f64,
    /// The book move is refused when a short search finds it worse than its own best by more
    /// than this (centipawns), or a proven loss.
    pub max_loss_cp: i32,
    /// Time of that short search (both searches together; also at most a quarter of the move's
    /// budget).
    pub check_ms: u64,
    /// Seed of the weighted choice; 0 draws one per game (a fixed seed repeats its choices).
    pub seed: u64,
    /// Give up on an answer after this long (also never more than a tenth of the move's
    /// budget).
    pub timeout_ms: u64,
}

impl Default for ExplorerSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            url: "https://explorer.lichess.org".into(),
            max_ply: 16,
            speeds: vec![
                "bullet".into(),
                "blitz".into(),
                "rapid".into(),
                "classical".into(),
            ],
            ratings: vec![1800, 2000, 2200, 2500],
            min_games: 10,
            min_score: 0.45,
            max_loss_cp: 100,
            check_ms: 200,
            seed: 0,
            timeout_ms: 2_000,
        }
    }
}

/// `[online.cloud_eval]`: `GET {lichess.url}/api/cloud-eval?fen=…&variant=atomic`, a book of
/// evaluated lines in the opening (lichess stores atomic evaluations only for early, balanced
/// positions: elsewhere it answers 404).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CloudEvalSettings {
    /// Ask for cloud evaluations at all.
    pub enabled: bool,
    /// Ask only while fewer than this many plies were played.
    pub max_ply: u32,
    /// Use an evaluation only from at least this depth.
    pub min_depth: u32,
    /// Give up on an answer after this long (also never more than a tenth of the move's
    /// budget).
    pub timeout_ms: u64,
}

impl Default for CloudEvalSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            max_ply: 16,
            min_depth: 20,
            timeout_ms: 2_000,
        }
    }
}

/// lichess's explorer speeds.
const SPEEDS: &[&str] = &[
    "ultraBullet",
    "bullet",
    "blitz",
    "rapid",
    "classical",
    "correspondence",
];
/// lichess's explorer rating groups.
const RATINGS: &[u32] = &[0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500];

impl OnlineSettings {
    /// Checks ranges; the error names the key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let t = &self.tablebase;
        let e = &self.explorer;
        for (key, url) in [
            ("online.tablebase.url", &t.url),
            ("online.explorer.url", &e.url),
        ] {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err((key, format!("`{url}` is not an http(s) URL")));
            }
        }
        if !(1..=TABLEBASE_MAX_UNITS).contains(&t.max_pieces) {
            return Err((
                "online.tablebase.max_pieces",
                format!("must be between 1 and {TABLEBASE_MAX_UNITS} (the atomic tablebase)"),
            ));
        }
        for (key, v) in [
            ("online.tablebase.timeout_ms", t.timeout_ms),
            ("online.explorer.timeout_ms", e.timeout_ms),
            ("online.cloud_eval.timeout_ms", self.cloud_eval.timeout_ms),
        ] {
            if v == 0 {
                return Err((key, "must be greater than 0".into()));
            }
        }
        if let Some(s) = e.speeds.iter().find(|s| !SPEEDS.contains(&s.as_str())) {
            return Err((
                "online.explorer.speeds",
                format!("`{s}` is not one of {}", SPEEDS.join(", ")),
            ));
        }
        if let Some(r) = e.ratings.iter().find(|r| !RATINGS.contains(r)) {
            return Err((
                "online.explorer.ratings",
                format!("{r} is not a lichess rating group ({RATINGS:?})"),
            ));
        }
        if !(0.0..=1.0).contains(&e.min_score) {
            return Err((
                "online.explorer.min_score",
                "must be between 0 and 1".into(),
            ));
        }
        if e.max_loss_cp < 0 {
            return Err(("online.explorer.max_loss_cp", "must not be negative".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigSource, Settings};

    #[test]
    fn read_from_the_file_and_the_environment() {
        let dir = tempfile::Builder::new()
            .prefix("atomic-bot-online-")
            .tempdir()
            .unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "[online.tablebase]\nenabled = true\nmax_pieces = 5\n[online.explorer]\nratings = [2000]\n",
        )
        .unwrap();
        let env = [
            ("ATOMIC_BOT_ONLINE__EXPLORER__SPEEDS", "bullet,blitz"),
            ("ATOMIC_BOT_ONLINE__CLOUD_EVAL__MIN_DEPTH", "30"),
        ];
        let s = Settings::load(&ConfigSource {
            file: Some(path.clone()),
            file_required: true,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        })
        .unwrap();
        assert!(s.online.tablebase.enabled);
        assert_eq!(s.online.tablebase.max_pieces, 5);
        assert_eq!(s.online.explorer.ratings, vec![2000]);
        assert_eq!(s.online.explorer.speeds, vec!["bullet", "blitz"]);
        assert_eq!(s.online.cloud_eval.min_depth, 30);
        assert!(!s.online.explorer.enabled);
        std::fs::write(&path, "[online.tablebase]\nmax_pieces = 8\n").unwrap();
        let e = Settings::load(&ConfigSource {
            file: Some(path),
            file_required: true,
            env: Default::default(),
        })
        .unwrap_err();
        assert!(e.to_string().contains("online.tablebase.max_pieces"), "{e}");
    }

    #[test]
    fn bad_values_are_named() {
        assert!(OnlineSettings::default().validate().is_ok());
        let mut s = OnlineSettings::default();
        s.tablebase.max_pieces = 7;
        assert_eq!(s.validate().unwrap_err().0, "online.tablebase.max_pieces");
        let mut s = OnlineSettings::default();
        s.explorer.speeds = vec!["blitz".into(), "lightning".into()];
        let (key, reason) = s.validate().unwrap_err();
        assert_eq!(key, "online.explorer.speeds");
        assert!(reason.contains("lightning"), "{reason}");
        let mut s = OnlineSettings::default();
        s.explorer.ratings = vec![1900];
        assert_eq!(s.validate().unwrap_err().0, "online.explorer.ratings");
        let mut s = OnlineSettings::default();
        s.tablebase.url = "tablebase.lichess.org".into();
        assert_eq!(s.validate().unwrap_err().0, "online.tablebase.url");
        let mut s = OnlineSettings::default();
        s.explorer.min_score = 1.5;
        assert_eq!(s.validate().unwrap_err().0, "online.explorer.min_score");
    }
}
