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

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::lichess::model::{ErrorBody, User};

/// lichess's 24-hour window for the bot-versus-bot game limit.
const DAY: Duration = Duration::from_secs(24 * 3600);
/// Pause after a 429 without a `ratelimit.seconds` (lichess asks for at least a minute).
const RATE_LIMIT_PAUSE: Duration = Duration::from_secs(60);
/// Longest pause for repeated generic 429s.
const MAX_RATE_LIMIT_PAUSE: Duration = Duration::from_secs(600);
/// How many online bots to ask lichess for (its maximum).
pub const ONLINE_BOTS_NB: u32 = 512;

/// A clock time control, as `"<minutes>+<increment seconds>"` in the configuration (`"3+2"`,
/// `"0.5+0"`).
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

impl FromStr for TimeControl {
    type Err = String;

    /// Parses `"M+I"` and checks it against what lichess accepts for a challenge: a limit of 0,
    /// 15, 30, 45 or 90 s or a whole number of minutes up to 180, an increment up to 60 s, and no
    /// UltraBullet (bots may not play it).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (minutes, increment) = text.trim().split_once('+').ok_or_else(|| {
            format!("time control {text:?}: expected \"minutes+increment\", like \"3+2\"")
        })?;
        let minutes: f64 = minutes
            .trim()
            .parse()
            .map_err(|_| format!("time control {text:?}: bad minutes {minutes:?}"))?;
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

/// An online bot, as far as matchmaking cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnlineBot {
    /// lichess id (lowercase username).
    pub id: String,
    /// Display name, used in the challenge URL.
    pub username: String,
    /// Atomic rating, if it has one.
    pub atomic_rating: Option<u32>,
    /// Rated atomic games played: 0 means the bot does not play atomic (or never has).
    pub atomic_games: u32,
}

/// Parses the ND-JSON body of `GET /api/bot/online` (read leniently, see
/// [`crate::lichess::lenient`]). Malformed lines, closed and flagged accounts are skipped: one
/// odd entry must not stop matchmaking.
pub fn parse_online_bots(body: &str) -> Vec<OnlineBot> {
    body.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| match serde_json::from_str::<User>(l) {
            Ok(u) => Some(u),
            Err(e) => {
                tracing::debug!(error = %e, "online bots: unreadable line skipped");
                None
            }
        })
        .filter(|u| !u.disabled && !u.tos_violation)
        .map(|u| {
            let atomic = u.perfs.get("atomic");
            OnlineBot {
                id: u.id.to_ascii_lowercase(),
                username: u.username,
                atomic_rating: atomic
                    .and_then(|p| p.rating)
                    .and_then(|r| u32::try_from(r).ok()),
                atomic_games: atomic
                    .and_then(|p| p.games)
                    .and_then(|g| u32::try_from(g).ok())
                    .unwrap_or(0),
            }
        })
        .collect()
}

/// What `POST /api/challenge/{username}` is sent (as form fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChallengeRequest {
    /// Clock in seconds.
    pub clock_limit_s: u32,
    /// Increment in seconds.
    pub clock_increment_s: u32,
    /// Rated or casual.
    pub rated: bool,
}

impl ChallengeRequest {
    /// The form body: atomic, random colour.
    pub fn form(&self) -> Vec<(&'static str, String)> {
        vec![
            ("clock.limit", self.clock_limit_s.to_string()),
            ("clock.increment", self.clock_increment_s.to_string()),
            ("rated", self.rated.to_string()),
            ("variant", "atomic".to_string()),
            ("color", "random".to_string()),
        ]
    }
}

/// Why creating a challenge failed, as far as matchmaking must react.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChallengeError {
    /// 429 with `ratelimit.key` `bot.vsBot.day`: we played our bot games for today.
    BotGameLimit {
        /// `ratelimit.seconds`: until it resets.
        seconds: Option<u64>,
    },
    /// Another 429 (another limiter, or an HTML page from the edge).
    RateLimited {
        /// `ratelimit.seconds` from the body, if any.
        seconds: Option<u64>,
    },
    /// 400 with a `ratelimit`: the *opponent* has used its daily bot games.
    OpponentLimited {
        /// Seconds until the opponent's limit resets, if given.
        seconds: Option<u64>,
    },
    /// Any other 4xx: lichess refused this challenge (text for the log).
    Refused(String),
    /// 5xx or a network error: try again later.
    Transient(String),
}

