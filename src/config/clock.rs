//! The one clock notation of the bot, lichess's: minutes + increment seconds (`1+0` is one
//! minute without increment, `0.5+0` thirty seconds, `3+2` three minutes plus two seconds a
//! move). `matchmaking.time_controls`, `atomic-bot demo --clock` and `atomic-bot arena --clock`
//! all read it through [`TimeControl`]'s `FromStr`, so a clock means the same everywhere.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A real-time clock that lichess lets a bot play: an initial time and an increment, written
/// `"<minutes>+<increment seconds>"` (`"3+2"`, `"0.5+0"`; lichess's own `"½+0"`, `"¼+1"` and
/// `"¾+0"` are read too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TimeControl {
    /// Initial clock in seconds.
    pub limit_s: u32,
    /// Increment in seconds.
    pub increment_s: u32,
}

impl TimeControl {
    /// lichess's speed estimate (`limit + 40 × increment` seconds).
    pub fn estimated_s(self) -> u32 {
        self.limit_s + 40 * self.increment_s
    }
}

/// The minutes of a clock: a number, or one of the fractions lichess writes (`¼`, `½`, `¾`,
/// `1½`).
fn minutes(text: &str) -> Option<f64> {
    match text {
        "¼" => Some(0.25),
        "½" => Some(0.5),
        "¾" => Some(0.75),
        "1½" => Some(1.5),
        _ => text.parse().ok(),
    }
}

impl FromStr for TimeControl {
    type Err = String;

    /// Parses `"M+I"` and checks it against what lichess accepts for a challenge: a limit of 0,
    /// 15, 30, 45 or 90 s or a whole number of minutes up to 180, an increment up to 60 s, and no
    /// UltraBullet (bots may not play it).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (limit, increment) = text.trim().split_once('+').ok_or_else(|| {
            format!(
                "time control {text:?}: expected \"minutes+increment\" as lichess writes it, \
                 like \"3+2\" or \"0.5+0\""
            )
        })?;
        let minutes = minutes(limit.trim())
            .filter(|m| m.is_finite())
            .ok_or_else(|| format!("time control {text:?}: bad minutes {limit:?}"))?;
        let increment_s: u32 = increment
            .trim()
            .parse()
            .map_err(|_| format!("time control {text:?}: bad increment {increment:?}"))?;
        if !(0.0..=180.0).contains(&minutes) {
            return Err(format!("time control {text:?}: minutes must be 0 to 180"));
        }
        let limit = minutes * 60.0;
        let limit_s = limit.round() as u32;
        let valid_limit = (limit - f64::from(limit_s)).abs() < 1e-6
            && (matches!(limit_s, 0 | 15 | 30 | 45 | 90) || limit_s.is_multiple_of(60));
        if !valid_limit {
            return Err(format!(
                "time control {text:?}: lichess accepts 0, 0.25, 0.5, 0.75, 1.5 or a whole number of minutes"
            ));
        }
        if increment_s > 60 {
            return Err(format!(
                "time control {text:?}: increment must be at most 60 s"
            ));
        }
        let tc = TimeControl {
            limit_s,
            increment_s,
        };
        if tc.estimated_s() < 30 {
            return Err(format!(
                "time control {text:?}: UltraBullet, which bots may not play"
            ));
        }
        Ok(tc)
    }
}

impl TryFrom<String> for TimeControl {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<TimeControl> for String {
    fn from(tc: TimeControl) -> String {
        tc.to_string()
    }
}

/// Written with ASCII decimals (`0.5+0`), which every configuration file and shell takes.
impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.limit_s {
            15 => write!(f, "0.25+{}", self.increment_s),
            30 => write!(f, "0.5+{}", self.increment_s),
            45 => write!(f, "0.75+{}", self.increment_s),
            90 => write!(f, "1.5+{}", self.increment_s),
            s => write!(f, "{}+{}", s / 60, self.increment_s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_controls_parse_and_validate() {
        assert_eq!(
            "3+2".parse(),
            Ok(TimeControl {
                limit_s: 180,
                increment_s: 2
            })
        );
        assert_eq!(
            "0.5+1".parse(),
            Ok(TimeControl {
                limit_s: 30,
                increment_s: 1
            })
        );
        assert_eq!("1.5+0".parse::<TimeControl>().unwrap().to_string(), "1.5+0");
        assert_eq!(
            " 10 + 5 ".parse::<TimeControl>().unwrap().to_string(),
            "10+5"
        );
        assert!(
            "0.25+0"
                .parse::<TimeControl>()
                .unwrap_err()
                .contains("UltraBullet")
        );
        assert!("0+0".parse::<TimeControl>().is_err());
        assert!("0+1".parse::<TimeControl>().is_ok()); // 40 s estimated: bullet
        assert!("2.5+0".parse::<TimeControl>().is_err());
        assert!("3+61".parse::<TimeControl>().is_err());
        assert!("181+0".parse::<TimeControl>().is_err());
        assert!("3".parse::<TimeControl>().is_err());
        assert!("x+1".parse::<TimeControl>().is_err());
    }

    /// The notation is minutes, as on lichess: `1+0` is a minute, not a second.
    #[test]
    fn minutes_not_seconds() {
        let one = "1+0".parse::<TimeControl>().unwrap();
        assert_eq!((one.limit_s, one.increment_s), (60, 0));
        assert!("60+1".parse::<TimeControl>().is_ok()); // an hour
        assert!("30+1".parse::<TimeControl>().unwrap().limit_s == 1_800);
    }

    /// lichess writes `½+0`, `¼+1`, `¾+0` and `1½+0` (and `1.5+0`); all are read.
    #[test]
    fn lichess_fractions() {
        for (text, limit_s) in [("½+0", 30), ("¼+1", 15), ("¾+0", 45), ("1½+0", 90)] {
            assert_eq!(
                text.parse::<TimeControl>().unwrap().limit_s,
                limit_s,
                "{text}"
            );
        }
        assert_eq!("½+0".parse::<TimeControl>().unwrap().to_string(), "0.5+0");
        assert!("0.01+0".parse::<TimeControl>().is_err());
        assert!("1+0.5".parse::<TimeControl>().is_err());
        assert!("NaN+0".parse::<TimeControl>().is_err());
        assert!("inf+0".parse::<TimeControl>().is_err());
    }
}
