//! Matchmaking: when the bot has been idle for a while, challenge another online bot.
//!
//! Off by default. A bot that only waits for challenges plays rarely, so an owner can let it
//! challenge other bots (`GET /api/bot/online`) that play atomic, within a rating band and with
//! one of the configured time controls. Doing that politely is most of the code:
//!
//! - **Idle first.** A challenge goes out only after `idle_s` seconds with no game running, none
//!   about to start and no challenge of ours pending, and at least `min_interval_s` after the
//!   previous challenge (lichess-bot waits 60 s too).
//! - **Concurrency.** Running games + accepted-not-started challenges + our pending challenge
//!   never exceed `max_games`: [`Matchmaker::pending_challenges`] must be counted by the incoming
//!   challenge policy too, or an incoming challenge accepted while ours is pending would overshoot
//!   (the classic lichess-bot complaint).
//! - **Daily limit.** lichess allows 100 bot-versus-bot games a day per bot, counted at game start
//!   for both sides, incoming games included. We stop challenging at `daily_limit` games in the
//!   last 24 h (default 80, leaving room for incoming bot challenges), and a `bot.vsBot.day` 429
//!   pauses matchmaking for the `ratelimit.seconds` lichess gives. That limit is shared with
//!   the supervisor as a [`DailyLimit`]: a 429 on accepting a bot's challenge pauses
//!   matchmaking too, and while it holds, challenges from bots are declined with `later`.
//! - **Rate limits.** Any other 429 pauses matchmaking for 60 s, doubling up to 10 min while they
//!   continue; an opponent's own daily limit (400 with `ratelimit`) skips that opponent until it
//!   resets.
//! - **Back off.** An opponent that declines (or never answers) `max_declines` times, or aborts
//!   `max_aborts` of our games, is skipped for `backoff_h` hours.
//!
//! The policy and state ([`Matchmaker`]) are pure and driven by explicit `Instant`s (tokio's, so
//! that tests can pause time); [`run`] is
//! the small async loop around them, and the HTTP calls it needs sit behind
//! [`MatchmakingApi`], so everything is tested without a client or a server.
//!
//! Layout: [`policy`] (when to challenge), [`selection`] (whom, at which clock),
//! [`bookkeeping`] (what is remembered of challenges, opponents and the daily limit), [`api`]
//! (the lichess calls) and [`task`] (the loop). The `[matchmaking]` section itself is
//! [`crate::config::MatchmakingConfig`].

pub mod api;
pub mod bookkeeping;
pub mod policy;
pub mod selection;
pub mod task;

pub use api::{
    ChallengeError, ChallengeRequest, MatchmakingApi, ONLINE_BOTS_NB, OnlineBot,
    classify_challenge_error, parse_online_bots,
};
pub use bookkeeping::{DailyLimit, Matchmaker};
pub use policy::{Decision, Load, WaitReason};
pub use task::{Identity, run};

/// Helpers shared by the tests of the submodules.
#[cfg(test)]
mod test_support {
    use std::time::Duration;

    use super::{Load, OnlineBot};
    use crate::config::MatchmakingConfig;

    pub(super) fn cfg() -> MatchmakingConfig {
        MatchmakingConfig {
            enabled: true,
            idle_s: 60,
            min_interval_s: 30,
            ..MatchmakingConfig::default()
        }
    }

    pub(super) fn idle(max_games: usize) -> Load {
        Load {
            games_running: 0,
            challenges_waiting: 0,
            max_games,
        }
    }

    pub(super) fn bot(id: &str, rating: u32, games: u32) -> OnlineBot {
        OnlineBot {
            id: id.to_string(),
            username: id.to_uppercase(),
            atomic_rating: Some(rating),
            atomic_games: games,
        }
    }

    pub(super) fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }
}