impl fmt::Display for ChallengeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChallengeError::BotGameLimit { seconds: Some(s) } => {
                write!(f, "daily bot-game limit reached, resets in {s} s")
            }
            ChallengeError::BotGameLimit { seconds: None } => {
                write!(f, "daily bot-game limit reached")
            }
            ChallengeError::RateLimited { seconds: Some(s) } => write!(f, "rate limited for {s} s"),
            ChallengeError::RateLimited { seconds: None } => write!(f, "rate limited"),
            ChallengeError::OpponentLimited { .. } => {
                write!(f, "opponent reached its daily bot-game limit")
            }
            ChallengeError::Refused(text) => write!(f, "refused: {text}"),
            ChallengeError::Transient(text) => write!(f, "temporary failure: {text}"),
        }
    }
}

impl std::error::Error for ChallengeError {}

/// Classifies a failed challenge response from its status code and body (which may be JSON,
/// HTML or empty).
pub fn classify_challenge_error(status: u16, body: &str) -> ChallengeError {
    let json: Option<ErrorBody> = serde_json::from_str(body).ok();
    let limit = json.as_ref().and_then(|e| e.ratelimit.clone());
    let seconds = limit.as_ref().and_then(|r| r.seconds);
    let bot_games = limit.as_ref().is_some_and(|r| r.is_bot_games());
    let text = json
        .map(|e| e.error)
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| truncate_for_log(body, 200));
    match status {
        429 if bot_games => ChallengeError::BotGameLimit { seconds },
        429 => ChallengeError::RateLimited { seconds },
        400 if limit.is_some() => ChallengeError::OpponentLimited { seconds },
        400..=499 => ChallengeError::Refused(format!("{status} {text}")),
        _ => ChallengeError::Transient(format!("{status} {text}")),
    }
}

fn truncate_for_log(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// A transport or server error from one of the other calls (details for the log only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError(pub String);

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ApiError {}

/// lichess's daily limit of bot-versus-bot games, once lichess said we reached it: until
/// when it holds. Shared (cheap clones) by matchmaking, which stops challenging, and the
/// supervisor, which declines bots' challenges with `later` (humans are not limited).
#[derive(Clone, Debug, Default)]
pub struct DailyLimit(Arc<Mutex<Option<Instant>>>);

/// How long the limit holds when lichess did not say (`ratelimit.seconds` absent).
const DAILY_LIMIT_UNKNOWN_RESET: Duration = Duration::from_secs(3600);

impl DailyLimit {
    /// lichess said the limit is reached and resets in `seconds` (from `now`).
    pub fn reached(&self, seconds: Option<u64>, now: Instant) {
        let until = now + seconds.map_or(DAILY_LIMIT_UNKNOWN_RESET, Duration::from_secs);
        let mut g = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *g = Some(g.map_or(until, |old| old.max(until)));
    }

    /// Until when the limit holds, if it does at `now`.
    pub fn until(&self, now: Instant) -> Option<Instant> {
        let g = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        g.filter(|&t| t > now)
    }
}

/// The lichess calls matchmaking needs. The lichess client implements it; tests use a fake.
pub trait MatchmakingApi: Send + Sync {
    /// `GET /api/bot/online?nb=…`.
    fn online_bots(&self, nb: u32)
    -> impl Future<Output = Result<Vec<OnlineBot>, ApiError>> + Send;
    /// `POST /api/challenge/{username}`; returns the challenge id (= the future game id).
    fn create_challenge(
        &self,
        username: &str,
        request: &ChallengeRequest,
    ) -> impl Future<Output = Result<String, ChallengeError>> + Send;
    /// `POST /api/challenge/{id}/cancel`.
    fn cancel_challenge(&self, id: &str) -> impl Future<Output = Result<(), ApiError>> + Send;
}

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

/// A challenge we sent that has not been answered.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pending {
    id: String,
    opponent: String,
    sent_at: Instant,
}

/// What we remember about one opponent (by lowercase id).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct OpponentRecord {
    /// Declines or unanswered challenges since its last accepted one.
    declines: u32,
    /// Aborted games against it.
    aborts: u32,
    /// Challenges sent to it.
    challenged: u32,
    /// When we last challenged it.
    last_challenged: Option<Instant>,
    /// Skipped until then.
    skip_until: Option<Instant>,
}

