//! When to challenge: [`Matchmaker::decide`] weighs the bot's [`Load`], idleness, our pending
//! challenge, the interval since the last one, rate-limit pauses and the daily bot-game limit,
//! and says [`Decision::Challenge`] or why to wait and until when.

use std::time::Duration;

use tokio::time::Instant;

use super::bookkeeping::{DAY, Matchmaker};

/// The bot's current load, from the game supervisor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Load {
    /// Games being played.
    pub games_running: usize,
    /// Incoming challenges accepted (or queued) whose games have not started.
    pub challenges_waiting: usize,
    /// The configured concurrency limit.
    pub max_games: usize,
}

/// Why no challenge goes out now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitReason {
    /// Matchmaking is off.
    Disabled,
    /// A game is running or about to start.
    Busy,
    /// Our previous challenge has not been answered.
    Pending,
    /// Not idle for long enough yet.
    Idle,
    /// Too soon after the previous challenge.
    Interval,
    /// Paused after a rate limit.
    RateLimited,
    /// `daily_limit` bot games in the last 24 h.
    DailyLimit,
}

/// What [`Matchmaker::decide`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Go: fetch the online bots and [`Matchmaker::choose`] one.
    Challenge,
    /// Not now; ask again at `until` (or on the next tick if `None`).
    Wait {
        /// Why not.
        reason: WaitReason,
        /// When the reason may have passed.
        until: Option<Instant>,
    },
}

impl Matchmaker {
    /// Whether to challenge now, given the bot's `load`. Also tracks idleness, so call it
    /// regularly (every few seconds).
    pub fn decide(&mut self, now: Instant, load: Load) -> Decision {
        let wait = |reason, until| Decision::Wait { reason, until };
        if !self.config.enabled {
            return wait(WaitReason::Disabled, None);
        }
        if self.pending.is_some() || self.in_flight {
            return wait(WaitReason::Pending, None);
        }
        let used = load.games_running + load.challenges_waiting;
        if used > 0 || used + 1 > load.max_games {
            self.idle_since = None;
            return wait(WaitReason::Busy, None);
        }
        let idle_since = *self.idle_since.get_or_insert(now);
        let idle_until = idle_since + Duration::from_secs(self.config.idle_s);
        if now < idle_until {
            return wait(WaitReason::Idle, Some(idle_until));
        }
        if let Some(until) = self.daily.until(now) {
            return wait(WaitReason::DailyLimit, Some(until));
        }
        if let Some(until) = self.paused_until
            && now < until
        {
            return wait(WaitReason::RateLimited, Some(until));
        }
        if let Some(last) = self.last_challenge {
            let next = last + Duration::from_secs(self.config.min_interval_s);
            if now < next {
                return wait(WaitReason::Interval, Some(next));
            }
        }
        if self.bot_games_today(now) >= self.config.daily_limit as usize {
            let until = self.bot_games.front().map(|&first| first + DAY);
            return wait(WaitReason::DailyLimit, until);
        }
        Decision::Challenge
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MatchmakingConfig;
    use crate::lichess::matchmaking::api::ChallengeError;
    use crate::lichess::matchmaking::bookkeeping::DailyLimit;
    use crate::lichess::matchmaking::test_support::{cfg, idle, secs};

    #[test]
    fn disabled_by_default() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(MatchmakingConfig::default(), t0, 1);
        assert_eq!(
            m.decide(t0 + secs(10_000), idle(4)),
            Decision::Wait {
                reason: WaitReason::Disabled,
                until: None
            }
        );
    }

