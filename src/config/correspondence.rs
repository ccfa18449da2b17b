//! `[correspondence]`: how the bot plays correspondence games (accepted with
//! `challenge.correspondence`). A correspondence move may take days, so such a game is not held
//! open as a game stream: the bot checks in through `/api/account/playing` every
//! `checkin_period_s`, opens a game's stream when it is our turn, thinks `move_time_s`, and
//! closes the stream `disconnect_time_s` after its move if the opponent has not answered.

use serde::{Deserialize, Serialize};

/// The least check-in period accepted from a config file: one `/api/account/playing` request
/// a minute is far below lichess's limits, and a correspondence move is counted in days.
pub const MIN_CHECKIN_PERIOD_S: u64 = 60;
/// The longest think per correspondence move accepted (one hour of the bot's CPU).
pub const MAX_MOVE_TIME_S: u64 = 3_600;

/// `[correspondence]`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CorrespondenceSettings {
    /// Think time per move, seconds (never more than a tenth of the game's time left).
    pub move_time_s: u64,
    /// How often `/api/account/playing` is asked which correspondence games wait for us.
    pub checkin_period_s: u64,
    /// A game's stream is closed this long after our move when the opponent has not moved.
    pub disconnect_time_s: u64,
}

impl Default for CorrespondenceSettings {
    fn default() -> Self {
        Self {
            move_time_s: 30,
            checkin_period_s: 600,
            disconnect_time_s: 150,
        }
    }
}

impl CorrespondenceSettings {
    /// Checks the bounds; the error names the key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(1..=MAX_MOVE_TIME_S).contains(&self.move_time_s) {
            return Err((
                "correspondence.move_time_s",
                format!("must be between 1 and {MAX_MOVE_TIME_S}"),
            ));
        }
        if self.checkin_period_s < MIN_CHECKIN_PERIOD_S {
            return Err((
                "correspondence.checkin_period_s",
                format!(
                    "must be at least {MIN_CHECKIN_PERIOD_S} (each check-in is a request to \
                     lichess)"
                ),
            ));
        }
        if self.disconnect_time_s == 0 {
            return Err((
                "correspondence.disconnect_time_s",
                "must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigSource, Settings};

    #[test]
    fn bad_values_are_named() {
        assert!(CorrespondenceSettings::default().validate().is_ok());
        for (s, key) in [
            (
                CorrespondenceSettings {
                    move_time_s: 0,
                    ..Default::default()
                },
                "correspondence.move_time_s",
            ),
            (
                CorrespondenceSettings {
                    move_time_s: MAX_MOVE_TIME_S + 1,
                    ..Default::default()
                },
                "correspondence.move_time_s",
            ),
            (
                CorrespondenceSettings {
                    checkin_period_s: 59,
                    ..Default::default()
                },
                "correspondence.checkin_period_s",
            ),
            (
                CorrespondenceSettings {
                    disconnect_time_s: 0,
                    ..Default::default()
                },
                "correspondence.disconnect_time_s",
            ),
        ] {
            assert_eq!(s.validate().unwrap_err().0, key, "{s:?}");
        }
    }

    #[test]
    fn read_from_the_file_and_the_environment_with_the_key_named_on_error() {
        let dir = tempfile::Builder::new()
            .prefix("atomic-bot-corr-")
            .tempdir()
            .unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[correspondence]\nmove_time_s = 5\n").unwrap();
        let load = |env: &[(&str, &str)]| {
            Settings::load(&ConfigSource {
                file: Some(path.clone()),
                file_required: true,
                env: env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            })
        };
        let s = load(&[("ATOMIC_BOT_CORRESPONDENCE__CHECKIN_PERIOD_S", "900")]).unwrap();
        assert_eq!(s.correspondence.move_time_s, 5);
        assert_eq!(s.correspondence.checkin_period_s, 900);
        assert_eq!(s.correspondence.disconnect_time_s, 150);
        let e = load(&[("ATOMIC_BOT_CORRESPONDENCE__CHECKIN_PERIOD_S", "5")]).unwrap_err();
        assert!(
            e.to_string().contains("correspondence.checkin_period_s"),
            "{e}"
        );
        std::fs::write(&path, "[correspondence]\nmove_tim_s = 5\n").unwrap();
        let e = load(&[]).unwrap_err();
        assert!(e.to_string().contains("move_tim_s"), "{e}");
    }
}