/// Matchmaking policy and state. Shared between [`run`] and the event-stream handler (which
/// reports game starts, finishes, declines and cancellations) as `Arc<Mutex<Matchmaker>>`;
/// every method is quick and never awaits, so a plain mutex is right.
#[derive(Debug)]
pub struct Matchmaker {
    config: MatchmakingConfig,
    /// Lowercase block list.
    blocked: Vec<String>,
    /// Since when nothing has been running (`None` while busy).
    idle_since: Option<Instant>,
    /// When the last challenge went out.
    last_challenge: Option<Instant>,
    /// No challenge before then (rate limits).
    paused_until: Option<Instant>,
    /// Next pause for a generic 429 (doubles while they continue).
    rate_limit_pause: Duration,
    /// Start times of bot-versus-bot games in the last 24 h (both directions).
    bot_games: VecDeque<Instant>,
    /// Our unanswered challenge.
    pending: Option<Pending>,
    /// A challenge is being chosen or created right now (HTTP in flight): it already counts
    /// as a used slot, so an incoming challenge accepted meanwhile cannot overshoot.
    in_flight: bool,
    /// Opponent of each running game, to charge aborts to the right bot.
    game_opponents: HashMap<String, String>,
    /// Incoming challenges from bots that we accepted, to count their games as bot games.
    incoming_bot_challenges: std::collections::HashSet<String>,
    /// Per-opponent history.
    opponents: HashMap<String, OpponentRecord>,
    /// xorshift64 state for tie-breaks and time-control choice (seeded, so tests are repeatable).
    rng: u64,
    /// lichess's daily bot-game limit, shared with the supervisor.
    daily: DailyLimit,
}

impl Matchmaker {
    /// A matchmaker that starts counting idle time at `now`.
    pub fn new(config: MatchmakingConfig, now: Instant, seed: u64) -> Self {
        let blocked = config
            .block_list
            .iter()
            .map(|n| n.to_ascii_lowercase())
            .collect();
        Matchmaker {
            config,
            blocked,
            idle_since: Some(now),
            last_challenge: None,
            paused_until: None,
            rate_limit_pause: RATE_LIMIT_PAUSE,
            bot_games: VecDeque::new(),
            pending: None,
            in_flight: false,
            game_opponents: HashMap::new(),
            incoming_bot_challenges: std::collections::HashSet::new(),
            opponents: HashMap::new(),
            rng: seed | 1,
            daily: DailyLimit::default(),
        }
    }

    /// Shares `daily` (the supervisor's) instead of a limit of its own.
    pub fn with_daily_limit(mut self, daily: DailyLimit) -> Self {
        self.daily = daily;
        self
    }

    /// The configuration in use.
    pub fn config(&self) -> &MatchmakingConfig {
        &self.config
    }

    /// Our unanswered challenges (0 or 1): the incoming-challenge policy counts them as used
    /// game slots.
    pub fn pending_challenges(&self) -> usize {
        usize::from(self.pending.is_some() || self.in_flight)
    }

    /// Marks the start (`true`) or end (`false`) of a challenge attempt; see `in_flight`.
    pub fn set_in_flight(&mut self, in_flight: bool) {
        self.in_flight = in_flight;
    }

    /// We accepted (or queued) a challenge from a bot: its game counts toward the daily
    /// bot-game limit when it starts (the `gameStart` event does not say whether the opponent
    /// is a bot).
    pub fn incoming_bot_challenge(&mut self, id: &str) {
        self.incoming_bot_challenges.insert(id.to_string());
    }

    /// Bot-versus-bot games started in the last 24 h.
    pub fn bot_games_today(&mut self, now: Instant) -> usize {
        while let Some(&start) = self.bot_games.front() {
            if now.saturating_duration_since(start) >= DAY {
                self.bot_games.pop_front();
            } else {
                break;
            }
        }
        self.bot_games.len()
    }

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

    /// Picks an opponent among `bots` and a time control. `our_id` is skipped; `our_rating`
    /// (our atomic rating) anchors `max_rating_diff`. Prefers bots challenged least often, then
    /// least recently; ties are broken at random.
    pub fn choose(
        &mut self,
        bots: &[OnlineBot],
        our_id: &str,
        our_rating: Option<u32>,
        now: Instant,
    ) -> Option<(OnlineBot, ChallengeRequest)> {
        let our_id = our_id.to_ascii_lowercase();
        let cfg = &self.config;
        let mut candidates: Vec<&OnlineBot> = bots
            .iter()
            .filter(|b| b.id != our_id && b.atomic_games > 0)
            .filter(|b| !self.blocked.contains(&b.id))
            .filter(|b| match b.atomic_rating {
                None => false,
                Some(r) => {
                    let in_band = (cfg.min_rating..=cfg.max_rating).contains(&r);
                    let near = match (our_rating, cfg.max_rating_diff) {
                        (_, 0) | (None, _) => true,
                        (Some(ours), diff) => r.abs_diff(ours) <= diff,
                    };
                    in_band && near
                }
            })
            .filter(|b| {
                self.opponents
                    .get(&b.id)
                    .and_then(|rec| rec.skip_until)
                    .is_none_or(|until| now >= until)
            })
            .collect();
        if candidates.is_empty() || cfg.time_controls.is_empty() {
            return None;
        }
        let key = |b: &OnlineBot| {
            let rec = self.opponents.get(&b.id);
            (
                rec.map_or(0, |r| r.challenged),
                rec.and_then(|r| r.last_challenged),
            )
        };
        let best = candidates.iter().map(|b| key(b)).min()?;
        candidates.retain(|b| key(b) == best);
        let pick = candidates[self.next_random(candidates.len())].clone();
        let tc_index = self.next_random(self.config.time_controls.len());
        let tc = self.config.time_controls[tc_index];
        let request = ChallengeRequest {
            clock_limit_s: tc.limit_s,
            clock_increment_s: tc.increment_s,
            rated: self.config.rated,
        };
        Some((pick, request))
    }

