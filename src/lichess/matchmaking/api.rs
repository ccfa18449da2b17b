//! The lichess calls matchmaking makes, behind the [`MatchmakingApi`] trait so that the policy
//! and the loop are tested without a server: listing online bots (read leniently), creating a
//! challenge once (its refusals classified into what matchmaking must do) and cancelling one.

use std::fmt;
use std::future::Future;

use crate::lichess::client::{ApiError, CreateAnswer, LichessClient};
use crate::lichess::model::{ErrorBody, User};

/// How many online bots to ask lichess for (its maximum).
pub const ONLINE_BOTS_NB: u32 = 512;

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
    let bot_games = limit
        .as_ref()
        .is_some_and(super::super::model::account::RateLimit::is_bot_games);
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

/// The real calls. Creating a challenge is a single attempt whose refusal is classified here:
/// matchmaking must see lichess's `ratelimit` (the daily bot-game limit) instead of having the
/// request retried after a 60 s cooldown.
impl MatchmakingApi for LichessClient {
    async fn online_bots(&self, nb: u32) -> Result<Vec<OnlineBot>, ApiError> {
        let body = LichessClient::online_bots(self, nb).await?;
        Ok(parse_online_bots(&body))
    }

    async fn create_challenge(
        &self,
        username: &str,
        request: &ChallengeRequest,
    ) -> Result<String, ChallengeError> {
        let form = request.form();
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        match self.create_challenge_once(username, &pairs).await {
            Ok(CreateAnswer::Created(id)) => Ok(id),
            Ok(CreateAnswer::Refused { status, body }) => {
                Err(classify_challenge_error(status, &body))
            }
            Err(e @ ApiError::BadPathSegment(_)) => Err(ChallengeError::Refused(e.to_string())),
            Err(e) => Err(ChallengeError::Transient(e.to_string())),
        }
    }

    async fn cancel_challenge(&self, id: &str) -> Result<(), ApiError> {
        LichessClient::cancel_challenge(self, id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
