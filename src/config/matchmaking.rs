//! The `[matchmaking]` section: whether, when and whom the bot challenges when it is idle
//! (the policy that acts on it is `lichess::matchmaking`).

use serde::{Deserialize, Serialize};

use super::TimeControl;

/// The `[matchmaking]` configuration section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchmakingConfig {
    /// Challenge other bots when idle. Off by default: it spends the daily bot-game budget.
    pub enabled: bool,
    /// Seconds without any game before we challenge.
    pub idle_s: u64,
    /// Minimum seconds between two challenges.
    pub min_interval_s: u64,
    /// Seconds after which an unanswered challenge is cancelled (lichess expires real-time
    /// challenges after about 20 s anyway).
    pub challenge_timeout_s: u64,
    /// Time controls to pick from, at random, for each challenge.
    pub time_controls: Vec<TimeControl>,
    /// Rated challenges (else casual).
    pub rated: bool,
    /// Lowest opponent atomic rating.
    pub min_rating: u32,
    /// Highest opponent atomic rating.
    pub max_rating: u32,
    /// Largest rating difference from our own atomic rating (0 = no relative limit).
    pub max_rating_diff: u32,
    /// Stop challenging after this many bot-versus-bot games in 24 h (lichess's limit is 100,
    /// incoming games included).
    pub daily_limit: u32,
    /// Skip an opponent after this many declines or unanswered challenges.
    pub max_declines: u32,
    /// Skip an opponent after this many aborted games against it.
    pub max_aborts: u32,
    /// Hours an opponent is skipped after too many declines or aborts.
    pub backoff_h: u64,
    /// Bots never to challenge (lichess usernames, case-insensitive).
    pub block_list: Vec<String>,
}

impl Default for MatchmakingConfig {
    fn default() -> Self {
        MatchmakingConfig {
            enabled: false,
            idle_s: 300,
            min_interval_s: 60,
            challenge_timeout_s: 25,
            time_controls: vec![
                TimeControl {
                    limit_s: 60,
                    increment_s: 1,
                },
                TimeControl {
                    limit_s: 180,
                    increment_s: 2,
                },
                TimeControl {
                    limit_s: 300,
                    increment_s: 3,
                },
            ],
            rated: false,
            min_rating: 0,
            max_rating: 4000,
            max_rating_diff: 300,
            daily_limit: 80,
            max_declines: 2,
            max_aborts: 2,
            backoff_h: 24,
            block_list: Vec::new(),
        }
    }
}

impl MatchmakingConfig {
    /// Checks bounds; the error is `(key, reason)`.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.enabled && self.time_controls.is_empty() {
            return Err((
                "matchmaking.time_controls",
                "must list at least one time control when enabled".into(),
            ));
        }
        if self.min_rating > self.max_rating {
            return Err((
                "matchmaking.min_rating",
                format!(
                    "{} is above matchmaking.max_rating ({})",
                    self.min_rating, self.max_rating
                ),
            ));
        }
        if self.daily_limit > 100 {
            return Err((
                "matchmaking.daily_limit",
                format!(
                    "{} is above lichess's 100 bot games per day",
                    self.daily_limit
                ),
            ));
        }
        if self.challenge_timeout_s == 0 {
            return Err((
                "matchmaking.challenge_timeout_s",
                "must be at least 1".into(),
            ));
        }
        if self.max_declines == 0 {
            return Err(("matchmaking.max_declines", "must be at least 1".into()));
        }
        if self.max_aborts == 0 {
            return Err(("matchmaking.max_aborts", "must be at least 1".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> MatchmakingConfig {
        MatchmakingConfig {
            enabled: true,
            idle_s: 60,
            min_interval_s: 30,
            ..MatchmakingConfig::default()
        }
    }

    #[test]
    fn config_validation_names_keys() {
        assert!(MatchmakingConfig::default().validate().is_ok());
        let bad = MatchmakingConfig {
            min_rating: 2000,
            max_rating: 1000,
            ..cfg()
        };
        assert!(bad.validate().unwrap_err().0 == "matchmaking.min_rating");
        let bad = MatchmakingConfig {
            daily_limit: 101,
            ..cfg()
        };
        assert!(bad.validate().unwrap_err().0 == "matchmaking.daily_limit");
        let bad = MatchmakingConfig {
            time_controls: vec![],
            ..cfg()
        };
        assert!(bad.validate().unwrap_err().0 == "matchmaking.time_controls");
    }

    #[test]
    fn config_deserializes_time_controls() {
        let json = r#"{"enabled":true,"time_controls":["1+0","3+2"]}"#;
        let c: MatchmakingConfig = serde_json::from_str(json).unwrap();
        assert_eq!(c.time_controls.len(), 2);
        assert_eq!(c.idle_s, 300);
        let err = serde_json::from_str::<MatchmakingConfig>(r#"{"time_controls":["0.25+0"]}"#)
            .unwrap_err();
        assert!(err.to_string().contains("UltraBullet"), "{err}");
        assert!(serde_json::from_str::<MatchmakingConfig>(r#"{"idel_s":3}"#).is_err());
    }
}