    /// Records that challenge `id` to `opponent` went out.
    pub fn challenge_sent(&mut self, id: &str, opponent: &str, now: Instant) {
        let opponent = opponent.to_ascii_lowercase();
        let rec = self.opponents.entry(opponent.clone()).or_default();
        rec.challenged += 1;
        rec.last_challenged = Some(now);
        self.last_challenge = Some(now);
        self.pending = Some(Pending {
            id: id.to_string(),
            opponent,
            sent_at: now,
        });
    }

    /// Records that creating a challenge to `opponent` failed.
    pub fn challenge_failed(&mut self, opponent: &str, error: &ChallengeError, now: Instant) {
        let opponent = opponent.to_ascii_lowercase();
        self.last_challenge = Some(now);
        match error {
            ChallengeError::BotGameLimit { seconds } => self.daily.reached(*seconds, now),
            ChallengeError::RateLimited { seconds } => {
                let pause = match seconds {
                    Some(s) => Duration::from_secs(*s).max(RATE_LIMIT_PAUSE),
                    None => {
                        let pause = self.rate_limit_pause;
                        self.rate_limit_pause = (pause * 2).min(MAX_RATE_LIMIT_PAUSE);
                        pause
                    }
                };
                self.paused_until = Some(now + pause);
            }
            ChallengeError::OpponentLimited { seconds } => {
                self.opponent_limited(&opponent, *seconds, now);
            }
            ChallengeError::Refused(_) => self.count_decline(&opponent, now),
            ChallengeError::Transient(_) => {}
        }
    }

    /// `opponent` reached its daily bot-game limit (lichess's 400 with `ratelimit`, on our
    /// challenge or on accepting its one): it is not challenged until the limit resets.
    pub fn opponent_limited(&mut self, opponent: &str, seconds: Option<u64>, now: Instant) {
        let skip = seconds.map_or(DAILY_LIMIT_UNKNOWN_RESET, Duration::from_secs);
        self.opponents
            .entry(opponent.to_ascii_lowercase())
            .or_default()
            .skip_until = Some(now + skip);
    }

    /// A `challengeDeclined` event for one of our challenges.
    pub fn challenge_declined(&mut self, id: &str, now: Instant) {
        if let Some(p) = self.take_pending(id) {
            self.count_decline(&p.opponent, now);
        }
    }

    /// A `challengeCanceled` event (for example lichess expiring it).
    pub fn challenge_canceled(&mut self, id: &str) {
        self.take_pending(id);
    }

    /// The pending challenge's id if it has waited longer than `challenge_timeout_s`; it is then
    /// forgotten and counted as a decline, and the caller cancels it on lichess.
    pub fn expire_pending(&mut self, now: Instant) -> Option<String> {
        let timeout = Duration::from_secs(self.config.challenge_timeout_s);
        let p = self.pending.as_ref()?;
        if now.saturating_duration_since(p.sent_at) < timeout {
            return None;
        }
        let p = self.pending.take()?;
        self.count_decline(&p.opponent, now);
        Some(p.id)
    }

    /// A game started (from `gameStart`). Games against bots count toward the daily limit,
    /// whoever challenged; our own challenge being accepted clears the opponent's declines and
    /// the rate-limit backoff.
    pub fn game_started(
        &mut self,
        game_id: &str,
        opponent_id: &str,
        opponent_is_bot: bool,
        now: Instant,
    ) {
        self.idle_since = None;
        self.game_opponents
            .insert(game_id.to_string(), opponent_id.to_ascii_lowercase());
        let ours = self.take_pending(game_id).is_some();
        let incoming_bot = self.incoming_bot_challenges.remove(game_id);
        if opponent_is_bot || ours || incoming_bot {
            self.bot_games.push_back(now);
        }
        if ours {
            self.rate_limit_pause = RATE_LIMIT_PAUSE;
            self.opponents
                .entry(opponent_id.to_ascii_lowercase())
                .or_default()
                .declines = 0;
        }
    }