    #[test]
    fn waits_for_idle_time_and_resets_when_busy() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1);
        assert_eq!(
            m.decide(t0 + secs(10), idle(1)),
            Decision::Wait {
                reason: WaitReason::Idle,
                until: Some(t0 + secs(60))
            }
        );
        assert_eq!(m.decide(t0 + secs(60), idle(1)), Decision::Challenge);
        let busy = Load {
            games_running: 1,
            ..idle(2)
        };
        assert!(matches!(
            m.decide(t0 + secs(61), busy),
            Decision::Wait {
                reason: WaitReason::Busy,
                ..
            }
        ));
        // idle again: the clock restarts
        assert!(matches!(
            m.decide(t0 + secs(70), idle(2)),
            Decision::Wait {
                reason: WaitReason::Idle,
                ..
            }
        ));
        assert_eq!(m.decide(t0 + secs(130), idle(2)), Decision::Challenge);
    }

    #[test]
    fn never_exceeds_max_games() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1);
        let late = t0 + secs(1000);
        // an incoming challenge accepted but not started counts
        let waiting = Load {
            challenges_waiting: 1,
            ..idle(3)
        };
        assert!(matches!(
            m.decide(late, waiting),
            Decision::Wait {
                reason: WaitReason::Busy,
                ..
            }
        ));
        // max_games = 0: never
        assert!(matches!(
            m.decide(late, idle(0)),
            Decision::Wait {
                reason: WaitReason::Busy,
                ..
            }
        ));
        // our pending challenge counts for the incoming policy, and blocks a second one
        let mut m = Matchmaker::new(cfg(), t0, 1);
        assert_eq!(m.decide(late, idle(1)), Decision::Challenge);
        m.challenge_sent("abcd1234", "otherbot", late);
        assert_eq!(m.pending_challenges(), 1);
        assert!(matches!(
            m.decide(late + secs(100), idle(1)),
            Decision::Wait {
                reason: WaitReason::Pending,
                ..
            }
        ));
    }

    #[test]
    fn min_interval_between_challenges() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1);
        let t = t0 + secs(100);
        m.challenge_sent("c1", "a", t);
        m.challenge_declined("c1", t + secs(2));
        assert_eq!(m.pending_challenges(), 0);
        assert_eq!(
            m.decide(t + secs(5), idle(1)),
            Decision::Wait {
                reason: WaitReason::Interval,
                until: Some(t + secs(30))
            }
        );
        assert_eq!(m.decide(t + secs(30), idle(1)), Decision::Challenge);
    }

    #[test]
    fn in_flight_attempt_counts_as_a_used_slot() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1);
        m.set_in_flight(true);
        assert_eq!(m.pending_challenges(), 1);
        assert!(matches!(
            m.decide(t0 + secs(1000), idle(1)),
            Decision::Wait {
                reason: WaitReason::Pending,
                ..
            }
        ));
        m.set_in_flight(false);
        assert_eq!(m.pending_challenges(), 0);
    }

    #[test]
    fn daily_limit_counts_all_bot_games() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(
            MatchmakingConfig {
                daily_limit: 2,
                ..cfg()
            },
            t0,
            1,
        );
        m.game_started("g1", "x", true, t0); // incoming
        m.game_started("g2", "human", false, t0); // not counted
        m.game_started("g3", "y", true, t0 + secs(10));
        let late = t0 + secs(3600);
        // a game start ends idleness: the idle clock starts again at the next look
        assert!(matches!(
            m.decide(late - secs(60), idle(1)),
            Decision::Wait {
                reason: WaitReason::Idle,
                ..
            }
        ));
        assert_eq!(
            m.decide(late, idle(1)),
            Decision::Wait {
                reason: WaitReason::DailyLimit,
                until: Some(t0 + DAY)
            }
        );
        // 24 h after the first game, one slot frees up
        assert_eq!(m.decide(t0 + DAY + secs(1), idle(1)), Decision::Challenge);
    }

    #[test]
    fn rate_limits_pause_and_back_off() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1);
        let t = t0 + secs(1000);
        m.challenge_failed("x", &ChallengeError::RateLimited { seconds: None }, t);
        assert_eq!(
            m.decide(t + secs(1), idle(1)),
            Decision::Wait {
                reason: WaitReason::RateLimited,
                until: Some(t + secs(60))
            }
        );
        let t2 = t + secs(60);
        m.challenge_failed("x", &ChallengeError::RateLimited { seconds: None }, t2);
        assert_eq!(
            m.decide(t2, idle(1)),
            Decision::Wait {
                reason: WaitReason::RateLimited,
                until: Some(t2 + secs(120))
            }
        );
        // another limiter's own duration wins
        let t3 = t2 + secs(120);
        m.challenge_failed(
            "x",
            &ChallengeError::RateLimited {
                seconds: Some(5_000),
            },
            t3,
        );
        assert_eq!(
            m.decide(t3, idle(1)),
            Decision::Wait {
                reason: WaitReason::RateLimited,
                until: Some(t3 + secs(5_000))
            }
        );
    }

    /// lichess's `bot.vsBot.day` 429 pauses matchmaking until the reset it names, through the
    /// limit shared with the supervisor (which declines bots meanwhile); a limit the
    /// supervisor met on accepting pauses matchmaking the same way.
    #[test]
    fn the_daily_bot_game_limit_is_shared_and_pauses_until_its_reset() {
        let t0 = Instant::now();
        let shared = DailyLimit::default();
        let mut m = Matchmaker::new(cfg(), t0, 1).with_daily_limit(shared.clone());
        let t = t0 + secs(100);
        assert_eq!(m.decide(t, idle(1)), Decision::Challenge);
        m.challenge_failed(
            "x",
            &ChallengeError::BotGameLimit {
                seconds: Some(5_000),
            },
            t,
        );
        assert_eq!(shared.until(t), Some(t + secs(5_000)));
        assert_eq!(
            m.decide(t + secs(4_000), idle(1)),
            Decision::Wait {
                reason: WaitReason::DailyLimit,
                until: Some(t + secs(5_000))
            }
        );
        assert_eq!(m.decide(t + secs(5_001), idle(1)), Decision::Challenge);
        // Met by the supervisor on an accept, without seconds: an hour.
        let t2 = t + secs(6_000);
        shared.reached(None, t2);
        assert!(matches!(
            m.decide(t2 + secs(3_599), idle(1)),
            Decision::Wait {
                reason: WaitReason::DailyLimit,
                ..
            }
        ));
        assert_eq!(m.decide(t2 + secs(3_601), idle(1)), Decision::Challenge);
    }
}
