//! Matchmaking's memory: the [`Matchmaker`] state, what it records of each challenge and game
//! (our pending challenge, per-opponent declines and aborts, bot games of the last 24 h, rate
//! limit pauses), and lichess's daily bot-game limit shared with the supervisor
//! ([`DailyLimit`]). Every method takes an explicit `Instant`, so tests drive time.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::api::ChallengeError;
use crate::config::MatchmakingConfig;

/// lichess's 24-hour window for the bot-versus-bot game limit.
pub(super) const DAY: Duration = Duration::from_secs(24 * 3600);
/// Pause after a 429 without a `ratelimit.seconds` (lichess asks for at least a minute).
pub(super) const RATE_LIMIT_PAUSE: Duration = Duration::from_secs(60);
/// Longest pause for repeated generic 429s.
const MAX_RATE_LIMIT_PAUSE: Duration = Duration::from_secs(600);

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

/// A challenge we sent that has not been answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Pending {
    pub(super) id: String,
    pub(super) opponent: String,
    pub(super) sent_at: Instant,
}

/// What we remember about one opponent (by lowercase id).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct OpponentRecord {
    /// Declines or unanswered challenges since its last accepted one.
    pub(super) declines: u32,
    /// Aborted games against it.
    pub(super) aborts: u32,
    /// Challenges sent to it.
    pub(super) challenged: u32,
    /// When we last challenged it.
    pub(super) last_challenged: Option<Instant>,
    /// Skipped until then.
    pub(super) skip_until: Option<Instant>,
}

/// Matchmaking policy and state. Shared between [`super::run`] and the event-stream handler (which
/// reports game starts, finishes, declines and cancellations) as `Arc<Mutex<Matchmaker>>`;
/// every method is quick and never awaits, so a plain mutex is right.
#[derive(Debug)]
pub struct Matchmaker {
    pub(super) config: MatchmakingConfig,
    /// Lowercase block list.
    pub(super) blocked: Vec<String>,
    /// Since when nothing has been running (`None` while busy).
    pub(super) idle_since: Option<Instant>,
    /// When the last challenge went out.
    pub(super) last_challenge: Option<Instant>,
    /// No challenge before then (rate limits).
    pub(super) paused_until: Option<Instant>,
    /// Next pause for a generic 429 (doubles while they continue).
    pub(super) rate_limit_pause: Duration,
    /// Start times of bot-versus-bot games in the last 24 h (both directions).
    pub(super) bot_games: VecDeque<Instant>,
    /// Our unanswered challenge.
    pub(super) pending: Option<Pending>,
    /// A challenge is being chosen or created right now (HTTP in flight): it already counts
    /// as a used slot, so an incoming challenge accepted meanwhile cannot overshoot.
    pub(super) in_flight: bool,
    /// Opponent of each running game, to charge aborts to the right bot.
    pub(super) game_opponents: HashMap<String, String>,
    /// Incoming challenges from bots that we accepted, to count their games as bot games.
    pub(super) incoming_bot_challenges: HashSet<String>,
    /// Per-opponent history.
    pub(super) opponents: HashMap<String, OpponentRecord>,
    /// xorshift64 state for tie-breaks and time-control choice (seeded, so tests are repeatable).
    pub(super) rng: u64,
    /// lichess's daily bot-game limit, shared with the supervisor.
    pub(super) daily: DailyLimit,
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
            incoming_bot_challenges: HashSet::new(),
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
                let pause = if let Some(s) = seconds {
                    Duration::from_secs(*s).max(RATE_LIMIT_PAUSE)
                } else {
                    let pause = self.rate_limit_pause;
                    self.rate_limit_pause = (pause * 2).min(MAX_RATE_LIMIT_PAUSE);
                    pause
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lichess::matchmaking::test_support::{bot, cfg, secs};

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
}