    /// A game ended (from the game task's final status). Aborted games count against the
    /// opponent recorded by [`Matchmaker::game_started`].
    pub fn game_finished(&mut self, game_id: &str, aborted: bool, now: Instant) {
        let Some(opponent_id) = self.game_opponents.remove(game_id) else {
            return;
        };
        if !aborted {
            return;
        }
        let backoff = Duration::from_secs(self.config.backoff_h * 3600);
        let max_aborts = self.config.max_aborts;
        let rec = self
            .opponents
            .entry(opponent_id.to_ascii_lowercase())
            .or_default();
        rec.aborts += 1;
        if rec.aborts >= max_aborts {
            rec.skip_until = Some(now + backoff);
        }
    }

    fn take_pending(&mut self, id: &str) -> Option<Pending> {
        if self.pending.as_ref().is_some_and(|p| p.id == id) {
            self.pending.take()
        } else {
            None
        }
    }

    fn count_decline(&mut self, opponent: &str, now: Instant) {
        let backoff = Duration::from_secs(self.config.backoff_h * 3600);
        let max = self.config.max_declines;
        let rec = self.opponents.entry(opponent.to_string()).or_default();
        rec.declines += 1;
        if rec.declines >= max {
            rec.skip_until = Some(now + backoff);
            rec.declines = 0;
        }
    }

    /// A uniform-ish index below `n` (xorshift64; fine for tie-breaks).
    fn next_random(&mut self, n: usize) -> usize {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        (x % n.max(1) as u64) as usize
    }
}

impl MatchmakingApi for crate::lichess::client::LichessClient {
    async fn online_bots(&self, nb: u32) -> Result<Vec<OnlineBot>, ApiError> {
        crate::lichess::client::LichessClient::online_bots(self, nb)
            .await
            .map_err(|e| ApiError(e.to_string()))
    }

    async fn create_challenge(
        &self,
        username: &str,
        request: &ChallengeRequest,
    ) -> Result<String, ChallengeError> {
        let form = request.form();
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.try_create_challenge(username, &pairs).await
    }

    async fn cancel_challenge(&self, id: &str) -> Result<(), ApiError> {
        crate::lichess::client::LichessClient::cancel_challenge(self, id)
            .await
            .map_err(|e| ApiError(e.to_string()))
    }
}

/// Who we are, for [`run`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Our lichess id.
    pub id: String,
    /// Our atomic rating, if we have one.
    pub atomic_rating: Option<u32>,
}

/// How often [`run`] re-evaluates at most (it wakes earlier when a wait ends sooner).
const TICK: Duration = Duration::from_secs(5);

/// The matchmaking loop: decides, fetches online bots, challenges, cancels unanswered
/// challenges, until `shutdown` completes (then cancels a pending challenge, best effort).
/// `load` reports the supervisor's current load; `on_sent` is told each challenge sent (for
/// metrics). Events (declines, game starts) are fed to `state` by the event-stream handler.
pub async fn run<A, L>(
    api: &A,
    state: Arc<Mutex<Matchmaker>>,
    identity: Identity,
    load: L,
    on_sent: impl Fn(),
    shutdown: impl Future<Output = ()>,
) where
    A: MatchmakingApi,
    L: Fn() -> Load,
{
    tokio::pin!(shutdown);
    loop {
        let now = Instant::now();
        let expired = lock(&state).expire_pending(now);
        if let Some(id) = expired {
            tracing::info!(challenge = %id, "matchmaking: challenge unanswered, cancelling");
            if let Err(err) = api.cancel_challenge(&id).await {
                tracing::debug!(challenge = %id, error = %err, "matchmaking: cancel failed");
            }
        }
        let decision = lock(&state).decide(now, load());
        let sleep_for = match decision {
            Decision::Wait { until, .. } => {
                until.map_or(TICK, |u| u.saturating_duration_since(now).min(TICK))
            }
            Decision::Challenge => {
                challenge_once(api, &state, &identity, &on_sent).await;
                TICK
            }
        };
        tokio::select! {
            () = &mut shutdown => break,
            () = tokio::time::sleep(sleep_for.max(Duration::from_millis(50))) => {}
        }
    }
    let pending = lock(&state).pending.take();
    if let Some(p) = pending {
        let _ = api.cancel_challenge(&p.id).await;
    }
}

/// Locks the shared state; a panic elsewhere while holding it leaves plain data behind, so a
/// poisoned lock is still usable.
fn lock(state: &Mutex<Matchmaker>) -> std::sync::MutexGuard<'_, Matchmaker> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One matchmaking attempt: list bots, choose, challenge, record the outcome.
async fn challenge_once<A: MatchmakingApi>(
    api: &A,
    state: &Mutex<Matchmaker>,
    identity: &Identity,
    on_sent: &impl Fn(),
) {
    lock(state).set_in_flight(true);
    attempt(api, state, identity, on_sent).await;
    lock(state).set_in_flight(false);
}

/// The body of [`challenge_once`], between reserving and releasing the slot.
async fn attempt<A: MatchmakingApi>(
    api: &A,
    state: &Mutex<Matchmaker>,
    identity: &Identity,
    on_sent: &impl Fn(),
) {
    let bots = match api.online_bots(ONLINE_BOTS_NB).await {
        Ok(bots) => bots,
        Err(err) => {
            tracing::warn!(error = %err, "matchmaking: cannot list online bots");
            lock(state).last_challenge = Some(Instant::now());
            return;
        }
    };
    let choice = lock(state).choose(&bots, &identity.id, identity.atomic_rating, Instant::now());
    let Some((bot, request)) = choice else {
        tracing::info!(online = bots.len(), "matchmaking: no suitable online bot");
        lock(state).last_challenge = Some(Instant::now());
        return;
    };
    let tc = TimeControl {
        limit_s: request.clock_limit_s,
        increment_s: request.clock_increment_s,
    };
    match api.create_challenge(&bot.username, &request).await {
        Ok(id) => {
            tracing::info!(opponent = %bot.username, rating = ?bot.atomic_rating, time_control = %tc,
                rated = request.rated, challenge = %id, "matchmaking: challenge sent");
            on_sent();
            lock(state).challenge_sent(&id, &bot.id, Instant::now());
        }
        Err(err) => {
            tracing::warn!(opponent = %bot.username, error = %err, "matchmaking: challenge failed");
            lock(state).challenge_failed(&bot.id, &err, Instant::now());
        }
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

    fn idle(max_games: usize) -> Load {
        Load {
            games_running: 0,
            challenges_waiting: 0,
            max_games,
        }
    }

    fn bot(id: &str, rating: u32, games: u32) -> OnlineBot {
        OnlineBot {
            id: id.to_string(),
            username: id.to_uppercase(),
            atomic_rating: Some(rating),
            atomic_games: games,
        }
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

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
    fn choose_filters_band_atomic_self_and_blocklist() {
        let t0 = Instant::now();
        let config = MatchmakingConfig {
            min_rating: 1500,
            max_rating: 2500,
            max_rating_diff: 300,
            block_list: vec!["Blocked".into()],
            ..cfg()
        };
        let mut m = Matchmaker::new(config, t0, 7);
        let bots = vec![
            bot("me", 2000, 50),
            bot("noatomic", 2000, 0),
            bot("toolow", 1400, 10),
            bot("toofar", 2400, 10),
            bot("blocked", 2000, 10),
            OnlineBot {
                atomic_rating: None,
                ..bot("unrated", 0, 3)
            },
            bot("good", 2100, 10),
        ];
        let (pick, req) = m.choose(&bots, "Me", Some(2000), t0).unwrap();
        assert_eq!(pick.id, "good");
        assert!(!req.rated);
        assert!(m.config().time_controls.contains(&TimeControl {
            limit_s: req.clock_limit_s,
            increment_s: req.clock_increment_s
        }));
        // without our rating only the absolute band applies
        let bots = vec![bot("toofar", 2400, 10)];
        assert!(m.choose(&bots, "me", None, t0).is_some());
        assert!(m.choose(&[], "me", None, t0).is_none());
    }

    #[test]
    fn choose_spreads_challenges() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 3);
        let bots = vec![bot("a", 1500, 5), bot("b", 1500, 5), bot("c", 1500, 5)];
        let mut seen = Vec::new();
        for i in 0..3 {
            let (pick, _) = m.choose(&bots, "me", None, t0).unwrap();
            m.challenge_sent(&format!("id{i}"), &pick.id, t0 + secs(i));
            m.challenge_canceled(&format!("id{i}"));
            seen.push(pick.id);
        }
        seen.sort();
        assert_eq!(seen, ["a", "b", "c"]);
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
    fn accepted_incoming_bot_games_count_toward_the_daily_limit() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(
            MatchmakingConfig {
                daily_limit: 1,
                ..cfg()
            },
            t0,
            1,
        );
        m.incoming_bot_challenge("g1");
        m.game_started("g1", "somebot", false, t0);
        assert_eq!(m.bot_games_today(t0), 1);
        m.game_started("g2", "human", false, t0);
        assert_eq!(m.bot_games_today(t0), 1);
    }

    #[test]
    fn decliners_are_skipped_for_a_while() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1); // max_declines 2, backoff 24 h
        let bots = vec![bot("rude", 1500, 5)];
        m.challenge_sent("c1", "rude", t0);
        m.challenge_declined("c1", t0);
        assert!(m.choose(&bots, "me", None, t0).is_some());
        m.challenge_sent("c2", "rude", t0);
        assert_eq!(m.expire_pending(t0 + secs(10)), None);
        assert_eq!(m.expire_pending(t0 + secs(25)).as_deref(), Some("c2")); // unanswered = declined
        assert!(m.choose(&bots, "me", None, t0 + secs(26)).is_none());
        assert!(
            m.choose(&bots, "me", None, t0 + secs(24 * 3600 + 26))
                .is_some()
        );
    }

    #[test]
    fn acceptance_resets_declines() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1);
        let bots = vec![bot("fickle", 1500, 5)];
        m.challenge_sent("c1", "fickle", t0);
        m.challenge_declined("c1", t0);
        m.challenge_sent("c2", "fickle", t0);
        m.game_started("c2", "fickle", true, t0);
        m.challenge_sent("c3", "fickle", t0);
        m.challenge_declined("c3", t0);
        assert!(m.choose(&bots, "me", None, t0).is_some());
    }

    #[test]
    fn aborters_are_skipped() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1);
        let bots = vec![bot("aborter", 1500, 5)];
        m.game_started("g1", "Aborter", true, t0);
        m.game_finished("g1", true, t0);
        m.game_started("g2", "aborter", true, t0);
        m.game_finished("g2", false, t0);
        m.game_finished("unknown-game", true, t0);
        assert!(m.choose(&bots, "me", None, t0).is_some());
        m.game_started("g3", "aborter", true, t0);
        m.game_finished("g3", true, t0);
        assert!(m.choose(&bots, "me", None, t0).is_none());
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

    #[test]
    fn opponent_limit_skips_only_that_opponent() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1);
        let bots = vec![bot("tired", 1500, 5), bot("fresh", 1500, 5)];
        m.challenge_failed(
            "tired",
            &ChallengeError::OpponentLimited { seconds: Some(100) },
            t0,
        );
        for _ in 0..5 {
            assert_eq!(
                m.choose(&bots, "me", None, t0 + secs(50)).unwrap().0.id,
                "fresh"
            );
        }
        assert_eq!(m.decide(t0 + secs(200), idle(1)), Decision::Challenge);
    }

    #[test]
    fn classifies_errors() {
        let body = r#"{"error":"You played 100 games against other bots today","ratelimit":{"key":"bot.vsBot.day","seconds":51234}}"#;
        assert_eq!(
            classify_challenge_error(429, body),
            ChallengeError::BotGameLimit {
                seconds: Some(51_234)
            }
        );
        assert_eq!(
            classify_challenge_error(
                429,
                r#"{"error":"slow down","ratelimit":{"key":"challenge.create.user","seconds":"90"}}"#
            ),
            ChallengeError::RateLimited { seconds: Some(90) }
        );
        assert_eq!(
            classify_challenge_error(400, body),
            ChallengeError::OpponentLimited {
                seconds: Some(51_234)
            }
        );
        assert_eq!(
            classify_challenge_error(429, "<html>too many requests</html>"),
            ChallengeError::RateLimited { seconds: None }
        );
        assert_eq!(
            classify_challenge_error(400, r#"{"error":"Rules not applicable for bots"}"#),
            ChallengeError::Refused("400 Rules not applicable for bots".into())
        );
        assert!(matches!(
            classify_challenge_error(502, "bad gateway"),
            ChallengeError::Transient(_)
        ));
    }

    #[test]
    fn parses_online_bots() {
        let body = concat!(
            r#"{"id":"boombot","username":"BoomBot","title":"BOT","perfs":{"atomic":{"games":"120","rating":1912,"rd":60,"prog":5},"storm":{"runs":3,"score":12},"streak":7},"playTime":null}"#,
            "\n\n",
            r#"{"id":"blitzer","username":"Blitzer","title":"BOT","perfs":{"blitz":{"games":9,"rating":2000}}}"#,
            "\nnot json\n",
            r#"{"id":"gone","username":"Gone","disabled":true,"perfs":{"atomic":{"games":1,"rating":1500}}}"#,
            "\n",
        );
        let bots = parse_online_bots(body);
        assert_eq!(bots.len(), 2);
        assert_eq!(
            bots[0],
            OnlineBot {
                id: "boombot".into(),
                username: "BoomBot".into(),
                atomic_rating: Some(1912),
                atomic_games: 120
            }
        );
        assert_eq!(bots[1].atomic_games, 0);
    }

    #[test]
    fn challenge_form() {
        let req = ChallengeRequest {
            clock_limit_s: 180,
            clock_increment_s: 2,
            rated: true,
        };
        let form = req.form();
        assert!(form.contains(&("clock.limit", "180".into())));
        assert!(form.contains(&("variant", "atomic".into())));
        assert!(form.contains(&("rated", "true".into())));
    }

    /// An in-memory lichess for [`run`].
    struct FakeApi {
        bots: Vec<OnlineBot>,
        sent: Mutex<Vec<(String, ChallengeRequest)>>,
        cancelled: Mutex<Vec<String>>,
    }

    impl MatchmakingApi for FakeApi {
        async fn online_bots(&self, _nb: u32) -> Result<Vec<OnlineBot>, ApiError> {
            Ok(self.bots.clone())
        }
        async fn create_challenge(
            &self,
            username: &str,
            request: &ChallengeRequest,
        ) -> Result<String, ChallengeError> {
            let mut sent = self.sent.lock().unwrap();
            sent.push((username.to_string(), request.clone()));
            Ok(format!("chal{:04}", sent.len()))
        }
        async fn cancel_challenge(&self, id: &str) -> Result<(), ApiError> {
            self.cancelled.lock().unwrap().push(id.to_string());
            Ok(())
        }
    }

    fn fake(bots: Vec<OnlineBot>) -> FakeApi {
        FakeApi {
            bots,
            sent: Mutex::new(Vec::new()),
            cancelled: Mutex::new(Vec::new()),
        }
    }

    /// Runs the loop with `config` for `run_for` of (paused) time while the bot stays idle.
    async fn drive(
        api: &FakeApi,
        config: MatchmakingConfig,
        run_for: Duration,
    ) -> (Arc<Mutex<Matchmaker>>, usize) {
        let state = Arc::new(Mutex::new(Matchmaker::new(config, Instant::now(), 9)));
        let sent_count = std::sync::atomic::AtomicUsize::new(0);
        let identity = Identity {
            id: "me".into(),
            atomic_rating: Some(1500),
        };
        run(
            api,
            Arc::clone(&state),
            identity,
            || idle(1),
            || {
                sent_count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            },
            tokio::time::sleep(run_for),
        )
        .await;
        (state, sent_count.into_inner())
    }

    #[tokio::test(start_paused = true)]
    async fn run_challenges_once_when_idle_and_cancels_on_shutdown() {
        let api = fake(vec![bot("me", 1500, 3), bot("partner", 1600, 40)]);
        let config = MatchmakingConfig {
            idle_s: 5,
            min_interval_s: 3600,
            ..cfg()
        };
        let (state, sent_count) = drive(&api, config, secs(15)).await;
        let sent = api.sent.lock().unwrap();
        assert_eq!(sent.len(), 1, "exactly one challenge: {sent:?}");
        assert_eq!(sent[0].0, "PARTNER");
        assert_eq!(sent_count, 1);
        assert_eq!(
            *api.cancelled.lock().unwrap(),
            ["chal0001"],
            "shutdown cancels the pending challenge"
        );
        assert_eq!(state.lock().unwrap().pending_challenges(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn run_cancels_unanswered_challenge_and_moves_on() {
        let api = fake(vec![bot("a", 1500, 3), bot("b", 1500, 3)]);
        let config = MatchmakingConfig {
            idle_s: 5,
            min_interval_s: 60,
            challenge_timeout_s: 25,
            ..cfg()
        };
        // t=5 first challenge, t=30 expired + cancelled, t=65 second challenge, t=90 expired, t=125 third
        let (_state, sent_count) = drive(&api, config, secs(100)).await;
        let sent = api.sent.lock().unwrap();
        assert_eq!(sent.len(), 2, "{sent:?}");
        assert_ne!(
            sent[0].0, sent[1].0,
            "the second challenge goes to the other bot"
        );
        assert_eq!(sent_count, 2);
        assert_eq!(*api.cancelled.lock().unwrap(), ["chal0001", "chal0002"]);
    }

    #[tokio::test(start_paused = true)]
    async fn run_never_challenges_when_disabled_or_busy() {
        let api = fake(vec![bot("a", 1500, 3)]);
        drive(
            &api,
            MatchmakingConfig {
                idle_s: 1,
                ..MatchmakingConfig::default()
            },
            secs(600),
        )
        .await;
        assert!(api.sent.lock().unwrap().is_empty());
    }
}
